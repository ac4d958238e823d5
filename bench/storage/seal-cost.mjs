// What one seal costs (the account's write gate is held meanwhile, so group commits wait): 15
// seals of N fresh hot rows each, for the engine built at a given worker/dist (e.g. the current one
// and an earlier build compiled aside): median, min and max. Decision 0025 compares DuckDB segment
// files with the Parquet segments of the previous engine.
//
//   node bench/storage/seal-cost.mjs <worker dist directory> [rows per seal, 3000]
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '@strata/common';

const dist = path.resolve(process.argv[2]);
const { StorageEngine } = await import(pathToFileURL(path.join(dist, 'src/storage/storage-engine.js')).href);
const { FreeSpaceGuard } = await import(pathToFileURL(path.join(dist, 'src/storage/free-space-guard.js')).href);
const log = createLogger('b', { level: 'silent' });
const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const dir = `/tmp/seal-cost-${process.pid}`;
const engine = await StorageEngine.open({
  dataPath: dir,
  log,
  guard,
  tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 },
});
const A = '00000000-0000-0000-0000-0000000000a1';
const rows = Number(process.argv[3] ?? 3000);
const times = [];
for (let r = 0; r < 15; r++) {
  const lines = [];
  for (let i = 0; i < rows; i++)
    lines.push(
      JSON.stringify({
        '@ts': (Date.UTC(2024, 0, 1) + r * 100000 + i) * 1000,
        '@id': crypto.randomUUID(),
        seq: i,
        msg: `m-${i}-${r}`,
      }),
    );
  await engine.append({
    accountId: A,
    parts: [
      {
        schema: 'S',
        columns: [
          { name: 'seq', type: 'Int64' },
          { name: 'msg', type: 'String' },
        ],
        rows: Buffer.from(lines.join('\n')),
        rowCount: rows,
      },
    ],
    inflowTimestampUs: 0,
    inflowHost: 'h',
    sourceAddress: '127.0.0.1',
    agent: null,
  });
  const t = performance.now();
  await engine.sealAll();
  times.push(performance.now() - t);
}
times.sort((a, b) => a - b);
console.log(
  `${path.basename(path.dirname(dist))}/${path.basename(dist)} ${rows} rows/seal: median seal ${times[7].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[14].toFixed(1)})`,
);
await engine.close();
rmSync(dir, { recursive: true, force: true });
