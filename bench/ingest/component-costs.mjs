// What each step of the ingest path costs per row, measured alone on the bench's data, next to the
// alternatives considered for it. It answers "how low can rows per CPU-second go with these parts":
// the end-to-end bench (run.mjs) measures the whole path, this one prices its pieces, so the
// budget behind issue 4's target (100,000 rows per CPU-second = 10 µs of CPU per row) can be
// checked piece by piece.
//
//   npm run build && node bench/ingest/component-costs.mjs [--batches 150]
//
// Every figure is CPU time of this process (JS thread + DuckDB threads) per row, DuckDB on one
// thread as in the worker (cores − 1 on this 2-core machine). Data: the bench's 11-field entries in
// ~1 MB batches of 3,766 entries. Files go to .bench-data/costs-<time>/ and are removed.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { entry } from './bench-entries.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: args } = parseArgs({ options: { batches: { type: 'string', default: '150' } } });
const BATCHES = Number(args.batches);
const PER_BATCH = 3766; // entries in a 1 MB batch of this data
const ROWS = BATCHES * PER_BATCH;
const work = path.join(root, '.bench-data', `costs-${Date.now()}`);
mkdirSync(work, { recursive: true });

const { buildJsonBatch } = await import(path.join(root, 'gateway', 'dist', 'src', 'inflow', 'json-batch.js'));
const { buildRawJsonBatch } = await import(path.join(root, 'gateway', 'dist', 'src', 'inflow', 'raw-json-batch.js'));
const { ndjsonDepthWithin } = await import(path.join(root, 'common', 'dist', 'src', 'inflow', 'json-depth.js'));
const { buildTermIndex } = await import(path.join(root, 'worker', 'dist', 'src', 'storage', 'term-index.js'));
const { attachSegmentFiles, segmentFileName, writeSegmentFile } = await import(
  path.join(root, 'worker', 'dist', 'src', 'storage', 'segment-format.js')
);
const { chooseFoldColumns, foldSelectItems } = await import(path.join(root, 'worker', 'dist', 'src', 'storage', 'term-folds.js'));

// ── data (the same entries as run.mjs: bench-entries.mjs) ─────────────────────────────────────
const t0 = Date.UTC(2026, 0, 1);
const bodies = [];
for (let b = 0; b < BATCHES; b++) {
  const entries = [];
  for (let i = b * PER_BATCH; i < (b + 1) * PER_BATCH; i++) entries.push(entry(i, t0));
  bodies.push(Buffer.from(JSON.stringify(entries)));
}

const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const results = [];
function report(step, seconds, note = '') {
  const us = (seconds / ROWS) * 1e6;
  results.push({ step, us });
  console.log(`${step.padEnd(64)} ${us.toFixed(2).padStart(6)} µs/row  ${note}`);
}
async function measure(step, fn, note) {
  if (global.gc) global.gc();
  const c0 = cpu();
  await fn();
  report(step, cpu() - c0, note);
}

// ── gateway: what the JS thread does per row ────────────────────────────────────────────────────
console.log(`${BATCHES} batches × ${PER_BATCH} entries (${(bodies[0].length / 1048576).toFixed(2)} MB each), ${ROWS} rows`);
console.log('\ngateway (JS thread, incl. the garbage collection it causes):');
await measure('JSON.parse of the body (utf8 decode + parse)', () => {
  for (const b of bodies) JSON.parse(b.toString('utf8'));
});
const ndjson = [];
await measure('JSON.parse + checks + typing + NDJSON encoding (buildJsonBatch)', () => {
  for (const b of bodies) ndjson.push(buildJsonBatch(JSON.parse(b.toString('utf8')), { allowSchema: () => true }).parts[0]);
});

await measure('checks + typing + NDJSON from the bytes as sent (buildRawJsonBatch, decision 0028)', () => {
  for (const b of bodies) if (!buildRawJsonBatch(b, { allowSchema: () => true })) throw new Error('the fast path gave up');
});

// ── worker: its JS thread's checks ──────────────────────────────────────────────────────────────
console.log('\nworker (JS thread):');
await measure(
  'nesting check over every byte of the rows (ndjsonDepthWithin)',
  () => {
    for (const p of ndjson) if (!ndjsonDepthWithin(p.rows, 65)) throw new Error('too deep');
  },
  '(since decision 0039 only for batches declaring a Dynamic column)',
);

// ── worker: DuckDB per 1 MB batch, one thread ───────────────────────────────────────────────────
const ndFiles = ndjson.map((p, i) => {
  const f = path.join(work, `b${i}.ndjson`);
  writeFileSync(f, p.rows);
  return f;
});
const rawFiles = bodies.map((b, i) => {
  const f = path.join(work, `b${i}.json`);
  writeFileSync(f, b);
  return f;
});
const FIELDS =
  'host VARCHAR, service VARCHAR, level VARCHAR, method VARCHAR, path VARCHAR, status BIGINT, latencyMs DOUBLE, bytes BIGINT, userId VARCHAR, traceId VARCHAR, success BOOLEAN';
const names = FIELDS.split(', ').map((f) => f.split(' ')[0]);
const HOT = `"timestamp" TIMESTAMP, "__INFLOW_ID" UUID, "__INFLOW_TIMESTAMP" TIMESTAMP, "__INFLOW_HOST" VARCHAR, "__INFLOW_SOURCE_ADDRESS" VARCHAR, "__INFLOW_AGENT" VARCHAR, ${FIELDS}`;
const STAMPS = `make_timestamp($1::BIGINT), $2, $3, NULL`;
const ndColumns = `{'@ts': 'BIGINT', '@id': 'UUID', ${FIELDS.split(', ')
  .map((f) => `${f.split(' ')[0]}: '${f.split(' ')[1]}'`)
  .join(', ')}}`;
const ndInsert = (table, f) =>
  `INSERT INTO ${table} SELECT make_timestamp("@ts"), "@id", ${STAMPS}, ${names.join(', ')} FROM read_json('${f}', format = 'newline_delimited', columns = ${ndColumns})`;
const rawInsert = (table, f) =>
  `INSERT INTO ${table} SELECT "timestamp"::TIMESTAMPTZ::TIMESTAMP, gen_random_uuid(), ${STAMPS}, ${names.map((n) => `data.${n}`).join(', ')}
   FROM read_json('${f}', format = 'array', columns = {schema: 'VARCHAR', "timestamp": 'VARCHAR', data: 'STRUCT(${FIELDS})'}) WHERE schema = 'Bench.Http'`;
const params = [BigInt(Date.now()) * 1000n, 'gateway-host', '127.0.0.1'];

const db = await DuckDBInstance.create(path.join(work, 'hot.duckdb'), { threads: '1', checkpoint_threshold: '256MB' });
const conn = await db.connect();
await conn.run("SET TimeZone = 'UTC'");
await conn.run("ATTACH ':memory:' AS mem");
await conn.run(`CREATE TABLE hot_file (${HOT})`);
await conn.run(`CREATE TABLE mem.hot_mem (${HOT})`);
await conn.run(`CREATE TABLE mem.hot_raw (${HOT})`);
console.log('\nworker (DuckDB on one thread, one statement and commit per 1 MB batch):');
await measure('NDJSON → hot table in the DuckDB file (write-ahead log, today)', async () => {
  for (const f of ndFiles) await conn.run(ndInsert('hot_file', f), params);
});
await measure('NDJSON → in-memory table (no write-ahead log)', async () => {
  for (const f of ndFiles) await conn.run(ndInsert('mem.hot_mem', f), params);
});
await measure(
  'raw request body (array of entries) → in-memory table',
  async () => {
    for (const f of rawFiles) await conn.run(rawInsert('mem.hot_raw', f), params);
  },
  '(the gateway would forward bytes, not NDJSON)',
);
await measure('seal (Parquet, before decision 0025): hot rows sorted by timestamp → ZSTD Parquet', async () => {
  await conn.run(
    `COPY (SELECT * FROM hot_file ORDER BY "timestamp") TO '${path.join(work, 'seg.parquet')}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880)`,
  );
});
// The seal as the worker writes it today (sealer.ts): a DuckDB segment file, attached read-only.
const segFile = path.join(work, segmentFileName(1, '00000000-0000-4000-8000-000000000001', 'duckdb'));
mkdirSync(path.dirname(segFile), { recursive: true });
const stringColumns = FIELDS.split(', ')
  .filter((f) => f.endsWith('VARCHAR'))
  .map((f) => ({ name: f.split(' ')[0], type: 'String' }));
let folds = [];
await measure('seal: hot rows sorted by timestamp → DuckDB segment file (decisions 0025, 0045)', async () => {
  // As sealer.ts writes it: the term folds of the free-text columns in the file (decision 0045).
  folds = await chooseFoldColumns(conn, ['hot_file'], stringColumns);
  await writeSegmentFile(conn, `SELECT *${foldSelectItems(folds)} FROM hot_file ORDER BY "timestamp"`, segFile, 'duckdb');
  await attachSegmentFiles(conn, [segFile]);
});
console.log(`  (term folds stored: ${folds.length === 0 ? 'none' : folds.join(', ')})`);
await measure('seal: of which choosing the columns to fold (the sample, decision 0045)', async () => {
  await chooseFoldColumns(conn, ['hot_file'], stringColumns);
});
let termKeys = 0;
await measure(
  "seal: the segment's term index (buildTermIndex, decision 0026)",
  async () => {
    const index = await buildTermIndex(conn, segFile, 'duckdb', stringColumns);
    for (const f of index.values()) termKeys += f.keyCount;
  },
  '',
);
console.log(`  (${termKeys} term keys over ${stringColumns.length} String columns)`);
console.log('\nfinding fields and types in DuckDB instead of the gateway (what parsing once in DuckDB needs first):');
await measure('json_group_structure over the entries', async () => {
  for (const f of rawFiles) await conn.run(`SELECT json_group_structure(json) FROM read_json_objects('${f}', format = 'array')`);
});
await measure('read_json type detection over every entry (DESCRIBE)', async () => {
  for (const f of rawFiles) await conn.run(`DESCRIBE SELECT * FROM read_json('${f}', format = 'array', sample_size = -1)`);
});
conn.closeSync();
db.closeSync();
rmSync(work, { recursive: true, force: true });

const us = Object.fromEntries(results.map((r) => [r.step, r.us]));
const get = (prefix) => results.find((r) => r.step.startsWith(prefix)).us;
const gatewayToday = get('JSON.parse + checks');
const parseOnly = get('JSON.parse of the body');
const seal = get('seal: hot rows sorted by timestamp → DuckDB');
console.log('\nper-row budget at 100,000 rows per CPU-second: 10.00 µs (gateway + worker, excluding HTTP, gRPC and GC threads)');
const bytesAsSent = get('checks + typing + NDJSON from the bytes');
const termIndex = get("seal: the segment's term index");
const designs = [
  [
    'today: bytes as sent (0028); WAL hot table; DuckDB seal; term index',
    bytesAsSent + get('NDJSON → hot table in the DuckDB') + seal + termIndex,
  ],
  ['general path: gateway parses + encodes NDJSON; WAL hot table', gatewayToday + get('NDJSON → hot table in the DuckDB') + seal],
  ['NDJSON into an in-memory hot table + own raw log', gatewayToday + get('NDJSON → in-memory') + seal],
  ['gateway parses to check only; worker reads the raw body', parseOnly + get('raw request body') + seal],
  ['no gateway parse; DuckDB finds types (group structure)', get('json_group_structure') + get('raw request body') + seal],
];
for (const [name, total] of designs) console.log(`${name.padEnd(64)} ${total.toFixed(2).padStart(6)} µs/row`);
void us;
