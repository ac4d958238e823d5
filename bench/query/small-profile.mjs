// Where a small query's time goes on the settled layout: a timeline of one query through HTTP,
// each DuckDB statement the process runs (catalog, term index, check, the fragment) and the
// worker's scan open/release, as offsets from the query's start, for the median run of --runs.
// The data is loaded and compacted once into --data (kept between runs of this script: loading
// 10 M rows takes minutes), then served by a fresh in-process cluster each time. The rows' times
// are relative to the load, so "last hour" drifts as the kept data ages (fine for a profile, not
// for figures: query-bench.mjs measures).
//
//   npm run build && node bench/query/small-profile.mjs --data /tmp/settled-10m [--rows 10000000] [--workers 1]
//     [--runs 31] [--match "deadlock"]
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuckDBConnection } from '@duckdb/node-api';
import { Client } from '@grpc/grpc-js';
import { ACCOUNT, agent, DATA, loadRows, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';
import { describeLayout, settleCompaction } from './settle.mjs';

const args = process.argv.slice(2);
const stringArg = (name, def) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : def);
const DATA_DIR = stringArg('data');
if (!DATA_DIR) throw new Error('--data DIR: where the loaded, compacted rows are kept');
const ROWS = numberArg('rows', 10_000_000);
const WORKERS = numberArg('workers', 1);
const RUNS = numberArg('runs', 31);
const MATCH = stringArg('match', '');
// --after-sql: each timed run right after the query's hand-written DuckDB SQL on the same worker
// instance, untimed (the order of query-bench.mjs, whose "DuckDB SQL" column runs just before it).
const AFTER_SQL = args.includes('--after-sql');
// --gap MS: a pause before each timed run, as between the queries of a user or a dashboard
// (the gateway's caches of permissions and schemas expire after 2 s and 5 s).
const GAP = numberArg('gap', 0);
// --explain: after the runs, EXPLAIN ANALYZE of the query's last fragment statement (its full
// text and parameters as the worker ran it) on a fresh snapshot of worker 0.
const EXPLAIN = args.includes('--explain');
let lastFragment;
const SMALL = ['count, last hour', 'count, last day', '2179ms', 'deadlock', 'db-3', 'count, 7 days', '5m bin'];

let trace;
const t0 = () => performance.now();
let start = 0;
const mark = (what) => trace?.push([performance.now() - start, what]);
// Every statement of the process, its start and the end of its call (for a stream: its start).
for (const method of ['run', 'runAndReadAll', 'stream', 'streamAndReadAll', 'prepare']) {
  const original = DuckDBConnection.prototype[method];
  if (!original) continue;
  DuckDBConnection.prototype[method] = async function (sql, ...rest) {
    const label = `${method} ${String(sql).replace(/\s+/g, ' ').slice(0, 140)}`;
    if (String(sql).startsWith('WITH "__strata_source__"')) lastFragment = [sql, ...rest];
    mark(`> ${label}`);
    try {
      return await original.call(this, sql, ...rest);
    } finally {
      mark(`< ${method}`);
    }
  };
}

// Every gRPC call of the process: unary calls with their answer, streams with their start.
const unary = Client.prototype.makeUnaryRequest;
Client.prototype.makeUnaryRequest = function (method, ...rest) {
  mark(`> grpc ${method}`);
  const callback = rest.findLastIndex((a) => typeof a === 'function');
  const original = rest[callback];
  rest[callback] = (...r) => {
    mark(`< grpc ${method}`);
    original(...r);
  };
  return unary.call(this, method, ...rest);
};
const stream = Client.prototype.makeServerStreamRequest;
Client.prototype.makeServerStreamRequest = function (method, ...rest) {
  mark(`> grpc stream ${method}`);
  const call = stream.call(this, method, ...rest);
  call.once('end', () => mark(`< grpc stream ${method} end`));
  return call;
};

const dirs = Array.from({ length: WORKERS }, (_, w) => path.join(DATA_DIR, `worker-${w}`));
const loaded = existsSync(dirs[0]);
const cluster = await startCluster('small-profile', WORKERS, { workerDataPaths: dirs });
try {
  if (!loaded) {
    const t = t0();
    for (const [i, w] of cluster.workers.entries()) await loadRows(w.storage, ROWS, i, WORKERS);
    const cycles = await settleCompaction(cluster, { timeoutMs: 1_800_000 });
    console.log(`loaded ${ROWS} rows and settled (${cycles} cycles) in ${((t0() - t) / 1000).toFixed(0)} s`);
  }
  for (const [w, worker] of cluster.workers.entries()) {
    console.log(`worker ${w}: ${await describeLayout(worker.storage)}`);
    const storage = worker.storage;
    const openScan = storage.openScan.bind(storage);
    storage.openScan = async (...a) => {
      mark(`worker ${w} openScan`);
      const scan = await openScan(...a);
      mark(`worker ${w} scan open`);
      if (!scan) return scan;
      const release = scan.release.bind(scan);
      return {
        ...scan,
        release: () => {
          mark(`worker ${w} release`);
          return release();
        },
      };
    };
  }
  const queries = QUERIES.filter((q) => SMALL.some((s) => q.name.includes(s)) && q.name.includes(MATCH));
  for (const q of queries) {
    for (let i = 0; i < 5; i++) await cluster.query(q.kql);
    const direct = AFTER_SQL ? await cluster.workers[0].storage.openScan(ACCOUNT, SCHEMA) : undefined;
    const runs = [];
    for (let i = 0; i < RUNS; i++) {
      if (GAP > 0) await sleep(GAP);
      if (direct) (await direct.connection.runAndReadAll(q.sql(direct.relation))).getRows();
      trace = [];
      start = performance.now();
      await cluster.query(q.kql);
      const total = performance.now() - start;
      runs.push({ total, trace });
      trace = undefined;
    }
    await direct?.release();
    runs.sort((a, b) => a.total - b.total);
    const median = runs[Math.floor(runs.length / 2)];
    const q1 = runs[Math.floor(runs.length / 4)].total;
    const q3 = runs[Math.floor((3 * runs.length) / 4)].total;
    console.log(`\n== ${q.name}: median ${median.total.toFixed(2)} ms (quartiles ${q1.toFixed(2)}-${q3.toFixed(2)})`);
    console.log(`   ${q.kql}`);
    for (const [at, what] of median.trace) console.log(`${at.toFixed(2).padStart(8)}  ${what}`);
    console.log(`${median.total.toFixed(2).padStart(8)}  answer received`);
    if (EXPLAIN && lastFragment) {
      const [sql, values, types] = lastFragment;
      console.log(`-- fragment statement:\n${String(sql).slice(0, 4000)}`);
      const scan = await cluster.workers[0].storage.openScan(ACCOUNT, SCHEMA);
      try {
        const reader = await scan.connection.runAndReadAll(`EXPLAIN ANALYZE ${sql}`, values, types);
        console.log(
          reader
            .getRows()
            .map((r) => r[1])
            .join('\n'),
        );
      } finally {
        await scan.release();
      }
    }
  }
} finally {
  agent.destroy();
  await cluster.stop();
  // The cluster's own directory (master, etcd); the kept worker data stays in --data.
  rmSync(DATA, { recursive: true, force: true });
}
