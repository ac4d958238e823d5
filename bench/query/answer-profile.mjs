// CPU profile of one bench query answered --runs times through HTTP on an in-process one-worker
// (or --workers 2) cluster, the profiler started only after the load (node:inspector), so the
// profile holds the query path alone: gateway, worker, HTTP and the bench's client in one process.
// Writes the .cpuprofile and prints self and inclusive time per function in ms per query.
//
//   npm run build && node bench/query/answer-profile.mjs [--rows 1000000] [--runs 300] [--query 2] [--workers 1] [--out /tmp/answer.cpuprofile]
import { rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { agent, DATA, loadRows, numberArg, QUERIES, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 300);
const QUERY = numberArg('query', 2);
const WORKERS = numberArg('workers', 1);
const outAt = process.argv.indexOf('--out');
const OUT = outAt > 0 ? process.argv[outAt + 1] : '/tmp/answer.cpuprofile';

/** Self and inclusive time per function (name, file, line), ms per query, from a V8 CPU profile. */
function summary(profile, runs) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const ticks = new Map();
  for (const [i, id] of profile.samples.entries()) ticks.set(id, (ticks.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  const key = (n) =>
    `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(node_modules|dist)\//, '')}:${n.callFrame.lineNumber + 1}`;
  const self = new Map();
  const inclusive = new Map();
  for (const [id, us] of ticks) {
    const k = key(byId.get(id));
    self.set(k, (self.get(k) ?? 0) + us);
    const seen = new Set();
    for (let x = id; x !== undefined; x = parent.get(x)) {
      const kk = key(byId.get(x));
      if (seen.has(kk)) continue;
      seen.add(kk);
      inclusive.set(kk, (inclusive.get(kk) ?? 0) + us);
    }
  }
  const top = (m, n) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `${(us / 1000 / runs).toFixed(3).padStart(8)} ms  ${k}`)
      .join('\n');
  return `-- self, ms per query\n${top(self, 40)}\n-- inclusive, ms per query\n${top(inclusive, 70)}`;
}

let cluster;
try {
  cluster = await startCluster('profile', WORKERS, {});
  for (const [i, w] of cluster.workers.entries()) await loadRows(w.storage, ROWS, i, WORKERS);
  const { kql } = QUERIES[QUERY];
  for (let i = 0; i < 50; i++) await cluster.query(kql);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
  const t = performance.now();
  for (let i = 0; i < RUNS; i++) await cluster.query(kql);
  const elapsed = performance.now() - t;
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  writeFileSync(OUT, JSON.stringify(profile));
  console.log(`${kql}\n${RUNS} runs, ${(elapsed / RUNS).toFixed(2)} ms per query (profiled); profile in ${OUT}`);
  console.log(summary(profile, RUNS));
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
