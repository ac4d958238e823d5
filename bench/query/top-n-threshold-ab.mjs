// Interleaved A/B of top-N queries on one worker through the gateway (no HTTP): the plan as made
// (its first key's source column named, so the worker runs it through a threshold, decision 0038)
// against the same plan without the source column (each scan part's top-N, decision 0035), same
// process, same data; answers compared. Medians and spread of --runs per round.
//
//   npm run build && node bench/query/top-n-threshold-ab.mjs [--rows 1000000] [--runs 15] [--rounds 3]
import { rmSync } from 'node:fs';
import { distributedRunner, MergeDatabase, planQuery, SchemaCatalogSource } from '@strata/gateway';
import { executePlanColumnar, queryResultJson } from '../../gateway/dist/src/query/engine.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 15);
const ROUNDS = numberArg('rounds', 3);
const TOP = [
  ['top 10 by latency', QUERIES.find((x) => x.name.startsWith('top 10')).kql],
  ['top 10 by latency, errors', `${SCHEMA} | where level == 'Error' | top 10 by latencyMs`],
  ['top 10 by latency, info (guess fails)', `${SCHEMA} | where level == 'Info' | top 10 by latencyMs`],
  ['latest 100', `${SCHEMA} | top 100 by timestamp`],
  ['top 10 by status (ties)', `${SCHEMA} | top 10 by status`],
];

/** The plan with no source column on its top-N (the path before decision 0038). */
function unsourced(plan) {
  const strip = (s) => {
    if (!s?.branchTopN) return s;
    const { source: _, ...topN } = s.branchTopN;
    return { ...s, branchTopN: topN };
  };
  return { ...plan, fragments: plan.fragments.map(strip), ...(plan.single ? { single: strip(plan.single) } : {}) };
}

let cluster;
const merge = new MergeDatabase();
try {
  cluster = await startCluster('one', 1, {});
  await loadRows(cluster.workers[0].storage, ROWS, 0, 1);
  await cluster.query(QUERIES[0].kql);
  const CATALOG = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  const runner = () =>
    distributedRunner({ coordinator: cluster.coordinator, channels: cluster.channels, accountId: ACCOUNT, timeoutMs: 60_000 });
  const variants = [
    ['threshold', (kql) => planQuery(kql, CATALOG, { storageTime: true })],
    ['per part', (kql) => unsourced(planQuery(kql, CATALOG, { storageTime: true }))],
  ];
  const keysOf = (xs) => JSON.stringify(xs);
  for (const [name, kql] of TOP) {
    const answers = [];
    for (const [, plan] of variants) {
      const r = await executePlanColumnar(plan(kql), runner(), { mergeDatabase: merge });
      answers.push(queryResultJson(r));
    }
    const sourced = planQuery(kql, CATALOG, { storageTime: true });
    const named = (sourced.single ?? sourced.fragments[0])?.branchTopN?.source;
    // Ties make rows open: compare the key column's values (the answers hold the same columns).
    const col = (kql.match(/by (\w+)/) ?? [])[1];
    const values = (text) => JSON.parse(text).results.map((row) => row[col]);
    if (keysOf(values(answers[0])) !== keysOf(values(answers[1])))
      throw new Error(`${name}: the two paths answered different keys`);
    for (let round = 1; round <= ROUNDS; round++) {
      const samples = variants.map(() => []);
      for (let i = 0; i < RUNS; i++)
        for (const [k, [, plan]] of variants.entries()) {
          const t = performance.now();
          const r = await executePlanColumnar(plan(kql), runner(), { mergeDatabase: merge });
          queryResultJson(r);
          samples[k].push(performance.now() - t);
        }
      const [a, b] = samples.map(median);
      console.log(
        `${name} (source ${named ?? 'none'}), round ${round} (${ROWS.toLocaleString('en')} rows): ${variants
          .map(
            ([n], k) =>
              `${n} ${median(samples[k]).toFixed(2)} ms (${Math.min(...samples[k]).toFixed(1)}–${Math.max(...samples[k]).toFixed(1)})`,
          )
          .join(', ')}; ratio ${(a / b).toFixed(2)}`,
      );
    }
  }
} finally {
  agent.destroy();
  await merge.close();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
