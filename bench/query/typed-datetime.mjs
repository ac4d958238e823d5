// Cost of typed datetime columns carried as ticks (decision 0048): `parse … with t:datetime` and
// typed mv-expand now keep a 7th fractional digit (BIGINT ticks) where they kept microseconds. The
// engine's fragment SQL of this build against another build's (`--base <gateway dist>`, e.g. a
// worktree of main built with `npx tsc -p gateway`), on one in-memory DuckDB instance with 1 M
// texts, run interleaved; medians compared. Texts with 6 fractional digits (what ingest and most
// logs hold) and with 7.
//   npm run build && node bench/query/typed-datetime.mjs --base /tmp/main/gateway/dist [--rows 1000000] [--runs 7]
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { registerKustoFunctions } from '@strata/common';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const ROWS = Number(arg('rows', 1_000_000));
const RUNS = Number(arg('runs', 7));
const BASE = arg('base');
if (!BASE) throw new Error('--base <gateway dist of the build to compare with> is required');

const load = async (dist) => {
  const engine = await import(pathToFileURL(path.join(path.resolve(dist), 'src/query/engine.js')).href);
  await engine.warmQueryEngine();
  return engine.planQuery;
};
const builds = { branch: await load(new URL('../../gateway/dist', import.meta.url).pathname), base: await load(BASE) };

const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await db.connect();
// The engine's JS functions (the RFC text parse the datetime conversion falls back to), as on a worker.
registerKustoFunctions(c);
// One row every 600 ms from 2024-03-01 (about a week at 1 M rows); s6 with 6 fractional digits, s7 with 7.
await c.run(
  `CREATE TABLE t AS SELECT 'at ' || strftime(ts, '%Y-%m-%dT%H:%M:%S.%f') || 'Z end' AS s6, 'at ' || strftime(ts, '%Y-%m-%dT%H:%M:%S.%f') || CAST(i % 10 AS VARCHAR) || 'Z end' AS s7 FROM (SELECT TIMESTAMP '2024-03-01' + to_microseconds(i * 600017) AS ts, i FROM range(${ROWS}) r(i))`,
);
const catalog = {
  tables: [
    {
      name: 'T',
      columns: [
        { name: 's6', type: 'string' },
        { name: 's7', type: 'string' },
      ],
    },
  ],
};
function engineSql(planQuery, kql) {
  const [f] = planQuery(kql, catalog, { now: new Date() }).fragments;
  const lit = (p) =>
    p.type === 'VARCHAR'
      ? `'${String(p.value).replaceAll("'", "''")}'`
      : p.type === 'TIMESTAMP'
        ? `make_timestamp(CAST(${p.value} AS BIGINT))`
        : `CAST(${p.value} AS ${p.type})`;
  return f.sql.replaceAll('"__strata_source__"', 't').replace(/\$(\d+)/g, (_, i) => lit(f.params[Number(i) - 1]));
}
async function time(q) {
  const t0 = process.hrtime.bigint();
  await c.runAndReadAll(q);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const CASES = {
  'parse, max': (s) => `T | parse ${s} with 'at ' t:datetime ' end' | summarize max(t)`,
  'parse, filter': (s) => `T | parse ${s} with 'at ' t:datetime ' end' | where t > datetime(2024-03-04 10:00) | count`,
  'parse, bin 1h': (s) => `T | parse ${s} with 'at ' t:datetime ' end' | summarize count() by bin(t, 1h)`,
  'mv-expand, max': (s) =>
    `T | extend a = pack_array(substring(${s}, 3, 28)) | mv-expand t = a to typeof(datetime) | summarize max(t)`,
};
for (const [name, kql] of Object.entries(CASES))
  for (const s of ['s6', 's7']) {
    const variants = Object.fromEntries(Object.entries(builds).map(([b, plan]) => [b, engineSql(plan, kql(s))]));
    const answers = {};
    for (const [b, q] of Object.entries(variants))
      answers[b] = JSON.stringify((await c.runAndReadAll(q)).getRowsJson().slice(0, 1));
    const times = { branch: [], base: [] };
    for (let r = 0; r < RUNS; r++) for (const [b, q] of Object.entries(variants)) times[b].push(await time(q));
    const [tb, ta] = [median(times.branch), median(times.base)];
    console.log(
      `${name} (${s}) over ${ROWS} rows: ticks (this build) ${tb.toFixed(1)} ms, µs (base) ${ta.toFixed(1)} ms, ${(tb / ta).toFixed(2)}×; first answers ${answers.branch} vs ${answers.base}`,
    );
  }
c.closeSync();
