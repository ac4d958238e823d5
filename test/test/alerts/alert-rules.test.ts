import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { waitFor } from '@strata/common/testing';
import { SMTPServer } from 'smtp-server';
import { ACCOUNT_A, type Answer, emailOf, IncidentsCluster, userId } from '../incidents/incidents-cluster.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * Alert rules end to end on a real node (every role, real ingest, real DuckDB, a real SMTP
 * server): the leader schedules by an injected clock that the test steps one interval at a time,
 * the gateway's evaluator runs each tick through the query engine, and the outcome shows in
 * incidents, history, comments, runtime states, records, the evaluation log and the mail.
 */
describe('alert rules, end to end', function () {
  this.timeout(180_000);
  // Ticks are aligned to the interval; start well in the past so the outbox (which sends what is
  // due by the real time) never waits for a clock ahead of it.
  const MINUTE = 60_000;
  const T0 = Math.floor(Date.now() / MINUTE) * MINUTE - 30 * MINUTE;
  let nowMs = T0;
  const clock = () => new Date(nowMs);
  const at = (ms: number) => new Date(ms).toISOString();

  let c: IncidentsCluster;
  let smtp: SMTPServer;
  let receiver: WebhookReceiver;
  const mails: { to: string[]; raw: string }[] = [];
  const groupId = randomUUID();
  const ruleId = randomUUID();
  const witnessId = randomUUID();

  const rule = (overrides: Record<string, unknown> = {}) => ({
    name: 'Errors per host',
    query: 'app.errors | summarize n = count() by host',
    intervalSeconds: 60,
    condition: { kind: 'threshold', column: 'n', operator: '>=', threshold: 2 },
    dimensions: ['host'],
    severity: 'SEV2',
    ownerType: 'GROUP',
    ownerId: groupId,
    title: 'Errors on {{host}}: {{n}}',
    description: 'Host {{host}} logged {{n}} errors in the last minute.',
    resolveAfter: 2,
    ...overrides,
  });

  async function ingest(entries: { host: string; atMs: number }[]) {
    const res = await c.request('PUT', `/inflow/${ACCOUNT_A}`, {
      as: 'admin',
      body: entries.map((e) => ({ schema: 'app.errors', timestamp: at(e.atMs), data: { host: e.host, message: 'boom' } })),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  }

  async function evaluations(id: string): Promise<Answer['body']> {
    const res = await c.request('GET', `/accounts/${ACCOUNT_A}/alerts/${id}/evaluations`, { as: 'viewer' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  }

  /** Moves the clock to `ms` and waits (bounded) until `id` has an evaluation of that tick. */
  async function tick(ms: number, id = ruleId) {
    nowMs = ms;
    return waitFor(
      `the evaluation of ${at(ms)}`,
      async () => (await evaluations(id)).find((e: { tickAt: string }) => e.tickAt === at(ms)),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
  }

  async function records() {
    const res = await c.request('GET', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, { as: 'viewer' });
    assert.equal(res.status, 200);
    return new Map<string, { alertRecordId: string; state: string; incidentId: string | null }>(
      res.body.records.map((r: { dimensions: { host: string } }) => [r.dimensions.host, r]),
    );
  }

  const incident = async (id: string) =>
    (await c.request('GET', `/accounts/${ACCOUNT_A}/incidents/${id}`, { as: 'viewer' })).body;
  const history = async (id: string) =>
    (
      (await c.request('GET', `/accounts/${ACCOUNT_A}/incidents/${id}/history`, { as: 'viewer' })).body as { eventType: string }[]
    ).map((e) => e.eventType);
  const mailsAbout = (subject: RegExp) => mails.filter((m) => subject.test(m.raw.replace(/=\r?\n/g, '')));

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      disableReverseLookup: true,
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (d: Buffer) => chunks.push(d));
        stream.on('end', () => {
          mails.push({ to: session.envelope.rcptTo.map((r) => r.address), raw: Buffer.concat(chunks).toString() });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
    receiver = await WebhookReceiver.start();
    c = await IncidentsCluster.start({
      clock,
      config: {
        webhooks: { allowPlainHttpHosts: ['127.0.0.1'], allowInternalHosts: ['127.0.0.1'] },
        // /metrics is served on the ops port only.
        ops: { enable: true, host: '127.0.0.1', port: 0 },
      },
    });
    const port = ((smtp as unknown as { server: { address(): AddressInfo } }).server.address() as AddressInfo).port;
    const settings = await c.request('POST', '/settings', {
      as: 'globalAdmin',
      body: {
        settings: [
          { key: 'Service.Communication.Email.Endpoint', value: `127.0.0.1:${port}` },
          { key: 'Service.Communication.Email.FromAddress', value: 'alerts@example.test' },
          { key: 'Service.Communication.Email.Send.Interval', value: '00:00:01' },
        ],
      },
    });
    assert.ok(settings.status < 300, JSON.stringify(settings.body));
    assert.equal(
      (await c.request('PUT', `/accounts/${ACCOUNT_A}/groups/${groupId}`, { as: 'manager', body: { name: 'On call' } })).status,
      201,
    );
    for (const member of ['viewer', 'editor'] as const)
      await c.request('PUT', `/accounts/${ACCOUNT_A}/groups/${groupId}/members/${userId(member)}`, { as: 'manager' });
    const hook = await c.request('PUT', `/accounts/${ACCOUNT_A}/webhooks/${randomUUID()}`, {
      as: 'admin',
      body: { name: 'Alerts', url: receiver.url('/alerts'), events: ['ALERT_FIRED', 'ALERT_RESOLVED'] },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    // The schema must exist for the rule's query to bind on save.
    await ingest([{ host: 'seed', atMs: T0 - 10 * MINUTE }]);
  });

  after(async () => {
    await c?.stop();
    await receiver?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it('refuses rules it cannot run, and only lets account admins and incident managers write them', async () => {
    const bad = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ query: 'app.errors | where nosuch > 1' }),
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.message, /nosuch/);
    assert.ok(bad.body.errors[0].tokens.length > 0, 'the engine message comes with token positions');
    const badDimension = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ dimensions: ['service'] }),
    });
    assert.equal(badDimension.status, 400);
    assert.match(badDimension.body.message, /dimension column 'service'/);
    const badOwner = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ ownerId: randomUUID() }),
    });
    assert.equal(badOwner.status, 400);
    assert.match(badOwner.body.message, /Incident group .* does not exist\./);
    for (const user of ['viewer', 'editor', 'query'] as const) {
      const res = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, { as: user, body: rule() });
      assert.equal(res.status, 403, user);
    }
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/alerts`, { as: 'query' })).status, 403);
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/alerts`, { as: 'editorB' })).status, 403);
    const created = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, { as: 'manager', body: rule() });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.status.state, 'PENDING');
    assert.equal(created.body.lookbackSeconds, 60);
    const witness = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${witnessId}`, {
      as: 'admin',
      body: rule({ name: 'Witness', condition: { kind: 'threshold', column: 'n', operator: '>', threshold: 1e9 } }),
    });
    assert.equal(witness.status, 201);
    const list = await c.request('GET', `/accounts/${ACCOUNT_A}/alerts`, { as: 'viewer' });
    assert.deepEqual(list.body.map((r: { alertId: string }) => r.alertId).sort(), [ruleId, witnessId].sort());
  });

  it('dry runs say what would fire without changing anything', async () => {
    await ingest([
      { host: 'a', atMs: T0 + 10_000 },
      { host: 'a', atMs: T0 + 20_000 },
      { host: 'a', atMs: T0 + 30_000 },
      { host: 'b', atMs: T0 + 40_000 },
    ]);
    // The dry run evaluates at the real time, here with a one-hour window: hosts a, b and the seed.
    const dry = await c.request('POST', `/accounts/${ACCOUNT_A}/alerts/test`, {
      as: 'manager',
      body: rule({ lookbackSeconds: 3600 }),
    });
    assert.equal(dry.status, 200, JSON.stringify(dry.body));
    assert.deepEqual(
      dry.body.wouldFire.map((f: { dimensions: unknown }) => f.dimensions),
      [{ host: 'a' }],
    );
    assert.equal(dry.body.wouldFire[0].row.n, 3);
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/incidents`, { as: 'viewer' })).body.length, 0);
  });

  it('fires once per dimension: an incident, its link, ACTIVE, and the mail', async () => {
    const first = await tick(T0 + MINUTE);
    assert.equal(first.error, null);
    assert.equal(first.rows, 2, 'the window [T0, T0+60s) holds hosts a and b; the seed row is outside it');
    assert.equal(first.fired.length, 1);
    const a = (await records()).get('a')!;
    assert.equal(a.state, 'ACTIVE');
    assert.deepEqual(first.fired, [a.alertRecordId]);
    const inc = await incident(a.incidentId!);
    assert.equal(inc.title, 'Errors on a: 3');
    assert.equal(inc.severity, 'SEV2');
    assert.equal(inc.ownerId, groupId);
    assert.deepEqual(await history(a.incidentId!), ['INCIDENT_CREATED', 'ALERT_TRIGGERED_INCIDENT']);
    const states = (await c.request('GET', `/accounts/${ACCOUNT_A}/alert-runtime-states`, { as: 'viewer' })).body;
    assert.equal(states.find((s: { alertRecordId: string }) => s.alertRecordId === a.alertRecordId).state, 'ACTIVE');
    const links = (await c.request('GET', `/accounts/${ACCOUNT_A}/alert-incident-links`, { as: 'viewer' })).body;
    assert.deepEqual(
      links.map((l: { alertRecordId: string; incidentId: string; linkSource: string }) => [
        l.alertRecordId,
        l.incidentId,
        l.linkSource,
      ]),
      [[a.alertRecordId, a.incidentId, 'alert-triggered']],
    );
    const sent = await waitFor(
      'the incident-created mails',
      () => mailsAbout(/Incident created: Errors on a: 3/).length >= 2 && mails,
      {
        timeoutMs: 40_000,
      },
    );
    assert.deepEqual(
      mailsAbout(/Incident created: Errors on a: 3/)
        .map((m) => m.to[0])
        .sort(),
      [emailOf('editor'), emailOf('viewer')],
    );
    assert.ok(sent.length >= 2);
    const [hook] = await waitFor('the ALERT_FIRED webhook', () => receiver.on('/alerts').length >= 1 && receiver.on('/alerts'), {
      timeoutMs: 40_000,
    });
    const event = JSON.parse(hook!.body);
    assert.equal(event.type, 'ALERT_FIRED');
    assert.deepEqual(event.alert.dimensions, { host: 'a' });
    assert.equal(event.alert.alertRecordId, a.alertRecordId);
    assert.equal(event.incident.incidentId, a.incidentId);
  });

  it('keeps firing without duplicates, and a second dimension opens its own incident', async () => {
    await ingest([
      { host: 'a', atMs: T0 + MINUTE + 5_000 },
      { host: 'a', atMs: T0 + MINUTE + 6_000 },
      { host: 'b', atMs: T0 + MINUTE + 7_000 },
      { host: 'b', atMs: T0 + MINUTE + 8_000 },
    ]);
    const second = await tick(T0 + 2 * MINUTE);
    const recs = await records();
    assert.deepEqual(second.fired, [recs.get('b')!.alertRecordId], 'a keeps firing: not fired again');
    assert.notEqual(recs.get('a')!.incidentId, recs.get('b')!.incidentId);
    assert.deepEqual(await history(recs.get('a')!.incidentId!), ['INCIDENT_CREATED', 'ALERT_TRIGGERED_INCIDENT']);
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/incidents`, { as: 'viewer' })).body.length, 2);
    await waitFor('the mails about b', () => mailsAbout(/Incident created: Errors on b: 2/).length >= 2, { timeoutMs: 40_000 });
    assert.equal(mailsAbout(/Incident created: Errors on a/).length, 2, 'nobody is mailed again about a');
  });

  it('resolves after the configured clean evaluations: RESOLVED, the incident resolved with a system comment', async () => {
    const clean = await tick(T0 + 3 * MINUTE);
    assert.deepEqual(clean.resolved, [], 'one clean evaluation of two');
    const resolved = await tick(T0 + 4 * MINUTE);
    const recs = await records();
    assert.deepEqual(resolved.resolved.sort(), [recs.get('a')!.alertRecordId, recs.get('b')!.alertRecordId].sort());
    for (const host of ['a', 'b']) {
      const r = recs.get(host)!;
      assert.equal(r.state, 'RESOLVED');
      const inc = await incident(r.incidentId!);
      assert.equal(inc.state, 'RESOLVED');
      assert.match(inc.resolutionNote, /no firing rows in 2 consecutive evaluations/);
      assert.deepEqual((await history(r.incidentId!)).slice(-2), ['INCIDENT_RESOLVED', 'COMMENT_ADDED']);
      const comments = (await c.request('GET', `/accounts/${ACCOUNT_A}/incidents/${r.incidentId}/comments`, { as: 'viewer' }))
        .body;
      assert.equal(comments.length, 1);
      assert.equal(comments[0].authorUserId, '00000000-0000-0000-0000-000000000000');
    }
    const states = (await c.request('GET', `/accounts/${ACCOUNT_A}/alert-runtime-states`, { as: 'viewer' })).body;
    assert.deepEqual(
      states.map((s: { state: string }) => s.state),
      ['RESOLVED', 'RESOLVED'],
    );
    const hooks = await waitFor(
      'the ALERT_RESOLVED webhooks',
      () => {
        const events = receiver
          .on('/alerts')
          .map((h) => JSON.parse(h.body) as { type: string; alert: { dimensions: { host: string } } });
        const resolvedHooks = events.filter((e) => e.type === 'ALERT_RESOLVED');
        return resolvedHooks.length >= 2 && events;
      },
      { timeoutMs: 40_000 },
    );
    assert.deepEqual(hooks.map((e) => `${e.type}:${e.alert.dimensions.host}`).sort(), [
      'ALERT_FIRED:a',
      'ALERT_FIRED:b',
      'ALERT_RESOLVED:a',
      'ALERT_RESOLVED:b',
    ]);
  });

  it('firing again reopens the same incident with a reopenReason', async () => {
    const before = await records();
    await ingest([
      { host: 'a', atMs: T0 + 4 * MINUTE + 1_000 },
      { host: 'a', atMs: T0 + 4 * MINUTE + 2_000 },
    ]);
    const again = await tick(T0 + 5 * MINUTE);
    const a = (await records()).get('a')!;
    assert.deepEqual(again.fired, [a.alertRecordId]);
    assert.equal(a.state, 'ACTIVE');
    assert.equal(a.incidentId, before.get('a')!.incidentId, 'one incident per alert record');
    const inc = await incident(a.incidentId!);
    assert.equal(inc.state, 'OPEN');
    assert.match(inc.reopenReason, /fires again/);
    assert.deepEqual((await history(a.incidentId!)).slice(-2), ['INCIDENT_REOPENED', 'ALERT_LINKED_INCIDENT']);
    await waitFor('the reopen mails', () => mailsAbout(/reopened/i).length >= 2, { timeoutMs: 40_000 });
  });

  it('a muted rule opens nothing (MUTED), a disabled rule is not evaluated', async () => {
    const muted = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ mutedUntil: at(T0 + 60 * MINUTE) }),
    });
    assert.equal(muted.status, 200, JSON.stringify(muted.body));
    await ingest([
      { host: 'b', atMs: T0 + 5 * MINUTE + 1_000 },
      { host: 'b', atMs: T0 + 5 * MINUTE + 2_000 },
      { host: 'a', atMs: T0 + 5 * MINUTE + 3_000 },
      { host: 'a', atMs: T0 + 5 * MINUTE + 4_000 },
    ]);
    const incidentsBefore = (await c.request('GET', `/accounts/${ACCOUNT_A}/incidents`, { as: 'viewer' })).body.length;
    const m = await tick(T0 + 6 * MINUTE);
    assert.deepEqual(m.fired, []);
    const recs = await records();
    assert.equal(recs.get('b')!.state, 'MUTED');
    assert.equal(recs.get('a')!.state, 'ACTIVE', 'a record already active stays so while muted');
    assert.equal((await incident(recs.get('b')!.incidentId!)).state, 'RESOLVED');
    assert.equal((await c.request('GET', `/accounts/${ACCOUNT_A}/incidents`, { as: 'viewer' })).body.length, incidentsBefore);

    const disabled = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ enabled: false }),
    });
    assert.equal(disabled.status, 200);
    const logLength = (await evaluations(ruleId)).length;
    // The witness rule is claimed in the same pass over the rules: once its tick is in, the
    // disabled rule's would be too.
    await tick(T0 + 7 * MINUTE, witnessId);
    assert.equal((await evaluations(ruleId)).length, logLength);
  });

  it('a query that fails at run time puts the rule in ERROR and resolves nothing', async () => {
    // The pattern binds (a constant) but DuckDB refuses it when the query runs.
    const failing = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, {
      as: 'manager',
      body: rule({ query: 'app.errors | where message matches regex "(" | summarize n = count() by host' }),
    });
    assert.equal(failing.status, 200, JSON.stringify(failing.body));
    const before = (await records()).get('a')!;
    assert.equal(before.state, 'ACTIVE');
    const e = await tick(T0 + 8 * MINUTE);
    assert.match(e.error, /missing \)/);
    assert.deepEqual([e.fired, e.resolved], [[], []]);
    const got = await c.request('GET', `/accounts/${ACCOUNT_A}/alerts/${ruleId}`, { as: 'viewer' });
    assert.equal(got.body.status.state, 'ERROR');
    assert.match(got.body.status.lastError, /missing \)/);
    const a = got.body.records.find((r: { dimensions: { host: string } }) => r.dimensions.host === 'a');
    assert.deepEqual([a.state, a.cleanEvaluations], ['ACTIVE', 0], 'an evaluation that saw nothing is not a clean one');
    assert.equal((await incident(a.incidentId)).state, 'OPEN');
  });

  it('an outcome the incident rules refuse goes to ERROR with their message', async () => {
    // The owner group is deleted after the rule was saved: the incident cannot be opened.
    const otherGroup = randomUUID();
    await c.request('PUT', `/accounts/${ACCOUNT_A}/groups/${otherGroup}`, { as: 'manager', body: { name: 'Temporary' } });
    const errorRule = randomUUID();
    const put = await c.request('PUT', `/accounts/${ACCOUNT_A}/alerts/${errorRule}`, {
      as: 'manager',
      body: rule({ name: 'Owner gone', ownerId: otherGroup, condition: { kind: 'rows' } }),
    });
    assert.equal(put.status, 201);
    assert.equal((await c.request('DELETE', `/accounts/${ACCOUNT_A}/groups/${otherGroup}`, { as: 'manager' })).status, 204);
    await ingest([{ host: 'c', atMs: T0 + 8 * MINUTE + 1_000 }]);
    const e = await tick(T0 + 9 * MINUTE, errorRule);
    assert.match(e.error, /Incident group .* does not exist\./);
    const got = await c.request('GET', `/accounts/${ACCOUNT_A}/alerts/${errorRule}`, { as: 'viewer' });
    assert.equal(got.body.status.state, 'ERROR');
    assert.match(got.body.status.lastError, /does not exist/);
    assert.deepEqual(got.body.records, []);
  });

  it('after downtime evaluates once, with the current window, instead of replaying missed ticks', async () => {
    await tick(T0 + 15 * MINUTE, witnessId);
    const ticks = (await evaluations(witnessId)).map((e: { tickAt: string }) => e.tickAt);
    assert.equal(ticks[0], at(T0 + 15 * MINUTE));
    for (let m = 10; m < 15; m++) assert.ok(!ticks.includes(at(T0 + m * MINUTE)), `tick +${m} min was not replayed`);
    assert.equal(new Set(ticks).size, ticks.length, 'no tick twice');
  });

  it('counts evaluations and webhook deliveries in /metrics', async () => {
    assert.ok(c.node.opsUrl, 'the ops server runs');
    const text = await (await fetch(`${c.node.opsUrl}/metrics`)).text();
    assert.match(text, /strata_alert_evaluations_total\{outcome="ok"\} [1-9]/);
    assert.match(text, /strata_alert_evaluations_total\{outcome="error"\} [1-9]/);
    assert.match(text, /strata_webhook_deliveries_total\{outcome="delivered"\} [1-9]/);
  });
});
