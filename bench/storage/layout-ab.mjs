// A/B of the storage engine before and after per-account instances (decision 0015) in one
// process, interleaved, so the machine's load hits both alike: appends (µs per row, including
// the worker's row checks) and scans (open a snapshot, run a statement, release: what a query
// fragment costs the storage layer). The "before" engine is the worker/src/storage of commit
// d247ade compiled into .bench-data/old-worker (see the commands below); "after" is this tree's.
//
//   mkdir -p .bench-data/old-worker/src/storage && for f in $(git ls-tree --name-only d247ade worker/src/storage/); do
//     git show d247ade:$f > .bench-data/old-worker/src/storage/$(basename $f); done
//   git show d247ade:worker/src/worker-metrics.ts > .bench-data/old-worker/src/worker-metrics.ts
//   (a tsconfig extending ../../tsconfig.base.json with outDir dist; `npx tsc -p .bench-data/old-worker`;
//    in dist/worker-metrics.js register the metrics nowhere: `const registers = [];`)
//   npm run build && node bench/storage/layout-ab.mjs [--rows 500000] [--runs 201]
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger } from '@strata/common';
import { FreeSpaceGuard } from '../../worker/dist/src/storage/free-space-guard.js';
import { StorageEngine as After } from '../../worker/dist/src/storage/storage-engine.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { StorageEngine: Before } = await import(path.join(root, '.bench-data/old-worker/dist/storage/storage-engine.js'));
const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '500000' }, runs: { type: 'string', default: '201' } },
});
const ROWS = Number(args.rows);
const RUNS = Number(args.runs);
const BATCH = 2_000;
const ACCOUNT = '00000000-0000-4000-8000-000000000001';
const log = createLogger('bench', { level: 'warn' });
const work = path.join(root, '.bench-data', `layout-ab-${Date.now()}`);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const END = Date.UTC(2026, 0, 8);
const SPAN = 7 * 24 * 3600 * 1000;
const LEVELS = ['info', 'warn', 'error', 'debug'];

function batch(offset) {
  const lines = [];
  for (let i = offset; i < offset + BATCH; i++) {
    const ts = END - SPAN + Math.floor((i / ROWS) * SPAN);
    lines.push(
      JSON.stringify({
        '@ts': ts * 1000,
        '@id': randomUUID(),
        host: `web-${i % 17}`,
        level: LEVELS[i % 4],
        latency: (i % 997) + 0.5,
        status: 200 + (i % 5),
        msg: `GET /api/items/${i % 1000} took ${i % 997} ms`,
        attrs: { region: `r-${i % 3}`, tags: [i % 7, i % 11] },
      }),
    );
  }
  return {
    accountId: ACCOUNT,
    parts: [
      {
        schema: 'app.logs',
        columns: [
          { name: 'host', type: 'String' },
          { name: 'level', type: 'String' },
          { name: 'latency', type: 'Float64' },
          { name: 'status', type: 'Int64' },
          { name: 'msg', type: 'String' },
          { name: 'attrs', type: 'Dynamic' },
        ],
        rows: Buffer.from(lines.join('\n')),
        rowCount: BATCH,
      },
    ],
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: 'bench',
    sourceAddress: '127.0.0.1',
    agent: null,
  };
}

const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const tuning = { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 };
const engines = {
  before: await Before.open({ dataPath: path.join(work, 'before'), log, guard, cores: 2, tuning }),
  after: await After.open({ dataPath: path.join(work, 'after'), log, guard, cores: 2, tuning }),
};
const names = Object.keys(engines);
try {
  const appendMs = { before: 0, after: 0 };
  for (let offset = 0; offset < ROWS; offset += BATCH) {
    const input = batch(offset);
    // Alternate which goes first, so neither always meets a warmer cache.
    for (const name of (offset / BATCH) % 2 ? names : [...names].reverse()) {
      const t = performance.now();
      await engines[name].append(input);
      appendMs[name] += performance.now() - t;
    }
    // Seal as the row threshold would, leaving the last 10 % hot (not timed).
    if ((offset + BATCH) % 250_000 === 0 && offset + BATCH < ROWS * 0.9)
      for (const e of Object.values(engines)) await e.sealAll();
  }
  for (const name of names)
    console.log(`append ${name}: ${((appendMs[name] * 1000) / ROWS).toFixed(2)} µs per row (${BATCH}-row requests)`);

  const lastHour = `"timestamp" >= make_timestamp(${(END - 3600_000) * 1000}::BIGINT)`;
  const queries = [
    ['count, last hour', (r) => `SELECT count(*) FROM ${r} WHERE ${lastHour}`],
    ['count, all', (r) => `SELECT count(*) FROM ${r}`],
    ['count by level, all', (r) => `SELECT level, count(*) FROM ${r} GROUP BY level`],
    ['avg latency by host, last hour', (r) => `SELECT host, avg(latency) FROM ${r} WHERE ${lastHour} GROUP BY host`],
  ];
  for (const [label, sqlOf] of queries) {
    const samples = { before: [], after: [] };
    for (let i = 0; i < RUNS; i++) {
      for (const name of i % 2 ? names : [...names].reverse()) {
        const t = performance.now();
        const scan = await engines[name].openScan(ACCOUNT, 'app.logs');
        (await scan.connection.runAndReadAll(sqlOf(scan.relation))).getRows();
        await scan.release();
        samples[name].push(performance.now() - t);
      }
    }
    console.log(
      `${label}: before ${median(samples.before).toFixed(2)} ms, after ${median(samples.after).toFixed(2)} ms (medians of ${RUNS})`,
    );
  }
} finally {
  for (const e of Object.values(engines)) await e.close();
  rmSync(work, { recursive: true, force: true });
}
