import assert from 'node:assert/strict';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, type ClusterProcess, call, signIn, TestCluster, TTL_SECONDS } from './cluster-harness.js';

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;

/**
 * Sends one keyed batch of one entry, retrying with the same key until it is acknowledged, for up
 * to 2 minutes: a key whose worker is down answers 503 until that worker is back (decision 0029),
 * and a restart on a loaded machine can take many seconds.
 */
async function sendKeyed(baseUrl: string, token: string, n: number): Promise<{ attempts: number }> {
  const key = `batch-${n}`;
  // The same body on every attempt: a retry must be recognised, not refused as a different request.
  const body = [{ schema: 'keyed.batches', timestamp: new Date().toISOString(), data: { n } }];
  const deadline = Date.now() + 120_000;
  for (let attempt = 1; Date.now() < deadline; attempt++) {
    try {
      const res = await call(baseUrl, token, 'PUT', INFLOW, body, { 'idempotency-key': key });
      if (res.status === 200) return { attempts: attempt };
      if (res.status !== 503) throw new Error(`batch ${n}: ${res.status} on attempt ${attempt}: ${JSON.stringify(res.body)}`);
    } catch (err) {
      if (!(err instanceof Error) || err.message.startsWith('batch')) throw err;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`batch ${n} was never acknowledged`);
}

/** Waits for a role of `proc` to report ready, then measures how long until `probe` succeeds. */
async function timeToServe(
  proc: ClusterProcess,
  role: string,
  readyDetail: RegExp,
  probe: () => Promise<boolean>,
): Promise<number> {
  await waitFor(
    `${proc.name} ${role} ready`,
    async () => {
      const r = (await proc.readiness())?.find((x) => x.role === role);
      return r?.ready === true && readyDetail.test(r.detail);
    },
    { timeoutMs: 60_000, intervalMs: 20 },
  );
  const readyAt = Date.now();
  await waitFor(`the gateway serving ${proc.name} again`, probe, { timeoutMs: 30_000, intervalMs: 20 });
  return Date.now() - readyAt;
}

describe('cluster: the gateway across worker and master failures', function () {
  this.timeout(300_000);
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = await TestCluster.start();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dump());
    await cluster.stop();
  });

  it('a keyed batch is stored exactly once while workers are killed and restarted under a stream of batches', async () => {
    const gateway = await cluster.add('gateway', { database: true, gateway: true });
    const w1 = await cluster.add('w1', { backend: true });
    const w2 = await cluster.add('w2', { backend: true });
    const token = await signIn(gateway.baseUrl);
    const total = 1_200;
    let next = 0;
    let retried = 0;
    const senders = Array.from({ length: 4 }, async () => {
      while (next < total) {
        const { attempts } = await sendKeyed(gateway.baseUrl, token, next++);
        if (attempts > 1) retried++;
      }
    });
    // Kill each worker in turn mid-stream (kill -9: commits in flight lose their answers), restart it.
    // The second stays down past its lease, so its keys rank to the other worker meanwhile: the
    // window decision 0029 closed (a restart slower than the lease on a loaded machine did the same).
    for (const [victim, downMs] of [
      [w1, 500],
      [w2, (TTL_SECONDS + 1) * 1000],
      [w1, 500],
    ] as const) {
      const target = next + 150;
      await waitFor('more batches sent', () => next >= target, { timeoutMs: 60_000 });
      await victim.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, downMs));
      await victim.start();
    }
    assert.ok(next < total, 'the workers were killed while batches were still being sent');
    await Promise.all(senders);
    const res = await waitFor(
      'a complete count',
      async () => {
        const r = await call(gateway.baseUrl, token, 'POST', KUSTO, {
          query:
            'keyed.batches | summarize copies = count() by n | summarize batches = count(), stored = sum(copies), most = max(copies)',
        });
        return r.status === 200 ? r : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    const row = res.body.results[0];
    console.log(`      ${total} keyed batches, ${retried} retried by the client; stored ${row.stored} rows`);
    assert.deepEqual(
      { batches: Number(row.batches), stored: Number(row.stored), most: Number(row.most) },
      { batches: total, stored: total, most: 1 },
    );
  });

  it('a restarted worker and a restarted master are served by the gateway within 2 s of saying they are ready', async () => {
    const db = await cluster.add('db', { database: true });
    const gateway = await cluster.add('gateway', { gateway: true });
    const worker = await cluster.add('worker', { backend: true });
    const token = await signIn(gateway.baseUrl);
    const inflowWorks = async () => {
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, [
        { schema: 'restart.probe', timestamp: new Date().toISOString(), data: { x: 1 } },
      ]);
      return r.status === 200;
    };
    assert.ok(await waitFor('inflow works', inflowWorks, { timeoutMs: 30_000 }));
    const measured: string[] = [];
    for (const downMs of [3_000, 10_000]) {
      // The worker: killed, kept down long enough for the gateway's channel to back off, restarted.
      await worker.kill('SIGKILL');
      for (let i = 0; i < 20; i++) await inflowWorks().catch(() => false);
      await new Promise((r) => setTimeout(r, downMs));
      await worker.start();
      const workerMs = await timeToServe(worker, 'backend', /^writable$/, inflowWorks);
      // The master: the same, checked with a call that needs the leader (the account list).
      await db.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, downMs));
      await db.start();
      const masterMs = await timeToServe(db, 'database', /^leader/, async () => {
        const r = await call(gateway.baseUrl, token, 'GET', `/users/00000000-0000-0000-0000-00000000cafe/accounts`);
        return r.status === 200;
      });
      measured.push(`worker ${workerMs} ms, master ${masterMs} ms`);
      assert.ok(workerMs <= 2_000, `the gateway served the restarted worker ${workerMs} ms after it was ready`);
      assert.ok(masterMs <= 2_000, `the gateway served the restarted master ${masterMs} ms after it was ready`);
    }
    console.log(`      served after ready: ${measured.join('; ')}`);
  });
});
