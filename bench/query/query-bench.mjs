// Query benchmark: realistic log rows in worker storage (sealed Parquet segments), then typical
// queries both through the HTTP endpoint and as hand-written DuckDB SQL over the same rows, with
// the ratio. Runs a one-worker cluster and a two-worker cluster (rows split; the two workers share
// this machine's cores, each with backend.cores = cores / 2) in this process, and the same two
// workers' data served the deployed way: etcd, master, each worker and the gateway in their own
// processes (`strata start`). All of it on this machine's cores, timed interleaved.
//
//   npx tsc -b tsconfig.build.json && node bench/query/query-bench.mjs [--rows 10000000] [--runs 5]
//
// Data goes to .bench-data/ (git-ignored) and is removed at the end.
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  agent,
  DATA,
  directAnd,
  directEach,
  loadRows,
  numberArg,
  QUERIES,
  SCHEMA,
  startCluster,
  startProcessCluster,
} from './bench-cluster.mjs';

const ROWS = numberArg('rows', 10_000_000);
const RUNS = numberArg('runs', 5);

const fmt = (ms) => `${ms.toFixed(1).padStart(7)} ms`;
console.log(
  `rows: ${ROWS.toLocaleString('en')}, runs per query: ${RUNS} (median after a warm-up), cores: ${(await import('node:os')).availableParallelism()}`,
);
let one;
let two;
let procs;
try {
  let t = performance.now();
  one = await startCluster('one', 1);
  const n1 = await loadRows(one.workers[0].storage, ROWS, 0, 1);
  console.log(`loaded ${n1.toLocaleString('en')} rows into one worker in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  t = performance.now();
  two = await startCluster('two', 2);
  const [a, b] = await Promise.all([loadRows(two.workers[0].storage, ROWS, 0, 2), loadRows(two.workers[1].storage, ROWS, 1, 2)]);
  console.log(
    `loaded ${a.toLocaleString('en')} + ${b.toLocaleString('en')} rows into two workers in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );
  // The same two workers' data for the process cluster: copied while the in-process cluster is
  // stopped (a DuckDB file has one process at a time), then that cluster starts again on its own.
  await two.stop();
  const procDirs = two.workerDirs.map((dir, w) => {
    const copy = path.join(DATA, 'procs-data', `worker-${w}`);
    cpSync(dir, copy, { recursive: true });
    return copy;
  });
  two = await startCluster('two', 2);
  procs = await startProcessCluster('procs', procDirs);
  // Until both worker processes registered, a count sees only one worker's rows.
  for (let i = 0; ; i++) {
    const [row] = await procs.query(`${SCHEMA} | count`);
    if (Number(row?.Count) === ROWS) break;
    if (i >= 300) throw new Error(`the process cluster counts ${row?.Count} rows, not ${ROWS}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log('started the process cluster (etcd, master, 2 workers, gateway)\n');

  // One query through each cluster first: a worker applies its DuckDB thread setting (instance-wide)
  // on its first fragment, and the direct runs must not see a different setting than the service.
  await one.query(QUERIES[0].kql);
  await two.query(QUERIES[0].kql);
  await procs.query(QUERIES[0].kql);
  const results = [];
  for (const q of QUERIES) {
    const each = await directEach(
      two.workers.map((w) => w.storage),
      q.sql,
    );
    try {
      const [d, h1, d2, h2, hp] = await directAnd(
        one.workers[0].storage,
        q.sql,
        [() => one.query(q.kql), each.run, () => two.query(q.kql), () => procs.query(q.kql)],
        RUNS,
      );
      results.push({ q, d, h1, d2, h2, hp });
    } finally {
      await each.release();
    }
  }
  const ratio = (a, b) => (a / b).toFixed(2).padStart(5);
  const plus = (a, b) => (a - b).toFixed(1).padStart(6);
  const h = (t, w) => t.padStart(w);
  console.log(
    `${'query'.padEnd(44)} ${h('DuckDB SQL', 10)} ${h('1 worker', 10)} ${h('ratio', 5)} ${h('+ms', 6)} ${h('SQL on 2', 10)} ${h('ratio', 5)} ${h('2 workers', 10)} ${h('ratio', 5)} ${h('+ms', 6)} ${h('2 processes', 11)} ${h('ratio', 5)} ${h('+ms', 6)}`,
  );
  for (const { q, d, h1, d2, h2, hp } of results) {
    console.log(
      `${q.name.padEnd(44)} ${fmt(d)} ${fmt(h1)} ${ratio(h1, d)} ${plus(h1, d)} ${fmt(d2)} ${ratio(d2, d)} ${fmt(h2)} ${ratio(h2, d)} ${plus(h2, d)} ${fmt(hp).padStart(11)} ${ratio(hp, d)} ${plus(hp, d)}`,
    );
  }
  console.log(
    [
      '',
      "DuckDB SQL: the hand-written statement over all rows (one worker's storage, its cores).",
      "SQL on 2: the same statement on both workers' halves at once (no merge), each worker's DuckDB with one thread.",
      '2 workers: both workers, the master and the gateway in this process; 2 processes: each role in its own process.',
      'Ratios are against DuckDB SQL.',
    ].join('\n'),
  );
} finally {
  agent.destroy();
  await one?.stop();
  await two?.stop();
  await procs?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
