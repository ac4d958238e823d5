// What the block filters of one large compacted segment cost to build (decision 0042): time, CPU,
// the JS memory the pass holds, and the catalog bytes of the filters, window by window (the
// build's default, term-blocks.ts WINDOW_BLOCKS) against one window over the whole segment (the
// pass of decision 0037, which held every block's keys until the end), interleaved.
//
//   node --expose-gc bench/storage/term-blocks-cost.mjs [--rows 5000000] [--runs 3]
//
// Loads the query bench's rows (one segment per ~500k rows), compacts them into one segment as the
// master plans it, then builds the message column's block filters from the merged file.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { createLogger } from '@strata/common';
import { FreeSpaceGuard } from '../../worker/dist/src/storage/free-space-guard.js';
import { attachSegmentFiles, segmentSources } from '../../worker/dist/src/storage/segment-format.js';
import { StorageEngine } from '../../worker/dist/src/storage/storage-engine.js';
import { columnBlockFilters, TERM_BLOCK_ROWS, WINDOW_BLOCKS } from '../../worker/dist/src/storage/term-blocks.js';
import { buildTermIndex, MAX_KEYS_PER_COLUMN } from '../../worker/dist/src/storage/term-index.js';
import { ACCOUNT, COLUMNS, DATA, loadRows, numberArg, SCHEMA } from '../query/bench-cluster.mjs';

if (!global.gc) throw new Error('run with node --expose-gc');
const ROWS = numberArg('rows', 5_000_000);
const RUNS = numberArg('runs', 3);
const log = createLogger('bench', { level: 'silent' });
const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const dir = path.join(DATA, 'term-blocks-cost');
const engine = await StorageEngine.open({
  dataPath: dir,
  log,
  guard,
  tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 },
});
let merged;
try {
  await loadRows(engine, ROWS, 0, 1);
  const segments = await engine.listSegments(ACCOUNT);
  const cpu = process.cpuUsage();
  const t = performance.now();
  merged = await engine.compact({ accountId: ACCOUNT, schema: SCHEMA, segmentIds: segments.map((s) => s.segmentId) });
  const used = process.cpuUsage(cpu);
  console.log(
    `${ROWS.toLocaleString('en')} rows: ${segments.length} segments compacted into one of ${(merged.byteSize / 1e6).toFixed(0)} MB, ${Math.ceil(merged.rowCount / TERM_BLOCK_ROWS)} blocks, ` +
      `in ${((performance.now() - t) / 1000).toFixed(1)} s, ${((used.user + used.system) / 1e6).toFixed(1)} CPU-s (with its term index)`,
  );
} finally {
  await engine.close();
}
const file = path.join(dir, 'accounts', ACCOUNT, 'segments', merged.fileName);
const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const conn = await db.connect();
try {
  await attachSegmentFiles(conn, [file]);
  const [source] = segmentSources([file], 'duckdb');
  /** One build: wall ms, CPU ms, the peak of JS heap + array buffers above the start, filter bytes. */
  const measure = async (windowBlocks) => {
    global.gc();
    const base = process.memoryUsage();
    const held = (m) => m.heapUsed + m.arrayBuffers - base.heapUsed - base.arrayBuffers;
    let peak = 0;
    const timer = setInterval(() => {
      peak = Math.max(peak, held(process.memoryUsage()));
    }, 5);
    const cpu = process.cpuUsage();
    const t = performance.now();
    // One window over the whole segment: no bound on the summed keys, as a pass that holds them all.
    const pass = await columnBlockFilters(
      conn,
      source,
      'message',
      MAX_KEYS_PER_COLUMN * (windowBlocks ? 1 : 1000),
      windowBlocks ?? 1e9,
    );
    const wall = performance.now() - t;
    const used = process.cpuUsage(cpu);
    clearInterval(timer);
    peak = Math.max(peak, held(process.memoryUsage()));
    const r = pass.kind === 'filters' ? pass : undefined;
    const bytes = r ? r.blocks.reduce((n, b) => n + b.filter.bits.length, 0) : 0;
    return {
      wall,
      cpu: (used.user + used.system) / 1000,
      peakMB: peak / 1e6,
      bytes,
      keys: r?.whole.size,
      blocks: r?.blocks.length,
    };
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const out = { windowed: [], whole: [] };
  for (let i = 0; i < RUNS; i++) {
    out.windowed.push(await measure(WINDOW_BLOCKS));
    out.whole.push(await measure(undefined));
  }
  // What the compaction's term index costs over all String columns (COLUMNS of the bench).
  const cpu = process.cpuUsage();
  const t = performance.now();
  const index = await buildTermIndex(conn, file, 'duckdb', COLUMNS);
  const used = process.cpuUsage(cpu);
  const blockBytes = [...index.values()].reduce((n, f) => n + (f.blocks ?? []).reduce((m, b) => m + b.filter.bits.length, 0), 0);
  console.log(
    `term index of all ${index.size} String columns: ${(performance.now() - t).toFixed(0)} ms, ${((used.user + used.system) / 1000).toFixed(0)} CPU-ms, block filters ${(blockBytes / 1e6).toFixed(1)} MB (${[...index].map(([c, f]) => `${c} ${f.blocks?.length ?? 0}`).join(', ')} blocks)`,
  );
  for (const [name, runs] of Object.entries(out)) {
    const f = (k) => median(runs.map((r) => r[k]));
    console.log(
      `${name.padEnd(9)} (${name === 'windowed' ? 'windows of 64 blocks' : 'one window'}): ${f('wall').toFixed(0)} ms, ${f('cpu').toFixed(0)} CPU-ms, peak JS memory ${f('peakMB').toFixed(0)} MB; ${runs[0].blocks} block filters, ${(runs[0].bytes / 1e6).toFixed(1)} MB, ${runs[0].keys?.toLocaleString('en')} segment keys`,
    );
  }
} finally {
  conn.closeSync();
  db.closeSync();
  rmSync(DATA, { recursive: true, force: true });
}
