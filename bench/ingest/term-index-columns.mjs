// What the term index (decisions 0026, 0034, 0037) costs per String column, for the engine built
// in worker/dist or another build of it (a scratch copy of main, to compare interleaved):
//
//   npm run build && node --expose-gc bench/ingest/term-index-columns.mjs [--rows 250000] [--large-rows 2500000] [--engine path/to/repo]
//
//  - A seal: the ingest bench's entries (bench-entries.mjs) with the stamped String columns, one
//    segment of --rows rows (the worker seals at 250,000), buildTermIndex per column and whole.
//  - A compacted segment past the bound: --large-rows rows of a nearly unique trace id and a user
//    id of ~1 M values; at the default 2,000,000 keys a column (MAX_KEYS_PER_COLUMN) the trace id
//    gets no filter and the user id one (decision 0047: no second pass once the keys are too many).
//
// CPU µs a row of this process (JS thread + DuckDB on one thread, as the worker's seal); data goes
// to .bench-data/ and is removed.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { entry } from './bench-entries.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '250000' },
    'large-rows': { type: 'string', default: '2500000' },
    engine: { type: 'string', default: root },
  },
});
const ROWS = Number(args.rows);
const LARGE = Number(args['large-rows']);
const engine = path.resolve(args.engine);
const load = (p) => import(pathToFileURL(path.join(engine, 'worker', 'dist', 'src', 'storage', p)).href);
const { buildTermIndex } = await load('term-index.js');
const { attachSegmentFiles, segmentFileName, writeSegmentFile } = await load('segment-format.js');

const work = path.join(root, '.bench-data', `term-columns-${Date.now()}`);
mkdirSync(work, { recursive: true });
const db = await DuckDBInstance.create(path.join(work, 'hot.duckdb'), { threads: '1' });
const conn = await db.connect();
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
const segmentOf = async (n, sql) => {
  const file = path.join(work, segmentFileName(n, '00000000-0000-4000-8000-00000000000' + n, 'duckdb'));
  mkdirSync(path.dirname(file), { recursive: true });
  await writeSegmentFile(conn, sql, file, 'duckdb');
  await attachSegmentFiles(conn, [file]);
  return file;
};
const timed = async (rows, fn) => {
  global.gc?.();
  const c0 = cpu();
  const out = await fn();
  return { us: ((cpu() - c0) / rows) * 1e6, out };
};

console.log(`engine: ${engine}`);
// ── a seal of the ingest bench's rows ───────────────────────────────────────────────────────────
const t0 = Date.UTC(2026, 0, 1);
const lines = [];
for (let i = 0; i < ROWS; i++) {
  const e = entry(i, t0);
  lines.push(JSON.stringify({ ts: e.timestamp, ...e.data }));
}
const ndjson = path.join(work, 'rows.ndjson');
writeFileSync(ndjson, lines.join('\n'));
lines.length = 0;
const sealed = await segmentOf(
  1,
  `SELECT ts::TIMESTAMP AS "timestamp", 'gateway-host' AS "__INFLOW_HOST", '127.0.0.1' AS "__INFLOW_SOURCE_ADDRESS",
     'bench/1.0' AS "__INFLOW_AGENT", host, service, level, method, path, userId, traceId
   FROM read_json('${ndjson}', format = 'newline_delimited') ORDER BY "timestamp"`,
);
const names = ['__INFLOW_HOST', '__INFLOW_SOURCE_ADDRESS', '__INFLOW_AGENT', 'host', 'service', 'level', 'method'];
names.push('path', 'userId', 'traceId');
console.log(`\na seal of ${ROWS} rows (CPU µs a row; the second of two runs):`);
for (let run = 0; run < 2; run++) {
  const per = [];
  for (const name of names) {
    const { us, out } = await timed(ROWS, () => buildTermIndex(conn, sealed, 'duckdb', [{ name, type: 'String' }]));
    per.push([name, us, out.get(name)?.keyCount]);
  }
  const all = await timed(ROWS, () =>
    buildTermIndex(
      conn,
      sealed,
      'duckdb',
      names.map((name) => ({ name, type: 'String' })),
    ),
  );
  if (run === 0) continue;
  for (const [name, us, keys] of per)
    console.log(`  ${name.padEnd(26)} ${us.toFixed(3).padStart(6)}  ${keys === undefined ? 'no filter' : `${keys} keys`}`);
  console.log(`  ${'every String column'.padEnd(26)} ${all.us.toFixed(3).padStart(6)}`);
}

// ── a compacted segment past the bound ──────────────────────────────────────────────────────────
const large = await segmentOf(
  2,
  `SELECT make_timestamp(i) AS "timestamp",
     lpad(to_hex((i * 2654435761) % 4294967296), 8, '0') || lpad(to_hex(i), 8, '0') AS traceId,
     'u-' || ((i * 2654435761) % 1000003) AS userId
   FROM range(${LARGE}) t(i)`,
);
console.log(`\na segment of ${LARGE} rows (CPU µs a row):`);
for (const name of ['traceId', 'userId']) {
  const { us, out } = await timed(LARGE, () => buildTermIndex(conn, large, 'duckdb', [{ name, type: 'String' }]));
  const keys = out.get(name)?.keyCount;
  console.log(`  ${name.padEnd(26)} ${us.toFixed(3).padStart(6)}  ${keys === undefined ? 'no filter' : `${keys} keys`}`);
}
conn.closeSync();
db.closeSync();
rmSync(work, { recursive: true, force: true });
