import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, type ClusterProcess, call, STRATA_CLI, signIn, TestCluster } from './cluster-harness.js';

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;
const COUNT = 'repl.entries | count';

interface Observation {
  status: number;
  count?: number;
  partial?: boolean;
  message?: string;
}

/** A worker's replication gauges from its ops /metrics. */
async function gauges(w: ClusterProcess): Promise<{ hot: number; own: number; replicas: number; under: number; rounds: number }> {
  const text = await (await fetch(`http://127.0.0.1:${w.opsPort}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const value = (name: string) => {
    const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : Number.NaN;
  };
  return {
    hot: value('strata_worker_hot_rows'),
    own: value('strata_worker_own_segments'),
    replicas: value('strata_worker_replica_segments'),
    under: value('strata_worker_under_replicated_segments'),
    rounds: value('strata_worker_replication_rounds_total'),
  };
}

/**
 * Issue 13, "copies that survive a lost volume": replication factor 2 over three worker
 * processes. One worker's data directory is deleted for good; once it is written off, the
 * leader promotes the surviving copies and nothing is lost; the survivors then make new copies,
 * so losing a second worker loses nothing either.
 */
describe('cluster: replication factor 2 survives a lost volume', function () {
  this.timeout(300_000);
  let cluster: TestCluster;
  let gateway: ClusterProcess;
  let workers: ClusterProcess[];
  let token: string;
  const total = 1_500;

  const ids = new Map<ClusterProcess, string>();
  const idOf = (w: ClusterProcess) => ids.get(w) ?? readFileSync(path.join(w.dir, 'data', 'backend', 'worker-id'), 'utf8').trim();

  async function count(): Promise<Observation> {
    const r = await call(gateway.baseUrl, token, 'POST', KUSTO, { query: COUNT });
    if (r.status !== 200) return { status: r.status, message: r.body?.message };
    return { status: 200, count: Number(r.body.results[0].Count), partial: r.body.partial };
  }

  /**
   * Every segment sealed and held twice: each worker's own segments have their copy elsewhere.
   * The gauges describe a worker's last completed replication round, so they are trusted only
   * once a round that began after this call has completed (two more rounds): right after a
   * write-off the previous round's figures still count the lost worker's copies.
   */
  async function fullyReplicated(alive: ClusterProcess[]): Promise<void> {
    const start = await Promise.all(alive.map(gauges));
    await waitFor(
      'every row sealed and every segment on two workers',
      async () => {
        const g = await Promise.all(alive.map(gauges));
        if (g.some((x, i) => !(x.rounds >= start[i]!.rounds + 2))) return undefined;
        const own = g.reduce((n, x) => n + x.own, 0);
        const replicas = g.reduce((n, x) => n + x.replicas, 0);
        return g.every((x) => x.hot === 0 && x.under === 0) && own > 0 && own === replicas ? g : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 300 },
    );
  }

  function writeOff(workerId: string): string {
    const r = spawnSync(
      process.execPath,
      [STRATA_CLI, 'placements', 'write-off', '--worker', workerId, '--config', path.join(gateway.dir, 'strata.json')],
      { encoding: 'utf8', timeout: 60_000 },
    );
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
    return r.stdout;
  }

  /** Loses `w` for good (kill -9, data directory deleted), writes it off and checks every answer meanwhile. */
  async function loseForGood(w: ClusterProcess): Promise<Observation[]> {
    const id = idOf(w);
    ids.set(w, id);
    await w.kill('SIGKILL');
    rmSync(path.join(w.dir, 'data'), { recursive: true, force: true });
    await waitFor(
      'its registration expired',
      async () => {
        const registered = Object.values(await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).strings()).map(
          (v) => (JSON.parse(v) as { workerId: string }).workerId,
        );
        return !registered.includes(id);
      },
      { timeoutMs: 20_000 },
    );
    const down = await count();
    assert.equal(down.status, 503, 'a missing holder is never answered around before it is written off');
    assert.match(writeOff(id), /wrote off worker/);
    const seen: Observation[] = [];
    await waitFor(
      'the lost worker restored from replicas',
      async () => {
        const o = await count();
        seen.push(o);
        return o.status === 200 ? o : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    for (let i = 0; i < 10; i++) seen.push(await count());
    for (const o of seen) {
      if (o.status === 200) assert.deepEqual(o, { status: 200, count: total, partial: undefined }, 'nothing lost');
      else assert.equal(o.status, 503, JSON.stringify(o));
    }
    return seen;
  }

  before(async () => {
    cluster = await TestCluster.start();
    gateway = await cluster.add('gateway', { database: true, gateway: true });
    const config = { backend: { replicationFactor: 2, sealAgeSeconds: 1 } };
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
    for (let b = 0; b < total / 100; b++) {
      const entries = Array.from({ length: 100 }, (_, i) => ({
        schema: 'repl.entries',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, b * 100 + i)).toISOString(),
        data: { n: b * 100 + i },
      }));
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, entries);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    assert.deepEqual(await count(), { status: 200, count: total, partial: undefined });
  });

  after(async function () {
    if (this.currentTest?.state === 'failed' || this.test?.parent?.tests.some((t) => t.state === 'failed'))
      console.log(cluster.dump());
    await cluster?.stop();
  });

  it('sealed segments reach two workers; queries read each once', async () => {
    await fullyReplicated(workers);
    assert.deepEqual(await count(), { status: 200, count: total, partial: undefined });
  });

  it("a worker's data directory deleted for good loses nothing once written off, and its segments are copied again", async () => {
    const [w1, w2, w3] = workers as [ClusterProcess, ClusterProcess, ClusterProcess];
    const seen = await loseForGood(w1);
    console.log(`      after the loss of w1: ${seen.length} answers, ${seen.filter((o) => o.status === 503).length} × 503`);
    // Its placements are gone, and the survivors hold every segment twice again.
    const placements = Object.values(await cluster.raw.getAll().prefix(`${cluster.prefix}/placement/`).strings()).map(
      (v) => (JSON.parse(v) as { workerId: string }).workerId,
    );
    assert.ok(!placements.includes(idOf(w1)));
    await fullyReplicated([w2, w3]);
    // A second loss: only the copies made after the first can answer for it.
    await loseForGood(w2);
    assert.deepEqual(await count(), { status: 200, count: total, partial: undefined });
    void w3;
  });
});
