import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT_A, IncidentsCluster, userId } from '../incidents/incidents-cluster.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * Webhooks end to end: endpoints managed over HTTP, the URL policy, deliveries of incident events
 * to a real local receiver (signed generic JSON and Slack format), retries with back-off and the
 * delivery log. The node allows plain HTTP and loopback for 127.0.0.1 only, as an operator would
 * for a receiver on the same host.
 */
describe('webhooks, end to end', function () {
  this.timeout(120_000);
  let c: IncidentsCluster;
  let receiver: WebhookReceiver;
  const genericId = randomUUID();
  const slackId = randomUUID();
  let secret = '';

  const hook = (id: string) => `/accounts/${ACCOUNT_A}/webhooks/${id}`;
  const deliveries = async (id: string) => (await c.request('GET', `${hook(id)}/deliveries`, { as: 'admin' })).body;

  before(async () => {
    receiver = await WebhookReceiver.start();
    c = await IncidentsCluster.start({
      config: { webhooks: { allowPlainHttpHosts: ['127.0.0.1'], allowInternalHosts: ['127.0.0.1'] } },
    });
  });
  after(async () => {
    await c?.stop();
    await receiver?.close();
  });

  it('refuses URLs the policy forbids, and lets only account admins manage endpoints', async () => {
    const refused = [
      ['http://hooks.example.test/x', /must use https/],
      ['https://169.254.169.254/latest/meta-data', /link-local, metadata/],
      ['https://[::1]:8443/x', /loopback/],
      ['https://[fd00:ec2::254]/x', /metadata/],
      ['https://user:pw@hooks.example.test/x', /user name or password/],
      ['not a url', /not a valid absolute URL/],
    ] as const;
    for (const [url, message] of refused) {
      const res = await c.request('PUT', hook(randomUUID()), { as: 'admin', body: { name: 'x', url } });
      assert.equal(res.status, 400, url);
      assert.match(res.body.message, message, url);
    }
    for (const user of ['manager', 'editor', 'viewer', 'editorB'] as const) {
      const res = await c.request('PUT', hook(genericId), { as: user, body: { name: 'x', url: receiver.url('/generic') } });
      assert.equal(res.status, 403, user);
    }
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/webhooks`, { as: 'manager' })).status, 403);
  });

  it('creates endpoints, showing the signing secret once', async () => {
    const created = await c.request('PUT', hook(genericId), {
      as: 'admin',
      body: { name: 'Generic', url: receiver.url('/generic'), events: ['INCIDENT_CREATED', 'COMMENT_ADDED'] },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    secret = created.body.secret;
    assert.match(secret, /^[0-9a-f]{64}$/);
    const slack = await c.request('PUT', hook(slackId), {
      as: 'admin',
      body: { name: 'Slack', url: receiver.url('/slack'), format: 'slack', events: ['INCIDENT_CREATED'] },
    });
    assert.equal(slack.status, 201);
    const again = await c.request('PUT', hook(genericId), {
      as: 'admin',
      body: { name: 'Generic', url: receiver.url('/generic'), events: ['INCIDENT_CREATED', 'COMMENT_ADDED'] },
    });
    assert.equal(again.status, 200);
    assert.equal(again.body.secret, undefined);
    const listed = await c.request('GET', `/accounts/${ACCOUNT_A}/webhooks`, { as: 'admin' });
    assert.equal(listed.body.length, 2);
    assert.ok(!JSON.stringify(listed.body).includes(secret), 'the secret is never listed');
  });

  it('delivers incident events: signed JSON, and the Slack format', async () => {
    const incidentId = randomUUID();
    const put = await c.request('PUT', `/accounts/${ACCOUNT_A}/incidents/${incidentId}`, {
      as: 'editor',
      body: { title: 'Disk <full>', ownerType: 'USER', ownerId: userId('editor'), severity: 'SEV2' },
    });
    assert.equal(put.status, 201);
    const [generic] = await waitFor(
      'the generic delivery',
      () => receiver.on('/generic').length >= 1 && receiver.on('/generic'),
      {
        timeoutMs: 20_000,
      },
    );
    assert.equal(generic!.headers['x-strata-event'], 'INCIDENT_CREATED');
    const ts = generic!.headers['x-strata-timestamp'] as string;
    const expected = `v1=${createHmac('sha256', secret).update(`${ts}.${generic!.body}`).digest('hex')}`;
    assert.equal(generic!.headers['x-strata-signature'], expected);
    const body = JSON.parse(generic!.body);
    assert.equal(body.type, 'INCIDENT_CREATED');
    assert.equal(body.incident.incidentId, incidentId);
    assert.equal(body.deliveryId, generic!.headers['x-strata-delivery']);
    const [slack] = await waitFor('the Slack delivery', () => receiver.on('/slack').length >= 1 && receiver.on('/slack'), {
      timeoutMs: 20_000,
    });
    assert.deepEqual(JSON.parse(slack!.body), {
      text: `*Incident created*: [SEV2] Disk &lt;full&gt; (OPEN)\nIncident ${incidentId}`,
    });
    const log = await waitFor('the delivery log', async () => {
      const d = await deliveries(genericId);
      return d[0]?.status === 'delivered' && d;
    });
    assert.equal(log[0].lastStatusCode, 200);
    assert.equal(log[0].attempts, 1);
    // Only subscribed events: an update reaches neither endpoint.
    await c.request('PUT', `/accounts/${ACCOUNT_A}/incidents/${incidentId}`, {
      as: 'editor',
      body: { title: 'Disk full', ownerType: 'USER', ownerId: userId('editor') },
    });
    assert.equal((await deliveries(genericId)).length, 1);
  });

  it('retries a failing receiver with back-off and logs each attempt; the save never waits for it', async () => {
    receiver.failNext['/generic'] = 1;
    const before = receiver.on('/generic').length;
    const incidentId = randomUUID();
    await c.request('PUT', `/accounts/${ACCOUNT_A}/incidents/${incidentId}`, {
      as: 'editor',
      body: { title: 'Queue backlog', ownerType: 'USER', ownerId: userId('editor') },
    });
    const comment = await c.request('POST', `/accounts/${ACCOUNT_A}/incidents/${incidentId}/comments`, {
      as: 'editor',
      body: { body: 'Looking' },
    });
    assert.ok(comment.status < 300);
    const retried = await waitFor(
      'a failed attempt in the log',
      async () => (await deliveries(genericId)).find((d: { lastStatusCode: number | null }) => d.lastStatusCode === 503),
      { timeoutMs: 20_000 },
    );
    assert.equal(retried.status, 'pending');
    assert.equal(retried.lastError, 'HTTP 503');
    assert.ok(retried.nextAttemptAt > retried.createdAt);
    const done = await waitFor(
      'the retried delivery',
      async () => {
        const d = (await deliveries(genericId)).find((x: { deliveryId: string }) => x.deliveryId === retried.deliveryId);
        return d?.status === 'delivered' && d;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    assert.equal(done.attempts, 2);
    assert.equal(receiver.on('/generic').length, before + 3, 'created (failed, then retried) and the comment');
  });

  it('refuses at delivery a host that resolves to a loopback address it was not allowed', async () => {
    const id = randomUUID();
    const created = await c.request('PUT', hook(id), {
      as: 'admin',
      body: { name: 'Sneaky', url: 'https://localhost:1/hook', events: ['INCIDENT_CREATED'] },
    });
    assert.equal(created.status, 201, 'a host name is checked when it is resolved, at delivery');
    await c.request('PUT', `/accounts/${ACCOUNT_A}/incidents/${randomUUID()}`, {
      as: 'editor',
      body: { title: 'Probe', ownerType: 'USER', ownerId: userId('editor') },
    });
    const failed = await waitFor('the refused delivery', async () => {
      const d = await deliveries(id);
      return d[0]?.status === 'failed' && d[0];
    });
    assert.match(failed.lastError, /refused: localhost resolves to .*loopback/);
    assert.equal((await c.request('DELETE', hook(id), { as: 'admin' })).status, 204);
    assert.equal((await c.request('GET', hook(id), { as: 'admin' })).status, 404);
  });
});
