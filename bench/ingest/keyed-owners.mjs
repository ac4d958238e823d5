// What decision 0029 (keyed batches across owners) costs a keyed inflow batch, end to end over
// HTTP on a cluster of real processes (etcd, a database+gateway process, workers; the cluster
// tests' harness), small batches (one entry) so per-batch costs are not hidden behind row work:
//
//   A  unkeyed batches (round-robin), the baseline;
//   B  keyed batches over a stable set of workers: the key-ranking history is read from the
//      gateway's cache (etcd at most once a second), no previous owner to ask;
//   C  keyed batches after a third worker joined, keys that rank to it: each asks its previous
//      owner (FenceKey, which also writes the fence row there) before being stored;
//   D  keyed batches after the join whose owner did not change;
//   E  the rejected alternative's own cost: one etcd transaction per batch (create-if-absent of a
//      cluster-wide key record), alone, at the same concurrency.
//
//   npm run build && node bench/ingest/keyed-owners.mjs [--batches 1500] [--concurrency 4]
import { parseArgs } from 'node:util';
import { firstForKey } from '@strata/gateway';
import { ACCOUNT, call, signIn, TestCluster } from '../../test/dist/test/cluster/cluster-harness.js';

const { values: args } = parseArgs({
  options: { batches: { type: 'string', default: '1500' }, concurrency: { type: 'string', default: '4' } },
});
const BATCHES = Number(args.batches);
const CONCURRENCY = Number(args.concurrency);
const INFLOW = `/inflow/${ACCOUNT}`;

/** Runs `one(i)` for i in [0, n) with CONCURRENCY in flight; per-call milliseconds and the wall time. */
async function timed(n, one) {
  const ms = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) {
        const i = next++;
        const t0 = performance.now();
        await one(i);
        ms.push(performance.now() - t0);
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  ms.sort((a, b) => a - b);
  const q = (p) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(2);
  return `${n} batches: ${(n / wall).toFixed(0)}/s, median ${q(0.5)} ms, p90 ${q(0.9)} ms, p99 ${q(0.99)} ms`;
}

const cluster = await TestCluster.start();
try {
  const gateway = await cluster.add('gateway', { database: true, gateway: true });
  const w1 = await cluster.add('w1', { backend: true });
  const w2 = await cluster.add('w2', { backend: true });
  const token = await signIn(gateway.baseUrl);
  const endpointOf = (w) => w.config.backend.endpoint;
  const put = async (n, key) => {
    const headers = key ? { 'idempotency-key': key } : {};
    const r = await call(
      gateway.baseUrl,
      token,
      'PUT',
      INFLOW,
      [{ schema: 'bench.keyed', timestamp: new Date().toISOString(), data: { n } }],
      headers,
    );
    if (r.status !== 200) throw new Error(`batch ${n} (${key}): ${r.status} ${JSON.stringify(r.body)}`);
  };
  // Warm-up: placements, tables, channels, the history record.
  for (let i = 0; i < 50; i++) await put(i, `warm-${i}`);
  console.log(`A unkeyed:                         ${await timed(BATCHES, (i) => put(i))}`);
  console.log(`B keyed, stable workers:           ${await timed(BATCHES, (i) => put(i, `stable-${i}`))}`);

  const w3 = await cluster.add('w3', { backend: true });
  const before = [w1, w2].map((w) => ({ endpoint: endpointOf(w) }));
  const after = [w1, w2, w3].map((w) => ({ endpoint: endpointOf(w) }));
  const moved = [];
  const kept = [];
  for (let i = 0; moved.length < BATCHES || kept.length < BATCHES; i++) {
    const key = `after-${i}`;
    const list = firstForKey(key, after).endpoint === firstForKey(key, before).endpoint ? kept : moved;
    if (list.length < BATCHES) list.push(key);
  }
  // Until the gateway routes by the three workers (w3 holds the account then).
  for (let i = 0; i < 200; i++) {
    await put(i, moved[BATCHES - 1 - i]);
    const holders = await cluster.raw.getAll().prefix(`${cluster.prefix}/placement/${ACCOUNT}/`).keys();
    if (holders.length === 3) break;
  }
  console.log(`C keyed, owner changed (FenceKey): ${await timed(BATCHES - 200, (i) => put(i, moved[i]))}`);
  console.log(`D keyed, owner unchanged:          ${await timed(BATCHES, (i) => put(i, kept[i]))}`);

  const txn = (i) =>
    cluster.raw
      .if(`${cluster.prefix}/bench-keys/${i}`, 'Create', '==', 0)
      .then(cluster.raw.put(`${cluster.prefix}/bench-keys/${i}`).value('w1'))
      .commit();
  console.log(`E one etcd txn per batch, alone:   ${await timed(BATCHES, txn)}`);
} finally {
  await cluster.stop();
}
