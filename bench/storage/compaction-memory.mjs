// Whether a compaction of many segments fits an account's DuckDB memory limit, and what it
// costs, for the engine built in worker/dist or another build of it (decision 0040):
//
//   node bench/storage/compaction-memory.mjs [--rows 5000000] [--memory 1GB] [--window-rows N] [--engine path/to/worker/dist]
//
// Loads the query bench's rows (one segment per ~500k rows), then compacts all segments of the
// table in one job, as the master plans it when they are small. Before decision 0040 the rewrite
// sorted the UNION ALL of every segment in one statement, and DuckDB 1.5.6's sort over several
// attached files did not spill: 30 M rows (60 segments) failed at the 4.4 GB default limit.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createLogger } from '@strata/common';
import { ACCOUNT, DATA, loadRows, numberArg, SCHEMA } from '../query/bench-cluster.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROWS = numberArg('rows', 5_000_000);
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
};
const MEMORY = arg('memory', '1GB');
const WINDOW_ROWS = arg('window-rows');
const dist = path.resolve(arg('engine', path.join(ROOT, 'worker', 'dist')));
const { StorageEngine } = await import(pathToFileURL(path.join(dist, 'src/storage/storage-engine.js')).href);
const { FreeSpaceGuard } = await import(pathToFileURL(path.join(dist, 'src/storage/free-space-guard.js')).href);
const log = createLogger('bench', { level: 'silent' });
const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const dir = path.join(DATA, 'compaction-memory');
const mb = () => (process.memoryUsage().rss / 1e6).toFixed(0);
const engine = await StorageEngine.open({
  dataPath: dir,
  log,
  guard,
  tuning: {
    maintenanceIntervalMs: 3_600_000,
    sealAgeMs: 3_600_000,
    accountMemoryLimit: MEMORY,
    ...(WINDOW_ROWS ? { rewriteWindowRows: Number(WINDOW_ROWS) } : {}),
  },
});
try {
  await loadRows(engine, ROWS, 0, 1);
  const segments = await engine.listSegments(ACCOUNT);
  console.log(`${dist}: ${ROWS} rows in ${segments.length} segments, memory_limit ${MEMORY}; RSS after loading ${mb()} MB`);
  const cpu = process.cpuUsage();
  const started = performance.now();
  try {
    const merged = await engine.compact({ accountId: ACCOUNT, schema: SCHEMA, segmentIds: segments.map((s) => s.segmentId) });
    const used = process.cpuUsage(cpu);
    console.log(
      `compacted into one segment of ${merged.rowCount} rows (${(merged.byteSize / 1e6).toFixed(1)} MB) in ${((performance.now() - started) / 1000).toFixed(1)} s, ` +
        `${((used.user + used.system) / 1e6).toFixed(1)} CPU-s; RSS now ${mb()} MB`,
    );
  } catch (err) {
    console.log(
      `compaction FAILED after ${((performance.now() - started) / 1000).toFixed(1)} s: ${String(err.message).split('\n')[0]}`,
    );
  }
} finally {
  await engine.close();
  rmSync(DATA, { recursive: true, force: true });
}
