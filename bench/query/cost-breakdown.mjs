// Where the service's time goes, layer by layer, for each typical query on a one-worker cluster
// (the whole query runs as one worker statement there). Each row adds one layer to the one above
// it, all timed interleaved in the same process (median of --runs):
//
//   direct SQL      the hand-written statement on a relation opened once (query-bench's baseline)
//   generated SQL   the planner's statement, literals inlined as the worker runs it, on a scan
//                   opened once with the query's time range (DuckDB time of the generated SQL)
//   + wire values   the same through runFragment (result chunks to wire values)
//   + encode        and encoded for the wire (encodeBatch)
//   + snapshot      the same on a snapshot opened (and released) per run, as the worker does
//   worker call     the gateway's gRPC call to the worker: snapshot, admission, statement, encode,
//                   transport, decode (what the gateway waits for)
//   gateway         planning + the call + formatting + JSON writing, no HTTP
//   HTTP            the endpoint, with a lean node:http client parsing the answer
//
// Each layer also shows the main thread's GC pauses that began while it ran (per run).
//
// --etcd runs the cluster on a real etcd process (as deployed: the per-query coordinator reads are
// etcd round trips), otherwise on the embedded coordinator.
//
//   npx tsc -b tsconfig.build.json && node bench/query/cost-breakdown.mjs [--rows 10000000] [--runs 9] [--query N] [--etcd]
import { rmSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import { encodeBatch, fragmentSql, inlineParams, runFragment } from '@strata/common';
import { distributedRunner, MergeDatabase, planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
// Internals of the gateway (not its package exports), for timing the layers one by one.
import { executePlanColumnar, queryResultJson } from '../../gateway/dist/src/query/engine.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 10_000_000);
const RUNS = numberArg('runs', 9);
const ONLY = numberArg('query', -1);

async function drain(iterable) {
  const out = [];
  for await (const x of iterable) out.push(x);
  return out;
}

// Main-thread GC pauses, charged to the layer running when each began.
const windows = [];
const gcPauses = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ startTime: e.startTime, duration: e.duration });
}).observe({ entryTypes: ['gc'] });

let cluster;
const merge = new MergeDatabase();
try {
  cluster = await startCluster('one', 1, { etcd: process.argv.includes('--etcd') });
  const t = performance.now();
  const storage = cluster.workers[0].storage;
  await loadRows(storage, ROWS, 0, 1);
  console.log(`loaded ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await cluster.query(QUERIES[0].kql); // the worker applies its thread setting on its first fragment
  // The catalog the endpoint plans with (the stored columns include the inflow stamps).
  const CATALOG = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  const runner = () =>
    distributedRunner({ coordinator: cluster.coordinator, channels: cluster.channels, accountId: ACCOUNT, timeoutMs: 60_000 });

  for (const [index, q] of QUERIES.entries()) {
    if (ONLY >= 0 && index !== ONLY) continue;
    // Planned as the query service plans (time conjuncts left to the scan). A top-N has no
    // whole-query statement: its one fragment is what the worker runs (per scan branch).
    const plan = planQuery(q.kql, CATALOG, { storageTime: true });
    const spec = plan.single ?? plan.fragments[0];
    // The fragment's term hints too (decision 0026), as the worker's scan is given them.
    const range = { ...scanRangeMs(spec.timeRange), ...storageTimeUs(spec), ...(spec.terms ? { terms: spec.terms } : {}) };
    const statement = { ...spec, maxRows: spec.limit };
    const whole = await storage.openScan(ACCOUNT, SCHEMA);
    const ranged = await storage.openScan(ACCOUNT, SCHEMA, range);
    const signal = new AbortController().signal;
    const names = ranged.columns.map((c) => c.name);
    const types = spec.columns.map((c) => c.type);
    const generated = fragmentSql(
      { ...statement, sql: inlineParams(spec.sql, spec.params) ?? spec.sql },
      ranged.relation,
      names,
      ranged.branches,
    );
    const layers = [
      ['direct SQL', async () => (await whole.connection.runAndReadAll(q.sql(whole.relation))).getRows()],
      ['generated SQL', async () => (await ranged.connection.runAndReadAll(generated)).getRows()],
      [
        '+ wire values',
        () => drain(runFragment(ranged.connection, ranged.relation, names, statement, signal, 8192, ranged.branches)),
      ],
      [
        '+ encode',
        async () => {
          for (const b of await drain(
            runFragment(ranged.connection, ranged.relation, names, statement, signal, 8192, ranged.branches),
          ))
            encodeBatch(b, types);
        },
      ],
      [
        '+ snapshot',
        async () => {
          const scan = await storage.openScan(ACCOUNT, SCHEMA, range);
          try {
            const batches = await drain(
              runFragment(scan.connection, scan.relation, names, statement, signal, 8192, scan.branches),
            );
            for (const b of batches) encodeBatch(b, types);
          } finally {
            await scan.release();
          }
        },
      ],
      ['worker call', async () => drain(plan.single ? await runner().single(spec, signal) : runner()(spec, signal))],
      [
        'gateway',
        async () => {
          const p = planQuery(q.kql, CATALOG, { storageTime: true });
          const r = await executePlanColumnar(p, runner(), { mergeDatabase: merge });
          return queryResultJson(r);
        },
      ],
      ['HTTP', () => cluster.query(q.kql)],
    ];
    try {
      for (const [, fn] of layers) await fn(); // warm-up
      const samples = layers.map(() => []);
      const gcMs = layers.map(() => 0);
      for (let i = 0; i < RUNS; i++) {
        for (const [k, [, fn]] of layers.entries()) {
          const s = performance.now();
          await fn();
          const e = performance.now();
          samples[k].push(e - s);
          windows.push({ k, s, e });
        }
      }
      // GC entries arrive asynchronously: let the observer deliver the last ones.
      await new Promise((r) => setTimeout(r, 50));
      for (const { startTime, duration } of gcPauses.splice(0)) {
        const w = windows.find((x) => startTime >= x.s && startTime < x.e);
        if (w) gcMs[w.k] += duration;
      }
      windows.length = 0;
      const base = median(samples[0]);
      console.log(`\n${q.name}`);
      let previous = base;
      for (const [k, [name]] of layers.entries()) {
        const m = median(samples[k]);
        console.log(
          `  ${name.padEnd(14)} ${m.toFixed(2).padStart(8)} ms  step ${(m - previous >= 0 ? '+' : '') + (m - previous).toFixed(2).padStart(6)}  vs direct ${(m / base).toFixed(2)}×  GC ${(gcMs[k] / RUNS).toFixed(2)} ms/run`,
        );
        previous = m;
      }
    } finally {
      await whole.release();
      await ranged.release();
    }
  }
} finally {
  agent.destroy();
  await merge.close();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
