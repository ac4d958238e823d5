// Interleaved A/B of a top-N on one worker through the gateway (no HTTP): the whole-query
// statement run per scan part (decision 0035) against the top-N fragment through the merge
// database (decision 0018), same process, same plan. Medians and spread of --runs.
//
//   npm run build && node bench/query/top-n-ab.mjs [--rows 1000000] [--runs 15] [--rounds 3]
import { rmSync } from 'node:fs';
import { distributedRunner, MergeDatabase, planQuery, SchemaCatalogSource } from '@strata/gateway';
import { executePlanColumnar, queryResultJson } from '../../gateway/dist/src/query/engine.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 15);
const ROUNDS = numberArg('rounds', 3);
const q = QUERIES.find((x) => x.name.startsWith('top 10'));
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
    ['whole statement per part', () => runner()],
    [
      'fragment + merge database',
      () => {
        const r = runner();
        return (fragment, signal) => r(fragment, signal);
      },
    ],
  ];
  const answers = [];
  for (const [, make] of variants) {
    const r = await executePlanColumnar(planQuery(q.kql, CATALOG, { storageTime: true }), make(), { mergeDatabase: merge });
    answers.push(JSON.stringify(queryResultJson(r)));
  }
  if (answers[0] !== answers[1]) throw new Error('the two paths answered differently');
  for (let round = 1; round <= ROUNDS; round++) {
    const samples = variants.map(() => []);
    for (let i = 0; i < RUNS; i++)
      for (const [k, [, make]] of variants.entries()) {
        const t = performance.now();
        const r = await executePlanColumnar(planQuery(q.kql, CATALOG, { storageTime: true }), make(), { mergeDatabase: merge });
        queryResultJson(r);
        samples[k].push(performance.now() - t);
      }
    const [a, b] = samples.map(median);
    console.log(
      `round ${round} (${ROWS.toLocaleString('en')} rows): ${variants
        .map(
          ([n], k) =>
            `${n} ${median(samples[k]).toFixed(2)} ms (${Math.min(...samples[k]).toFixed(1)}–${Math.max(...samples[k]).toFixed(1)})`,
        )
        .join(', ')}; ratio ${(a / b).toFixed(2)}`,
    );
  }
} finally {
  agent.destroy();
  await merge.close();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
