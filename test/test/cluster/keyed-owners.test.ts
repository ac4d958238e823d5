import assert from 'node:assert/strict';
import { waitFor } from '@strata/common/testing';
import { firstForKey } from '@strata/gateway';
import { ACCOUNT, type ClusterProcess, call, signIn, TestCluster, TTL_SECONDS } from './cluster-harness.js';

/**
 * Keyed inflow when a key's owner changes (docs/decisions/0029-keyed-batches-across-owners.md):
 * the two ways a key ranks to another worker — its owner gone longer than its lease, and a worker
 * joining — each with a batch the first owner stored. Before decision 0029 both stored the batch a
 * second time on the new owner.
 */

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;

/** The one-entry body of batch `n`; the same on every attempt, as a client retry sends it. */
function bodyOf(schema: string, n: number) {
  return [{ schema, timestamp: '2026-11-25T00:00:00Z', data: { n } }];
}

/** Copies stored per batch number of `schema`, as a map n → copies. */
async function copiesOf(baseUrl: string, token: string, schema: string): Promise<Map<number, number>> {
  const res = await waitFor(
    'a complete count',
    async () => {
      const r = await call(baseUrl, token, 'POST', KUSTO, { query: `${schema} | summarize copies = count() by n` });
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  return new Map(res.body.results.map((r: { n: unknown; copies: unknown }) => [Number(r.n), Number(r.copies)]));
}

/** The registered workers' endpoints, from etcd. */
async function registeredEndpoints(cluster: TestCluster): Promise<string[]> {
  const keys = await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys();
  return keys.map((k) => k.slice(`${cluster.prefix}/workers/`.length)).sort();
}

function endpointOf(proc: ClusterProcess): string {
  return (proc.config.backend as { endpoint: string }).endpoint;
}

describe('cluster: keyed batches across a change of their owner', function () {
  this.timeout(300_000);
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = await TestCluster.start();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dump());
    await cluster.stop();
  });

  it('a batch its worker committed but never answered is stored once when the retry comes after the lease ran out', async () => {
    const gateway = await cluster.add('gateway', { database: true, gateway: true });
    // w1 kills itself right after committing a batch keyed `doomed-…`, before answering it.
    const w1 = await cluster.add('w1', { backend: true }, { env: { STRATA_TEST_FAULT_KILL_AFTER_COMMIT: 'doomed-' } });
    const w2 = await cluster.add('w2', { backend: true });
    const token = await signIn(gateway.baseUrl);
    const members = [w1, w2].map((w) => ({ endpoint: endpointOf(w) }));
    // The first key of the series that ranks to w1 (the test's own ranking must agree with the gateway's).
    let n = 0;
    while (firstForKey(`doomed-${n}`, members)?.endpoint !== endpointOf(w1)) n++;
    const key = `doomed-${n}`;
    await waitFor('both workers registered', async () => (await registeredEndpoints(cluster)).length === 2, {
      timeoutMs: 30_000,
    });

    const first = await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.doomed', n), { 'idempotency-key': key });
    assert.equal(first.status, 503, JSON.stringify(first.body));
    await waitFor('w1 killed itself after the commit', () => !w1.alive, { timeoutMs: 10_000 });

    // Past the lease: w1 leaves the registry and the key ranks to w2, which must not store it.
    await waitFor('w1 out of the registry', async () => (await registeredEndpoints(cluster)).length === 1, {
      timeoutMs: (TTL_SECONDS + 10) * 1000,
    });
    for (let attempt = 0; attempt < 3; attempt++) {
      const retry = await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.doomed', n), { 'idempotency-key': key });
      assert.equal(retry.status, 503, `attempt ${attempt} while w1 is down: ${JSON.stringify(retry.body)}`);
      assert.equal(retry.headers.get('retry-after'), '5');
      assert.deepEqual(Object.keys(retry.body).sort(), ['errors', 'message', 'stackTrace']);
      assert.match(retry.body.message, /which may already hold this Idempotency-Key, cannot be reached; nothing was stored/);
    }
    // Other keys that rank to w2 and never ranked to w1 are stored meanwhile.
    let other = 0;
    while (firstForKey(`other-${other}`, members)?.endpoint !== endpointOf(w2)) other++;
    const unaffected = await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.doomed', 1_000 + other), {
      'idempotency-key': `other-${other}`,
    });
    assert.equal(unaffected.status, 200, JSON.stringify(unaffected.body));

    // w1 back (fault point off): the retry meets the stored key.
    w1.env = {};
    await w1.start();
    const stored = await waitFor(
      'the retry answered',
      async () => {
        const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.doomed', n), { 'idempotency-key': key });
        if (r.status !== 503) return r;
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    assert.equal(stored.status, 200, JSON.stringify(stored.body));
    const copies = await copiesOf(gateway.baseUrl, token, 'keyed.doomed');
    assert.equal(copies.get(n), 1, `copies of batch ${n}: ${copies.get(n)}`);
  });

  it('keyed batches sent again after a worker joined are stored once', async () => {
    const gateway = await cluster.add('gateway', { database: true, gateway: true });
    const w1 = await cluster.add('w1', { backend: true });
    const w2 = await cluster.add('w2', { backend: true });
    const token = await signIn(gateway.baseUrl);
    await waitFor('both workers registered', async () => (await registeredEndpoints(cluster)).length === 2, {
      timeoutMs: 30_000,
    });
    const total = 60;
    const send = async (i: number) => {
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.join', i), { 'idempotency-key': `join-${i}` });
      assert.equal(r.status, 200, `batch ${i}: ${r.status} ${JSON.stringify(r.body)}`);
    };
    for (let i = 0; i < total; i++) await send(i);

    const w3 = await cluster.add('w3', { backend: true });
    await waitFor('three workers registered', async () => (await registeredEndpoints(cluster)).length === 3, {
      timeoutMs: 30_000,
    });
    const all = [w1, w2, w3].map((w) => ({ endpoint: endpointOf(w) }));
    const moved = Array.from({ length: total }, (_, i) => i).filter(
      (i) => firstForKey(`join-${i}`, all)?.endpoint === endpointOf(w3),
    );
    assert.ok(moved.length > 0, 'some keys rank to the new worker');
    // The gateway learns of w3 through its watch: new keys that rank to w3 until w3 holds data.
    let probe = 0;
    await waitFor(
      'the gateway routing keys to w3',
      async () => {
        while (firstForKey(`probe-${probe}`, all)?.endpoint !== endpointOf(w3)) probe++;
        await call(gateway.baseUrl, token, 'PUT', INFLOW, bodyOf('keyed.probe', probe), {
          'idempotency-key': `probe-${probe++}`,
        });
        return (await cluster.raw.getAll().prefix(`${cluster.prefix}/placement/${ACCOUNT}/`).keys()).length === 3;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    for (let i = 0; i < total; i++) await send(i);

    const copies = await copiesOf(gateway.baseUrl, token, 'keyed.join');
    assert.equal(copies.size, total);
    const twice = [...copies].filter(([, c]) => c !== 1).map(([n]) => n);
    assert.deepEqual(twice, [], `batches stored more than once (${moved.length} keys moved to the new worker)`);
  });
});
