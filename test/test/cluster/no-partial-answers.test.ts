import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, type ClusterProcess, call, STRATA_CLI, signIn, TestCluster } from './cluster-harness.js';

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;
const SCHEMAS = `/search/${ACCOUNT}/schemas`;
const COUNT = 'spread.entries | count';

interface Observation {
  status: number;
  count?: number;
  partial?: boolean;
  missing?: string[];
  message?: string;
}

/**
 * Issue 13, "no silent partial answers": a cluster of real processes (etcd, database + gateway,
 * workers) with data spread over two workers. Whatever happens to a worker, a count answered 200
 * is the full count unless the answer says `partial: true` and names who is missing.
 */
describe('cluster: no silent partial answers', function () {
  this.timeout(300_000);
  let cluster: TestCluster;
  let gateway: ClusterProcess;
  let workers: ClusterProcess[];
  let token: string;
  const total = 2_000;

  async function count(allowPartial = false): Promise<Observation> {
    const r = await call(gateway.baseUrl, token, 'POST', KUSTO, {
      query: COUNT,
      ...(allowPartial ? { allowPartial: true } : {}),
    });
    if (r.status !== 200) return { status: r.status, message: r.body?.message };
    return {
      status: 200,
      count: Number(r.body.results[0].Count),
      partial: r.body.partial,
      missing: r.body.missingWorkers?.map((m: { endpoint: string }) => m.endpoint),
    };
  }

  /**
   * Queries in a loop while `during` runs (bounded), and checks every answer: the full count,
   * or 503 naming a worker, or (allowPartial) a smaller count marked partial with the workers named.
   */
  async function queriesDuring(during: () => Promise<void>, allowPartial: boolean): Promise<Observation[]> {
    const seen: Observation[] = [];
    let done = false;
    const loop = (async () => {
      for (let i = 0; i < 2_000 && !done; i++) seen.push(await count(allowPartial));
    })();
    try {
      await during();
    } finally {
      done = true;
      await loop;
    }
    for (const o of seen) {
      if (o.status === 200 && !o.partial) assert.equal(o.count, total, `a complete answer counted ${o.count}`);
      else if (o.status === 200) {
        assert.ok(allowPartial, 'partial: true only when the request allowed it');
        assert.ok(o.missing && o.missing.length > 0, 'a partial answer names the missing workers');
        assert.ok(o.count! < total || o.missing.length > 0);
      } else {
        assert.equal(o.status, 503, JSON.stringify(o));
        assert.match(o.message ?? '', /Workers holding data of this account cannot be reached: 127\.0\.0\.1:\d+/);
      }
    }
    return seen;
  }

  const summary = (seen: Observation[]) => {
    const by = new Map<string, number>();
    for (const o of seen) {
      const k = o.status === 200 ? (o.partial ? `200 partial ${o.count}` : `200 ${o.count}`) : String(o.status);
      by.set(k, (by.get(k) ?? 0) + 1);
    }
    return [...by].map(([k, n]) => `${k} ×${n}`).join(', ');
  };

  before(async () => {
    cluster = await TestCluster.start();
    gateway = await cluster.add('gateway', { database: true, gateway: true });
    workers = [await cluster.add('w1', { backend: true }), await cluster.add('w2', { backend: true })];
    token = await signIn(gateway.baseUrl);
    await waitFor(
      'both workers registered',
      async () => (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length === 2,
    );
    // Round-robin spreads unkeyed batches over both workers.
    for (let b = 0; b < total / 100; b++) {
      const entries = Array.from({ length: 100 }, (_, i) => ({
        schema: 'spread.entries',
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, b * 100 + i)).toISOString(),
        data: { n: b * 100 + i },
      }));
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, entries);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    assert.deepEqual(await count(), { status: 200, count: total, partial: undefined, missing: undefined });
  });

  after(async function () {
    if (this.currentTest?.state === 'failed' || this.test?.parent?.tests.some((t) => t.state === 'failed'))
      console.log(cluster.dump());
    await cluster?.stop();
  });

  it('both workers hold placements, so each is a holder the answers depend on', async () => {
    const placements = await cluster.raw.getAll().prefix(`${cluster.prefix}/placement/${ACCOUNT}/`).strings();
    const endpoints = Object.values(placements).map((v) => (JSON.parse(v) as { endpoint: string }).endpoint);
    assert.equal(endpoints.length, 2, JSON.stringify(placements));
  });

  it('a worker killed (kill -9) during a stream of queries: 503 naming it or the full count, never a smaller 200; back after restart', async () => {
    const [w1] = workers as [ClusterProcess, ClusterProcess];
    const seen = await queriesDuring(async () => {
      await new Promise((r) => setTimeout(r, 500));
      await w1.kill('SIGKILL');
      // Past the lease TTL: the registration expired, the placement remains.
      await new Promise((r) => setTimeout(r, 5_000));
    }, false);
    console.log(`      while killed: ${summary(seen)}`);
    assert.ok(
      seen.some((o) => o.status === 503),
      'the kill was seen',
    );
    const down = await count();
    assert.equal(down.status, 503);
    const partial = await count(true);
    assert.equal(partial.status, 200);
    assert.equal(partial.partial, true);
    assert.deepEqual(partial.missing, [w1.config.backend && (w1.config.backend as { endpoint: string }).endpoint]);
    assert.ok(partial.count! < total && partial.count! > 0, `partial count ${partial.count}`);
    await w1.start();
    await waitFor('the full count again', async () => (await count()).count === total, { timeoutMs: 30_000, intervalMs: 100 });
  });

  it('a worker stopped gracefully (SIGTERM, deregistered at once): never a smaller 200 without partial: true', async () => {
    const w2 = workers[1]!;
    const seen = await queriesDuring(async () => {
      await new Promise((r) => setTimeout(r, 500));
      await w2.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 2_000));
    }, false);
    console.log(`      while stopped: ${summary(seen)}`);
    const partialSeen = await queriesDuring(() => new Promise((r) => setTimeout(r, 1_000)), true);
    assert.ok(
      partialSeen.every((o) => o.status === 200 && o.partial === true),
      summary(partialSeen),
    );
    // Parsing (the editor's completions) and the schema listing follow the same rule.
    const parse = await call(gateway.baseUrl, token, 'POST', `${KUSTO}/parse`, { query: COUNT });
    assert.equal(parse.status, 503);
    const parsePartial = await call(gateway.baseUrl, token, 'POST', `${KUSTO}/parse`, { query: COUNT, allowPartial: true });
    assert.equal(parsePartial.status, 200);
    assert.equal(parsePartial.body.partial, true);
    assert.equal(parsePartial.body.missingWorkers.length, 1);

    const schemas = await call(gateway.baseUrl, token, 'GET', SCHEMAS);
    assert.equal(schemas.status, 503);
    const res = await fetch(`${gateway.baseUrl}${SCHEMAS}?allowPartial=true`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('strata-partial'), 'true');
    assert.match(res.headers.get('strata-missing-workers') ?? '', /127\.0\.0\.1:\d+/);
    await w2.start();
    await waitFor('the full count again', async () => (await count()).count === total, { timeoutMs: 30_000, intervalMs: 100 });
  });

  it('with no worker reachable, a count over an account with data is 503, never 0', async () => {
    for (const w of workers) await w.kill('SIGTERM');
    const down = await count();
    assert.equal(down.status, 503, JSON.stringify(down));
    const partial = await count(true);
    assert.equal(partial.status, 200);
    assert.equal(partial.partial, true);
    assert.equal(partial.missing?.length, 2);
    for (const w of workers) await w.start();
    await waitFor('the full count again', async () => (await count()).count === total, { timeoutMs: 30_000, intervalMs: 100 });
  });

  it('a worker that holds nothing of the account may go away without failing its queries', async () => {
    const w3 = await cluster.add('w3', { backend: true });
    await waitFor(
      'w3 registered',
      async () => (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length === 3,
    );
    assert.equal((await count()).count, total);
    await w3.kill('SIGKILL');
    // Registered until its lease expires, unreachable: not a holder, so answers stay complete.
    const seen = await queriesDuring(() => new Promise((r) => setTimeout(r, 1_500)), false);
    assert.ok(
      seen.every((o) => o.status === 200 && o.count === total),
      summary(seen),
    );
  });

  it('a worker lost for good is written off with `strata placements write-off`; queries then answer without it', async () => {
    const [w1, w2] = workers as [ClusterProcess, ClusterProcess];
    const configFile = path.join(gateway.dir, 'strata.json');
    const strata = (...args: string[]) => {
      const r = spawnSync(process.execPath, [STRATA_CLI, 'placements', ...args, '--config', configFile], {
        encoding: 'utf8',
        timeout: 60_000,
      });
      return { code: r.status, out: `${r.stdout}${r.stderr}` };
    };
    const idOf = (w: ClusterProcess) => readFileSync(path.join(w.dir, 'data', 'backend', 'worker-id'), 'utf8').trim();
    const listed = strata('list', '--account', ACCOUNT);
    assert.equal(listed.code, 0, listed.out);
    assert.match(listed.out, new RegExp(`${idOf(w1)}\\t127\\.0\\.0\\.1:\\d+\\tyes`));
    // A registered worker's data is not lost: refused.
    const refused = strata('write-off', '--worker', idOf(w1));
    assert.equal(refused.code, 1, refused.out);
    await w2.kill('SIGKILL');
    await waitFor(
      'w2 deregistered',
      async () => (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length === 1,
      {
        timeoutMs: 20_000,
      },
    );
    assert.equal((await count()).status, 503);
    const written = strata('write-off', '--worker', idOf(w2));
    assert.equal(written.code, 0, written.out);
    assert.match(written.out, /wrote off worker .* \(1 placement\(s\)\)/);
    // The leader removes the placements once it has restored what replicas hold (none here).
    const after = await waitFor(
      'the written-off worker no longer blocks queries',
      async () => {
        const o = await count();
        return o.status === 200 ? o : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 200 },
    );
    assert.equal(after.partial, undefined);
    assert.ok(after.count! > 0 && after.count! < total, `count ${after.count}`);
  });
});
