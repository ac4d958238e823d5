// Segment format A/B (issue 18, decision 0025): the same sealed rows as Parquet segments (as the
// worker writes them now, and written other ways), as one DuckDB file per segment ATTACHed
// read-only, and as native tables of one sealed database; the query bench's statements over each,
// shaped the way the worker's scan shapes them (scan.ts: a UNION ALL of one branch per segment
// group with a constant first column, segments wholly inside a time window unfiltered, the edge
// ones filtered; top-N run per branch and merged). Every variant runs in one DuckDB instance, timed
// interleaved (one run of each in turn after a warm-up), medians.
//
//   node bench/storage/segment-format.mjs [--rows 10000000] [--segments 10] [--runs 7] [--threads 2] [--quick]
//
// The rows are generated in SQL with the shape of bench/query's (same columns and value
// distributions, sorted by time over 7 days), so that the 10 M rows take seconds rather than
// minutes to write. Data goes to .bench-data/ (git-ignored) and is removed at the end.
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const ROWS = arg('rows', 10_000_000);
const SEGMENTS = arg('segments', 10);
const RUNS = arg('runs', 7);
const THREADS = arg('threads', 2);
/** --quick: only the Parquet reference and the DuckDB variants. */
const QUICK = process.argv.includes('--quick');
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DIR = path.join(ROOT, '.bench-data', `segment-format-${process.pid}`);
const SPAN_US = 7 * 86_400_000_000;
const END_US = Date.now() * 1000;
const START_US = END_US - SPAN_US;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const q = (s) => `'${s.replaceAll("'", "''")}'`;
const COLUMNS = [
  'timestamp',
  '__INFLOW_ID',
  '__INFLOW_TIMESTAMP',
  '__INFLOW_HOST',
  '__INFLOW_SOURCE_ADDRESS',
  '__INFLOW_AGENT',
  'host',
  'level',
  'status',
  'method',
  'path',
  'latencyMs',
  'userId',
  'message',
];
const COLS = COLUMNS.map((c) => `"${c}"`).join(', ');

mkdirSync(DIR, { recursive: true });
const instance = await DuckDBInstance.create(path.join(DIR, 'bench.duckdb'), { threads: String(THREADS) });
const conn = await instance.connect();
await conn.run('SET parquet_metadata_cache = true');
const run = (sql) => conn.run(sql);
const all = async (sql) => (await conn.runAndReadAll(sql)).getRows();

// ---------------------------------------------------------------- rows, in the bench's shape
console.log(`rows ${ROWS.toLocaleString('en')}, ${SEGMENTS} segments, threads ${THREADS}, runs ${RUNS}`);
let t = performance.now();
await run('SELECT setseed(0.7)');
await run(`CREATE TEMP TABLE src AS
  WITH r AS (SELECT i, random() AS u, random() AS a, random() AS b, random() AS c, random() AS d, random() AS e, random() AS f, random() AS g FROM range(${ROWS}) t(i)),
  l AS (SELECT *, CASE WHEN u < 0.05 THEN 'Error' WHEN u < 0.15 THEN 'Warning' ELSE 'Info' END AS level,
               (floor(-ln(1 - a) * 80))::BIGINT + CASE WHEN u < 0.05 THEN 1000 ELSE 0 END AS lat,
               ['GET','GET','GET','POST','PUT','DELETE'][1 + floor(c * 6)::INT] AS method,
               ['/api/users','/api/orders','/api/items','/api/search','/health','/login','/api/cart','/api/pay'][1 + floor(d * 8)::INT] AS p FROM r)
  SELECT make_timestamp(${START_US}::BIGINT + (i * ${SPAN_US}::BIGINT // ${ROWS}) + floor(g * 1000000)::BIGINT) AS "timestamp",
         uuid() AS "__INFLOW_ID", make_timestamp(${END_US}::BIGINT) AS "__INFLOW_TIMESTAMP", 'bench' AS "__INFLOW_HOST",
         '127.0.0.1' AS "__INFLOW_SOURCE_ADDRESS", NULL::VARCHAR AS "__INFLOW_AGENT",
         'web-' || lpad((1 + floor(b * b * 10)::INT)::VARCHAR, 2, '0') AS host, level,
         CASE WHEN level = 'Error' THEN 500 WHEN u < 0.1 THEN 404 ELSE 200 END::BIGINT AS status, method, p AS path,
         lat AS "latencyMs", 'u' || floor(e * 10000)::INT AS "userId",
         CASE WHEN level = 'Error' THEN 'upstream timeout after ' || lat || 'ms calling db-' || floor(f * 4)::INT
              WHEN level = 'Warning' THEN 'slow response ' || lat || 'ms for ' || method || ' ' || p
              ELSE method || ' ' || p || '/' || floor(f * 10000)::INT || ' ' || CASE WHEN u < 0.1 THEN 404 ELSE 200 END || ' in ' || lat || 'ms' END AS message
  FROM l`);
console.log(`generated in ${((performance.now() - t) / 1000).toFixed(1)} s`);

// Segment k holds rows [k·n, (k+1)·n) of the time order, as a seal of 1/SEGMENTS of the rows does.
const PER = Math.ceil(ROWS / SEGMENTS);
const segRows = (k) => `SELECT ${COLS} FROM src WHERE i_ >= ${k * PER} AND i_ < ${(k + 1) * PER} ORDER BY "timestamp"`;
await run(`CREATE TEMP TABLE srci AS SELECT row_number() OVER (ORDER BY "timestamp") - 1 AS i_, * FROM src`);
await run('DROP TABLE src');
await run('ALTER TABLE srci RENAME TO src');
const bounds = [];
for (let k = 0; k < SEGMENTS; k++) {
  const [[lo, hi]] = await all(
    `SELECT epoch_us(min("timestamp")), epoch_us(max("timestamp")) FROM src WHERE i_ >= ${k * PER} AND i_ < ${(k + 1) * PER}`,
  );
  bounds.push({ lo: Number(lo), hi: Number(hi) });
}

/** The variants: name → { branches(k): SQL source of segment k, size }. */
const variants = [];
const sizeOf = (files) => files.reduce((n, f) => n + statSync(f).size, 0);

async function parquetVariant(name, options) {
  const files = [];
  t = performance.now();
  for (let k = 0; k < SEGMENTS; k++) {
    const file = path.join(DIR, name, `${k}.parquet`);
    mkdirSync(path.dirname(file), { recursive: true });
    await run(`COPY (${segRows(k)}) TO ${q(file)} (FORMAT parquet, ${options})`);
    files.push(file);
  }
  const ms = performance.now() - t;
  variants.push({
    name,
    writeMs: ms,
    bytes: sizeOf(files),
    // The worker reads a group of segments with the same columns by one read_parquet call.
    source: (ks) => `read_parquet(${`[${ks.map((k) => q(files[k])).join(', ')}]`})`,
    grouped: true,
  });
}

await parquetVariant('parquet zstd rg122880 (now)', 'COMPRESSION zstd, ROW_GROUP_SIZE 122880');
if (!QUICK) {
  variants.push({ ...variants[0], name: 'parquet zstd, one branch per file' });
  await parquetVariant('parquet snappy rg122880', 'COMPRESSION snappy, ROW_GROUP_SIZE 122880');
  await parquetVariant('parquet zstd rg30720', 'COMPRESSION zstd, ROW_GROUP_SIZE 30720');
  await parquetVariant('parquet uncompressed rg122880', 'COMPRESSION uncompressed, ROW_GROUP_SIZE 122880');
}

// One DuckDB file per segment, written by ATTACH + CREATE TABLE AS, read by ATTACH (READ_ONLY).
// `attachOptions` chooses the file's storage version: decision 0039 measured DuckDB's 'latest'
// against the default, which seals still write.
async function duckFileVariant(name, dir, attachOptions, probe) {
  const files = [];
  t = performance.now();
  for (let k = 0; k < SEGMENTS; k++) {
    const file = path.join(DIR, dir, `${k}.duckdb`);
    mkdirSync(path.dirname(file), { recursive: true });
    await run(`ATTACH ${q(file)} AS w${k} ${attachOptions}`);
    await run(`CREATE TABLE w${k}.rows AS ${segRows(k)}`);
    await run(`DETACH w${k}`);
    files.push(file);
  }
  const ms = performance.now() - t;
  for (let k = 0; k < SEGMENTS; k++) await run(`ATTACH ${q(files[k])} AS ${dir}_${k} (READ_ONLY)`);
  variants.push({ name, writeMs: ms, bytes: sizeOf(files), source: (ks) => `${dir}_${ks[0]}.rows` });
  if (!probe) return;
  // What attaching costs when a query has to do it itself.
  const attach = [];
  for (let i = 0; i < RUNS * 3; i++) {
    const t0 = performance.now();
    await run(`ATTACH ${q(files[0])} AS probe (READ_ONLY)`);
    await all('SELECT count(*) FROM probe.rows');
    await run('DETACH probe');
    attach.push(performance.now() - t0);
  }
  console.log(`ATTACH + count + DETACH of one segment file: ${median(attach).toFixed(2)} ms (median of ${attach.length})`);
}
await duckFileVariant('duckdb file per segment', 'duckfiles', '', true);
await duckFileVariant(
  "duckdb file per segment, STORAGE_VERSION 'latest'",
  'duckfiles_latest',
  "(STORAGE_VERSION 'latest')",
  false,
);

// Native tables, one per segment, in one sealed database.
{
  const file = path.join(DIR, 'sealed.duckdb');
  t = performance.now();
  await run(`ATTACH ${q(file)} AS sealed`);
  for (let k = 0; k < SEGMENTS; k++) await run(`CREATE TABLE sealed.seg_${k} AS ${segRows(k)}`);
  await run('CHECKPOINT sealed');
  const ms = performance.now() - t;
  variants.push({
    name: 'native tables in one database',
    writeMs: ms,
    bytes: sizeOf([file]),
    source: (ks) => `sealed.seg_${ks[0]}`,
  });
}

// ---------------------------------------------------------------- relations, as scan.ts shapes them
function relation(v, fromUs) {
  const ks = [...Array(SEGMENTS).keys()].filter((k) => fromUs === undefined || bounds[k].hi >= fromUs);
  const inside = ks.filter((k) => fromUs === undefined || bounds[k].lo >= fromUs);
  const edge = ks.filter((k) => !inside.includes(k));
  const where = fromUs === undefined ? '' : ` WHERE "timestamp" >= make_timestamp(${fromUs}::BIGINT)`;
  const parts = [];
  const add = (group, w) => {
    if (group.length === 0) return;
    if (v.grouped) parts.push(`SELECT ${COLS} FROM ${v.source(group)}${w}`);
    else for (const k of group) parts.push(`SELECT ${COLS} FROM ${v.source([k])}${w}`);
  };
  add(edge, where);
  add(inside, '');
  const union =
    parts.length === 1
      ? `(${parts[0]})`
      : `(SELECT ${COLS} FROM (${parts.map((p) => `SELECT 1 AS "#branch", ${p.slice(7)}`).join(' UNION ALL ')}))`;
  return { union, parts: parts.map((p) => `(${p})`) };
}

const HAS = `regexp_matches("message", '(?i)(?:^|[^\\p{L}\\p{N}])timeout(?:[^\\p{L}\\p{N}]|$)')`;
const QUERIES = [
  { name: 'count, last hour', from: 3_600_000_000, sql: (r) => `SELECT count(*) FROM ${r.union}` },
  { name: 'count, last day', from: 86_400_000_000, sql: (r) => `SELECT count(*) FROM ${r.union}` },
  {
    name: 'count(), avg by 5m bin and host, last day',
    from: 86_400_000_000,
    sql: (r) =>
      `SELECT time_bucket(INTERVAL 5 MINUTE, "timestamp", TIMESTAMP '1970-01-01') AS t, host, count(*), avg("latencyMs") FROM ${r.union} GROUP BY ALL`,
  },
  {
    name: 'count by 1h bin and level, 7 days',
    sql: (r) =>
      `SELECT time_bucket(INTERVAL 1 HOUR, "timestamp", TIMESTAMP '1970-01-01') AS t, level, count(*) FROM ${r.union} GROUP BY ALL`,
  },
  {
    // As fragment-exec.ts runs a top-N fragment: per branch, then the first 10 of their union.
    name: 'top 10 by latency, 7 days (per branch)',
    sql: (r) =>
      `SELECT * FROM (${r.parts.map((p) => `(SELECT * FROM ${p} ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10)`).join(' UNION ALL ')}) ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`,
  },
  {
    name: 'has "timeout", 7 days',
    sql: (r) => `SELECT count(*) FROM ${r.union} WHERE contains(lower("message"), 'timeout') AND ${HAS}`,
  },
  {
    name: 'contains "db-3" + take 100',
    sql: (r) => `SELECT * FROM ${r.union} WHERE contains(lower("message"), 'db-3') LIMIT 100`,
  },
  { name: 'count, 7 days', sql: (r) => `SELECT count(*) FROM ${r.union}` },
];

// Answers must agree before anything is timed.
for (const query of QUERIES) {
  const fromUs = query.from === undefined ? undefined : END_US - query.from;
  const answers = [];
  for (const v of variants) {
    const rows = await all(query.sql(relation(v, fromUs)));
    answers.push(query.name.startsWith('contains') ? rows.length : JSON.stringify(rows.map(String).sort()));
  }
  if (new Set(answers).size !== 1) throw new Error(`variants disagree on ${query.name}`);
}

console.log('\nwritten: name, seconds to write, MB');
for (const v of variants) console.log(`  ${v.name}: ${(v.writeMs / 1000).toFixed(1)} s, ${(v.bytes / 1e6).toFixed(0)} MB`);
console.log(`\nmedian ms (${RUNS} runs, interleaved), and ratio to the first column`);
console.log(`| query | ${variants.map((v) => v.name).join(' | ')} |`);
console.log(`|---|${variants.map(() => '---:').join('|')}|`);
for (const query of QUERIES) {
  const fromUs = query.from === undefined ? undefined : END_US - query.from;
  const texts = variants.map((v) => query.sql(relation(v, fromUs)));
  for (const text of texts) await all(text); // warm-up
  const samples = texts.map(() => []);
  for (let i = 0; i < RUNS; i++)
    for (const [k, text] of texts.entries()) {
      const t0 = performance.now();
      await all(text);
      samples[k].push(performance.now() - t0);
    }
  const m = samples.map(median);
  console.log(
    `| ${query.name} | ${m.map((x, k) => (k === 0 ? x.toFixed(1) : `${x.toFixed(1)} (${(x / m[0]).toFixed(2)}×)`)).join(' | ')} |`,
  );
}
conn.closeSync();
instance.closeSync();
rmSync(DIR, { recursive: true, force: true });
