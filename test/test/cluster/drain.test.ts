import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, type ClusterProcess, call, STRATA_CLI, signIn, TestCluster } from './cluster-harness.js';

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;
const SCHEMAS = ['drain.a', 'drain.b', 'drain.c'];

/**
 * Issue 13, "workers that can leave": a cluster of real processes (etcd, database + gateway, three
 * workers). One worker is drained while queries run without pause; every answer is the full
 * count, and afterwards the worker is out of the cluster and stopping it changes nothing.
 */
describe('cluster: draining a worker', function () {
  this.timeout(300_000);
  let cluster: TestCluster;
  let gateway: ClusterProcess;
  let workers: ClusterProcess[];
  let token: string;
  const perSchema = 600;

  const idOf = (w: ClusterProcess) => readFileSync(path.join(w.dir, 'data', 'backend', 'worker-id'), 'utf8').trim();

  async function count(schema: string): Promise<{ status: number; count?: number; message?: string }> {
    const r = await call(gateway.baseUrl, token, 'POST', KUSTO, { query: `${schema} | count` });
    if (r.status !== 200) return { status: r.status, message: r.body?.message };
    return { status: 200, count: Number(r.body.results[0].Count) };
  }

  async function write(schema: string, n: number, from: number): Promise<void> {
    for (let b = 0; b < n / 100; b++) {
      const entries = Array.from({ length: 100 }, (_, i) => ({
        schema,
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, from + b * 100 + i)).toISOString(),
        data: { n: from + b * 100 + i, tag: schema },
      }));
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, entries);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
  }

  before(async () => {
    cluster = await TestCluster.start();
    gateway = await cluster.add('gateway', { database: true, gateway: true });
    // A short grace period: the test's queries take well under a second.
    // Hot rows sealed within seconds, so every worker holds segments (what a rebalance moves).
    const config = { backend: { drainGraceSeconds: 2, sealAgeSeconds: 2 } };
    workers = [
      await cluster.add('w1', { backend: true }, { config }),
      await cluster.add('w2', { backend: true }, { config }),
      await cluster.add('w3', { backend: true }, { config }),
    ];
    token = await signIn(gateway.baseUrl);
    await waitFor(
      'three workers registered',
      async () => (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length === 3,
    );
    // Round-robin spreads unkeyed batches over the workers: each holds rows of every schema.
    for (const schema of SCHEMAS) await write(schema, perSchema, 0);
    for (const schema of SCHEMAS) assert.deepEqual(await count(schema), { status: 200, count: perSchema });
  });

  after(async function () {
    if (this.currentTest?.state === 'failed' || this.test?.parent?.tests.some((t) => t.state === 'failed'))
      console.log(cluster.dump());
    await cluster?.stop();
  });

  it('a non-admin cannot drain; an unknown worker is 404', async () => {
    const id = idOf(workers[0]!);
    const anonymous = await fetch(`${gateway.baseUrl}/cluster/workers/${id}/drain`, { method: 'POST' });
    assert.equal(anonymous.status, 401);
    const unknown = await call(gateway.baseUrl, token, 'POST', '/cluster/workers/00000000-0000-4000-8000-000000000999/drain');
    assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
    const listed = await call(gateway.baseUrl, token, 'GET', '/cluster/workers');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((w: { workerId: string }) => w.workerId).sort(), workers.map(idOf).sort());
  });

  it('queries during the drain always count every row; afterwards the worker is gone and counts stay complete', async () => {
    const [w1] = workers as [ClusterProcess];
    const id = idOf(w1);
    const seen: { status: number; count?: number; message?: string }[] = [];
    let done = false;
    const loop = (async () => {
      for (let i = 0; i < 5_000 && !done; i++) seen.push(await count(SCHEMAS[i % SCHEMAS.length]!));
    })();
    let record: { phase: string; segmentsTotal: number; segmentsMoved: number; bytesTotal: number; bytesMoved: number };
    try {
      await new Promise((r) => setTimeout(r, 300));
      const asked = await call(gateway.baseUrl, token, 'POST', `/cluster/workers/${id}/drain`);
      assert.equal(asked.status, 202, JSON.stringify(asked.body));
      const again = await call(gateway.baseUrl, token, 'POST', `/cluster/workers/${id}/drain`);
      assert.equal(again.status, 202, 'asking again answers the drain under way');
      record = await waitFor(
        'drain done',
        async () => {
          const r = await call(gateway.baseUrl, token, 'GET', `/cluster/workers/${id}/drain`);
          return r.status === 200 && r.body.phase === 'done' ? r.body : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 200 },
      );
      // A few more queries after the drain finished.
      await new Promise((r) => setTimeout(r, 500));
    } finally {
      done = true;
      await loop;
    }
    const bad = seen.filter((o) => o.status !== 200 || o.count !== perSchema);
    console.log(`      ${seen.length} counts during the drain, ${bad.length} not complete`);
    assert.deepEqual(bad, [], 'every answer during the drain is the full count');
    assert.ok(seen.length > 10, `queries ran during the drain (${seen.length})`);
    assert.ok(record!.segmentsTotal >= SCHEMAS.length, JSON.stringify(record!));
    assert.equal(record!.segmentsMoved, record!.segmentsTotal);
    assert.equal(record!.bytesMoved, record!.bytesTotal);
    assert.ok(record!.bytesTotal > 0);

    // Out of the cluster: no registration, no placement, no handoff left.
    const registered = Object.values(await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).strings()).map(
      (v) => (JSON.parse(v) as { workerId: string }).workerId,
    );
    assert.ok(!registered.includes(id), 'deregistered');
    const placements = Object.values(await cluster.raw.getAll().prefix(`${cluster.prefix}/placement/`).strings()).map(
      (v) => (JSON.parse(v) as { workerId: string }).workerId,
    );
    assert.ok(!placements.includes(id), 'its placements are gone');
    assert.deepEqual(await cluster.raw.getAll().prefix(`${cluster.prefix}/handoff/`).keys(), [], 'no handoff left');

    // Stopping the drained worker changes nothing; new writes go to the others.
    await w1.kill('SIGKILL');
    for (const schema of SCHEMAS) assert.deepEqual(await count(schema), { status: 200, count: perSchema });
    await write(SCHEMAS[0]!, 200, perSchema);
    assert.deepEqual(await count(SCHEMAS[0]!), { status: 200, count: perSchema + 200 });
  });

  it('a rebalance on request gives a new worker a share of the existing segments; every count stays complete', async () => {
    const newcomer = await cluster.add(
      'w4',
      { backend: true },
      { config: { backend: { drainGraceSeconds: 2, sealAgeSeconds: 2 } } },
    );
    workers.push(newcomer);
    const total = (schema: string) => (schema === SCHEMAS[0] ? perSchema + 200 : perSchema);
    // Everything sealed first, so the existing data is in segments.
    await waitFor(
      'hot rows sealed',
      async () => {
        const hot = await Promise.all(
          workers.slice(1).map(async (w) => {
            const text = await (await fetch(`http://127.0.0.1:${w.opsPort}/metrics`)).text();
            return Number(/^strata_worker_hot_rows (\S+)$/m.exec(text)?.[1] ?? Number.NaN);
          }),
        );
        return hot.every((n) => n === 0);
      },
      { timeoutMs: 30_000, intervalMs: 300 },
    );
    const seen: { status: number; count?: number; schema: string }[] = [];
    let done = false;
    const loop = (async () => {
      for (let i = 0; i < 5_000 && !done; i++) {
        const schema = SCHEMAS[i % SCHEMAS.length]!;
        seen.push({ ...(await count(schema)), schema });
      }
    })();
    let progress: { workerId: string; phase: string; segmentsMoved: number }[] = [];
    try {
      const asked = await call(gateway.baseUrl, token, 'POST', '/cluster/rebalance');
      assert.equal(asked.status, 202, JSON.stringify(asked.body));
      const registered = workers.slice(1).map(idOf);
      progress = await waitFor(
        'rebalance done on every worker',
        async () => {
          const r = await call(gateway.baseUrl, token, 'GET', '/cluster/rebalance');
          if (r.status !== 200 || r.body.requestId !== asked.body.requestId) return undefined;
          const parts = r.body.workers as { workerId: string; phase: string; segmentsMoved: number }[];
          return registered.every((id) => parts.some((p) => p.workerId === id && p.phase === 'done')) ? parts : undefined;
        },
        { timeoutMs: 120_000, intervalMs: 300 },
      );
    } finally {
      done = true;
      await loop;
    }
    const bad = seen.filter((o) => o.status !== 200 || o.count !== total(o.schema));
    console.log(`      ${seen.length} counts during the rebalance, ${bad.length} not complete`);
    assert.deepEqual(bad, [], 'every answer during the rebalance is the full count');
    assert.ok(progress.reduce((n, p) => n + p.segmentsMoved, 0) > 0, JSON.stringify(progress));
    await waitFor('the newcomer counts its own segments', async () => {
      const text = await (await fetch(`http://127.0.0.1:${newcomer.opsPort}/metrics`)).text();
      return Number(/^strata_worker_own_segments (\S+)$/m.exec(text)?.[1] ?? 0) > 0;
    });
    for (const schema of SCHEMAS) assert.deepEqual(await count(schema), { status: 200, count: total(schema) });
  });

  it('`strata workers list` shows the drained worker as gone with its finished drain', async () => {
    const configFile = path.join(gateway.dir, 'strata.json');
    const r = spawnSync(process.execPath, [STRATA_CLI, 'workers', 'list', '--config', configFile], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    assert.match(r.stdout, new RegExp(`${idOf(workers[0]!)}\\t-\\tgone\\tdone\\t(\\d+)/\\1 segments`));
    const status = spawnSync(process.execPath, [STRATA_CLI, 'workers', 'status', idOf(workers[0]!), '--config', configFile], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(status.status, 0, `${status.stdout}${status.stderr}`);
    assert.match(status.stdout, /^done\t/);
  });
});
