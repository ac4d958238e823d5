import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@strata/common/testing';
import { SMTPServer } from 'smtp-server';
import { ACCOUNT_A, emailOf, IncidentsCluster, userId } from './incidents-cluster.js';

/**
 * End to end: the master leader's mailer duty sends the notification of an incident saved over
 * HTTP to a real SMTP server, with the settings written through the settings API.
 */
describe('incident notification e-mail, end to end', function () {
  this.timeout(60_000);
  let c: IncidentsCluster;
  let server: SMTPServer;
  const received: { to: string[]; raw: string }[] = [];

  before(async () => {
    server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('end', () => {
          received.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    c = await IncidentsCluster.start();
  });
  after(async () => {
    await c?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('mails the owner group members and the assignee within Send.Interval, with the deep link', async () => {
    const port = ((server as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
    const settings = await c.request('POST', '/settings', {
      as: 'globalAdmin',
      body: {
        settings: [
          { key: 'Service.Communication.Email.Endpoint', value: `127.0.0.1:${port}` },
          { key: 'Service.Communication.Email.FromAddress', value: 'alerts@example.test' },
          { key: 'Service.Communication.Email.Send.Interval', value: '00:00:01' },
          { key: 'Service.Application.FrontendUrl', value: 'https://strata.example.test' },
        ],
      },
    });
    assert.ok(settings.status < 300, JSON.stringify(settings.body));
    const groupId = randomUUID();
    await c.request('PUT', `/accounts/${ACCOUNT_A}/groups/${groupId}`, { as: 'manager', body: { name: 'Responders' } });
    for (const member of ['viewer', 'editor'] as const)
      await c.request('PUT', `/accounts/${ACCOUNT_A}/groups/${groupId}/members/${userId(member)}`, { as: 'manager' });
    const incidentId = randomUUID();
    const put = await c.request('PUT', `/accounts/${ACCOUNT_A}/incidents/${incidentId}`, {
      as: 'editor',
      body: { title: 'Queue backlog', ownerType: 'GROUP', ownerId: groupId, assigneeUserId: userId('editor') },
    });
    assert.equal(put.status, 201);
    // The mailer waits the default 10 s interval before its first cycle reads the new 1 s interval.
    const mails = await waitFor('two notification mails', () => received.length >= 2 && received, { timeoutMs: 30_000 });
    assert.deepEqual(mails.map((m) => m.to[0]).sort(), [emailOf('editor'), emailOf('viewer')]);
    const raw = mails[0]!.raw.replace(/=\r?\n/g, '');
    assert.match(raw, /Subject: \[SEV3\] Incident created: Queue backlog/);
    assert.ok(raw.includes(`https://strata.example.test/account/${ACCOUNT_A}/incidents/${incidentId}`));
  });
});
