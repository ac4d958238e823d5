// The fixed cost of a query through the service: one small query (a count over few rows) sent
// --runs times over HTTP to an in-process one-worker cluster, median and quartiles. Meant to run
// under a profiler (`node --cpu-prof bench/query/fixed-cost.mjs`), where the per-query steps of the
// gateway and the worker show apart from the statement. --etcd coordinates through a real etcd.
//
//   npx tsc -b tsconfig.build.json && node bench/query/fixed-cost.mjs [--rows 100000] [--runs 2000] [--workers 1] [--etcd]
//
// --serve only starts the cluster, prints its address and serves until stdin ends (fixed-ab.mjs).
// --data DIR serves the workers' data kept in DIR (worker-0, ...), loading and compacting it
// there first when DIR holds none (the settled layout, settle.mjs): a 10 M-row layout is loaded
// once, and each side of an A/B serves its own copy of it.
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { DATA, loadRows, numberArg, QUERIES, startCluster } from './bench-cluster.mjs';
import { settleCompaction } from './settle.mjs';

const ROWS = numberArg('rows', 100_000);
const RUNS = numberArg('runs', 2000);
const QUERY = numberArg('query', QUERIES.length - 1); // count, 7 days
// --workers 2: the rows split over two in-process workers (the query fans out and merges).
const WORKERS = numberArg('workers', 1);

const dataAt = process.argv.indexOf('--data');
const KEPT = dataAt > 0 ? path.resolve(process.argv[dataAt + 1]) : undefined;
const workerDataPaths = KEPT && Array.from({ length: WORKERS }, (_, w) => path.join(KEPT, `worker-${w}`));

let cluster;
try {
  const loaded = workerDataPaths !== undefined && existsSync(workerDataPaths[0]);
  cluster = await startCluster('fixed', WORKERS, { etcd: process.argv.includes('--etcd'), workerDataPaths });
  if (!loaded) {
    for (const [i, w] of cluster.workers.entries()) await loadRows(w.storage, ROWS, i, WORKERS);
    if (KEPT) await settleCompaction(cluster, { timeoutMs: 1_800_000 });
  }
  const { kql } = QUERIES[QUERY];
  if (process.argv.includes('--serve')) {
    // For fixed-ab.mjs: say where the gateway listens, then serve until stdin ends.
    console.log(JSON.stringify({ url: cluster.url, kql }));
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.once('end', resolve));
  } else {
    for (let i = 0; i < 50; i++) await cluster.query(kql);
    const samples = [];
    for (let i = 0; i < RUNS; i++) {
      const s = performance.now();
      await cluster.query(kql);
      samples.push(performance.now() - s);
    }
    samples.sort((a, b) => a - b);
    const q = (f) => samples[Math.floor(f * (samples.length - 1))].toFixed(2);
    console.log(`${kql}: ${RUNS} runs, median ${q(0.5)} ms (quartiles ${q(0.25)}–${q(0.75)})`);
  }
} finally {
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
