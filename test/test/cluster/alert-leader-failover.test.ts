import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, EtcdCoordinator } from '@strata/common';
import { type EtcdServer, freePort, startEtcd, waitFor } from '@strata/common/testing';
import { type NodeProcess, startNodeProcess } from '@strata/deploy/testing';

const ACCOUNT = '00000000-0000-0000-0000-000000000000';
const INTERVAL_S = 10;
const TTL_SECONDS = 3;
/** Rows the rule's query counts to stay busy (~1–5 s on the CI machines; the timeout is 10 s). */
const SLOW_ROWS = 1_500_000_000;

/**
 * Alert evaluation across a master failover, with real processes and real etcd: two database
 * instances sharing the data volume, one process with a worker and a gateway. The leader is
 * SIGKILLed right after the gateway claimed a tick, while it runs that tick's query;
 * the standby takes over, and the rule's evaluations go on without a second incident and without
 * a gap of more than one tick.
 */
describe('cluster: alert evaluation across a master failover', function () {
  this.timeout(180_000);
  let etcd: EtcdServer | undefined;
  let observer: EtcdCoordinator | undefined;
  const databases: { proc: NodeProcess; endpoint: string }[] = [];
  let gateway: NodeProcess | undefined;
  const shared = mkdtempSync(path.join(os.tmpdir(), 'strata-alert-failover-'));
  const prefix = `/strata-alert-failover-${process.pid}`;
  const admin = { userId: randomUUID(), username: 'admin', password: `pw-${randomBytes(8).toString('hex')}` };

  before(async () => {
    etcd = await startEtcd();
    const etcdConfig = { endpoints: [etcd.endpoint], prefix, leaseTtlSeconds: TTL_SECONDS };
    observer = new EtcdCoordinator(etcdConfig, createLogger('test', { level: 'silent' }));
    for (let i = 0; i < 2; i++) {
      const endpoint = `127.0.0.1:${await freePort()}`;
      const proc = await startNodeProcess({
        log: { level: 'info' },
        ops: { enable: false },
        database: { enable: true, endpoint, dataPath: path.join(shared, 'database') },
        etcd: etcdConfig,
        setupService: {
          enable: true,
          provision: true,
          accounts: [{ accountId: ACCOUNT, accountName: 'default' }],
          users: [
            {
              ...admin,
              firstname: 'A',
              lastname: 'Admin',
              email: 'admin@example.test',
              defaultGlobalPermissions: ['Service.Global.Admin'],
              defaultAccounts: [{ accountName: 'default', userPermissions: ['Service.Account.Admin'] }],
            },
          ],
        },
      });
      databases.push({ proc, endpoint });
    }
    gateway = await startNodeProcess({
      log: { level: 'debug' },
      ops: { enable: false },
      backend: { enable: true, endpoint: `127.0.0.1:${await freePort()}`, minimumFreeSpaceBytes: 0 },
      gateway: { enable: true, host: '127.0.0.1', port: 0 },
      auth: { jwt: { signingKey: randomBytes(32).toString('hex') } },
      etcd: etcdConfig,
    });
  });

  after(async () => {
    await gateway?.stop();
    for (const d of databases) await d.proc.stop('SIGKILL');
    await observer?.close();
    await etcd?.stop();
    rmSync(shared, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      for (const p of [...databases.map((d) => d.proc), gateway!]) console.log(`--- output ---\n${p.output().slice(-6000)}`);
    }
  });

  it('keeps one incident and misses at most one tick when the leader is killed mid-evaluation', async () => {
    const token = await gateway!.signIn(admin.username, admin.password);
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(gateway!.baseUrl + p, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    };
    const pushed = await call('PUT', `/inflow/${ACCOUNT}`, [
      { schema: 'app.errors', timestamp: new Date(Date.now() - 60_000).toISOString(), data: { host: 'a' } },
    ]);
    assert.equal(pushed.status, 200, JSON.stringify(pushed.body));
    const alertId = randomUUID();
    const put = await call('PUT', `/accounts/${ACCOUNT}/alerts/${alertId}`, {
      name: 'Errors',
      // The range keeps every evaluation busy for a second or more (it adds no row), so the
      // leader can be killed while one is in flight.
      query: `union (app.errors | summarize n = count() by host), (range x from 1 to ${SLOW_ROWS} step 1 | summarize n = count() | extend host = "none" | where n < 0)`,
      intervalSeconds: INTERVAL_S,
      lookbackSeconds: 3600,
      dimensions: ['host'],
      ownerType: 'USER',
      ownerId: admin.userId,
      title: 'Errors on {{host}}',
      resolveAfter: 1,
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    type Evaluation = {
      tickAt: string;
      claimedAt: string;
      evaluatedAt: string;
      fired: string[];
      resolved: string[];
      error: string | null;
      durationMs: number;
    };
    const log = async (): Promise<Evaluation[]> => (await call('GET', `/accounts/${ACCOUNT}/alerts/${alertId}/evaluations`)).body;
    const first = await waitFor('the first evaluation', async () => (await log()).at(-1), { timeoutMs: 30_000, intervalMs: 200 });
    assert.equal(first.fired.length, 1);

    // Kill the leader as soon as the gateway has claimed the next tick (it logs the claim at debug
    // level): the query is running, and its report will find the leader gone.
    const leader = (await observer!.getLeader('database'))!;
    const victim = databases.find((d) => d.endpoint === leader.value)!;
    const nextTick = Math.ceil(Date.now() / (INTERVAL_S * 1000)) * INTERVAL_S * 1000;
    const claimLine = `"tickAt":"${new Date(nextTick).toISOString()}"}],"msg":"claimed alert evaluations"`;
    await waitFor('the claim of the next tick', () => gateway!.output().includes(claimLine), {
      timeoutMs: 30_000,
      intervalMs: 10,
    });
    const killedAt = Date.now();
    victim.proc.child.kill('SIGKILL');
    const successor = await waitFor(
      'a new leader',
      async () => {
        const l = await observer!.getLeader('database');
        return l && l.value !== leader.value ? l : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    assert.ok(successor.term > leader.term);

    // Three more ticks after the one the leader died in.
    const until = new Date(nextTick + 3 * INTERVAL_S * 1000).toISOString();
    const evaluations = await waitFor(
      'evaluations after the failover',
      async () => {
        const all = await log();
        return all.some((e) => e.tickAt >= until) && all;
      },
      { timeoutMs: 90_000, intervalMs: 500 },
    );
    // The tick the leader died in was in flight: claimed from the old leader, applied by the new one.
    const killed = evaluations.find((e) => e.tickAt === new Date(nextTick).toISOString());
    assert.ok(killed, 'the tick of the kill was applied');
    assert.ok(
      Date.parse(killed.claimedAt) < killedAt && killedAt < Date.parse(killed.evaluatedAt),
      JSON.stringify({ killed, killedAt }),
    );
    const ticks = evaluations.map((e) => Date.parse(e.tickAt)).sort((x, y) => x - y);
    assert.equal(new Set(ticks).size, ticks.length, 'no tick applied twice');
    for (let i = 1; i < ticks.length; i++) {
      assert.ok(ticks[i]! - ticks[i - 1]! <= 2 * INTERVAL_S * 1000, `gap before ${new Date(ticks[i]!).toISOString()}`);
    }
    assert.deepEqual(
      evaluations.filter((e) => e.fired.length > 0).map((e) => e.tickAt),
      [first.tickAt],
      'fired once',
    );
    assert.ok(evaluations.every((e) => e.error === null && e.resolved.length === 0));
    const incidents = (await call('GET', `/accounts/${ACCOUNT}/incidents`)).body as { incidentId: string; title: string }[];
    assert.deepEqual(
      incidents.map((i) => i.title),
      ['Errors on a'],
    );
    const history = (await call('GET', `/accounts/${ACCOUNT}/incidents/${incidents[0]!.incidentId}/history`)).body as {
      eventType: string;
    }[];
    assert.deepEqual(
      history.map((h) => h.eventType),
      ['INCIDENT_CREATED', 'ALERT_TRIGGERED_INCIDENT'],
    );
  });
});
