// Interleaved A/B of statement variants for the bench's group-by and top-N queries, at statement
// level on one loaded worker (one process, same scan): the planner's statement as the worker runs
// it against rewritten forms. Prints median and spread (min–max) per variant.
//
//   npm run build && node bench/query/groupby-ab.mjs [--rows 1000000] [--runs 15] [--query 3]
import { rmSync } from 'node:fs';
import { fragmentSql, inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 15);
const ONLY = numberArg('query', -1);

const BIN =
  /make_timestamp\(epoch_us\("c0"\) - \(\(\(epoch_us\("c0"\) % CAST\((\d+) AS BIGINT\)\) \+ CAST\(\d+ AS BIGINT\)\) % CAST\(\d+ AS BIGINT\)\)\)/;
const VARIANTS = {
  generated: (s) => s,
  time_bucket: (s) => s.replace(BIN, (_, n) => `time_bucket(INTERVAL (${n}) MICROSECOND, "c0", TIMESTAMP '1970-01-01')`),
  'integer key': (s) =>
    s
      .replace(BIN, (m) => m.slice('make_timestamp('.length, -1))
      .replace(/SELECT epoch_us\("(c\d+)"\) AS "\1"/, 'SELECT "$1" AS "$1"'),
  // Exact for every sign like the generated form, one modulo for the (usual) non-negative times.
  'case floor': (s) =>
    s.replace(
      BIN,
      (_, n) =>
        `make_timestamp(CASE WHEN epoch_us("c0") >= 0 THEN epoch_us("c0") - epoch_us("c0") % ${n} ELSE epoch_us("c0") - ((epoch_us("c0") % ${n}) + ${n}) % ${n} END)`,
    ),
  'integer key, case floor': (s) =>
    s
      .replace(
        BIN,
        (_, n) =>
          `(CASE WHEN epoch_us("c0") >= 0 THEN epoch_us("c0") - epoch_us("c0") % ${n} ELSE epoch_us("c0") - ((epoch_us("c0") % ${n}) + ${n}) % ${n} END)`,
      )
      .replace(/SELECT epoch_us\("(c\d+)"\) AS "\1"/, 'SELECT "$1" AS "$1"'),
  'integer key, no mod': (s) =>
    s
      .replace(BIN, (_, n) => `(epoch_us("c0") // ${n}) * ${n}`)
      .replace(/SELECT epoch_us\("(c\d+)"\) AS "\1"/, 'SELECT "$1" AS "$1"'),
};

let cluster;
try {
  cluster = await startCluster('one', 1, {});
  const storage = cluster.workers[0].storage;
  await loadRows(storage, ROWS, 0, 1);
  await cluster.query(QUERIES[0].kql);
  const CATALOG = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  for (const [index, q] of QUERIES.entries()) {
    if (ONLY >= 0 ? index !== ONLY : ![2, 3].includes(index)) continue;
    const plan = planQuery(q.kql, CATALOG, { storageTime: true });
    const spec = plan.single ?? plan.fragments[0];
    const range = { ...scanRangeMs(spec.timeRange), ...storageTimeUs(spec) };
    const scan = await storage.openScan(ACCOUNT, SCHEMA, range);
    const base = fragmentSql(
      { ...spec, sql: inlineParams(spec.sql, spec.params) ?? spec.sql },
      scan.relation,
      scan.columns.map((c) => c.name),
      scan.branches,
    );
    const variants = Object.entries(VARIANTS).map(([name, f]) => [name, f(base)]);
    variants.push(['DuckDB SQL (bench)', q.sql(scan.relation)]);
    const answers = [];
    // Each answer's rows, sorted, as text: the variants that rewrite the generated statement must
    // answer its rows (the bench's own SQL names and types its columns differently).
    const canonical = (rows) =>
      rows
        .map((r) => JSON.stringify(r.map((v) => (v instanceof Object || typeof v === 'bigint' ? String(v) : v))))
        .sort()
        .join('\n');
    for (const [, sql] of variants) {
      const rows = (await scan.connection.runAndReadAll(sql)).getRows();
      answers.push({ rows: rows.length, text: canonical(rows) });
    }
    const samples = variants.map(() => []);
    for (let i = 0; i < RUNS; i++)
      for (const [k, [, sql]] of variants.entries()) {
        const t = performance.now();
        await scan.connection.runAndReadAll(sql);
        samples[k].push(performance.now() - t);
      }
    console.log(`\n${q.name} (${ROWS.toLocaleString('en')} rows, ${RUNS} runs)`);
    for (const [k, [name]] of variants.entries()) {
      const s = samples[k];
      console.log(
        `  ${name.padEnd(24)} ${median(s).toFixed(2).padStart(8)} ms  (${Math.min(...s).toFixed(1)}–${Math.max(...s).toFixed(1)})  rows ${answers[k].rows}${k === variants.length - 1 ? '' : answers[k].text === answers[0].text ? ', same rows' : ', OTHER ROWS'}`,
      );
    }
    await scan.release();
  }
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
