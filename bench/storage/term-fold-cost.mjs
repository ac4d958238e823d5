// The price of stored term folds (decision 0045) on the query bench's rows, for two builds of the
// worker (e.g. main compiled aside, and this one), interleaved: each round loads the same rows into
// a fresh storage engine of each build (one seal per 1 M rows, as the query bench loads), timing
// the seals (wall and process CPU), then compacts all segments into one, timing it; and reports
// the bytes of the sealed and of the compacted segments.
//
//   node bench/storage/term-fold-cost.mjs --engines /path/a/worker/dist,/path/b/worker/dist [--rows 2000000] [--rounds 2]
import { rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger } from '@strata/common';
import { ACCOUNT, DATA, loadRows, median, numberArg, SCHEMA } from '../query/bench-cluster.mjs';

const ROWS = numberArg('rows', 2_000_000);
const ROUNDS = numberArg('rounds', 2);
const at = process.argv.indexOf('--engines');
if (at < 0) throw new Error('--engines a,b (worker dist directories) is required');
const engines = process.argv[at + 1].split(',').map((d) => path.resolve(d));
const log = createLogger('bench', { level: 'silent' });
const results = new Map(
  engines.map((e) => [e, { seal: [], sealCpu: [], sealedMb: [], compact: [], compactCpu: [], compactedMb: [] }]),
);

const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

async function once(dist, round) {
  const { StorageEngine } = await import(pathToFileURL(path.join(dist, 'src/storage/storage-engine.js')).href);
  const { FreeSpaceGuard } = await import(pathToFileURL(path.join(dist, 'src/storage/free-space-guard.js')).href);
  const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
  await guard.check();
  const dir = path.join(DATA, `term-fold-cost-${round}-${engines.indexOf(dist)}`);
  const engine = await StorageEngine.open({
    dataPath: dir,
    log,
    guard,
    tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 },
  });
  const r = results.get(dist);
  try {
    let seal = 0;
    let sealCpu = 0;
    // The seals alone: loadRows calls sealAll after every 1 M rows.
    const timed = new Proxy(engine, {
      get(target, prop) {
        if (prop !== 'sealAll') return Reflect.get(target, prop).bind(target);
        return async () => {
          const t = performance.now();
          const c = cpuNow();
          await target.sealAll();
          seal += performance.now() - t;
          sealCpu += cpuNow() - c;
        };
      },
    });
    await loadRows(timed, ROWS, 0, 1);
    const segments = await engine.listSegments(ACCOUNT);
    r.seal.push(seal);
    r.sealCpu.push(sealCpu * 1000);
    r.sealedMb.push(segments.reduce((n, s) => n + s.byteSize, 0) / 1e6);
    const t = performance.now();
    const c = cpuNow();
    const merged = await engine.compact({ accountId: ACCOUNT, schema: SCHEMA, segmentIds: segments.map((s) => s.segmentId) });
    r.compact.push(performance.now() - t);
    r.compactCpu.push((cpuNow() - c) * 1000);
    r.compactedMb.push(merged.byteSize / 1e6);
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  for (let round = 0; round < ROUNDS; round++) for (const dist of engines) await once(dist, round);
  const f = (xs) => `${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)})`;
  const g = (xs) => median(xs).toFixed(1);
  console.log(`${ROWS.toLocaleString('en')} query-bench rows, ${ROUNDS} rounds interleaved (medians, min–max)`);
  for (const [dist, r] of results)
    console.log(
      `${dist}\n  seals ${f(r.seal)} ms wall, ${f(r.sealCpu)} ms CPU, sealed ${g(r.sealedMb)} MB; compaction ${f(r.compact)} ms wall, ${f(r.compactCpu)} ms CPU, ${g(r.compactedMb)} MB`,
    );
} finally {
  rmSync(DATA, { recursive: true, force: true });
}
