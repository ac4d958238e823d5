// Resident memory of a worker's storage after loading and sealing the query bench's rows, and
// after queries over them, for the engine built in worker/dist or another build of it:
//
//   node bench/storage/seal-memory.mjs [--rows 2000000] [--engine path/to/worker/dist]
//
// Run once per engine (each in its own process: RSS is per process). Used to compare DuckDB
// segment files (decision 0025: their blocks stay in the account's buffer pool once read) with the
// Parquet segments of an earlier build (compiled aside, e.g. .bench-data/pre-seg-worker).
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createLogger } from '@strata/common';
import { ACCOUNT, DATA, loadRows, numberArg, QUERIES, SCHEMA } from '../query/bench-cluster.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROWS = numberArg('rows', 2_000_000);
const i = process.argv.indexOf('--engine');
const dist = i >= 0 ? path.resolve(process.argv[i + 1]) : path.join(ROOT, 'worker', 'dist');
const { StorageEngine } = await import(pathToFileURL(path.join(dist, 'src/storage/storage-engine.js')).href);
const { FreeSpaceGuard } = await import(pathToFileURL(path.join(dist, 'src/storage/free-space-guard.js')).href);
const log = createLogger('bench', { level: 'silent' });
const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const dir = path.join(DATA, 'seal-memory');
const mb = () => (process.memoryUsage().rss / 1e6).toFixed(0);
const engine = await StorageEngine.open({
  dataPath: dir,
  log,
  guard,
  tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 },
});
try {
  await loadRows(engine, ROWS, 0, 1);
  const segments = await engine.listSegments(ACCOUNT);
  console.log(`${dist}: ${ROWS} rows in ${segments.length} segments; RSS after loading ${mb()} MB`);
  for (let round = 0; round < 2; round++)
    for (const q of QUERIES) {
      const scan = await engine.openScan(ACCOUNT, SCHEMA);
      try {
        (await scan.connection.runAndReadAll(q.sql(scan.relation))).getRows();
      } finally {
        await scan.release();
      }
    }
  console.log(`RSS after the query set twice ${mb()} MB (JS heap ${(process.memoryUsage().heapUsed / 1e6).toFixed(0)} MB)`);
} finally {
  await engine.close();
  rmSync(DATA, { recursive: true, force: true });
}
