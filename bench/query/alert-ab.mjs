// A/B of alert evaluation (decision 0027) in one process, interleaved: the same rule evaluated
// through an earlier build's evaluateRule and QueryService ("before", the whole tree of a commit
// built into .bench-data/base) and this tree's ("after"), against one in-process cluster of this
// tree (embedded coordinator). Before 0027 an evaluation planned full statements (the time
// conditions and the rule's window on every segment); after, the scan applies them.
//
//   B=.bench-data/base; mkdir -p $B && git archive 0f603ca | tar -x -C $B && mkdir $B/node_modules
//   for e in node_modules/* node_modules/.bin; do n=$(basename $e); [ $n = @strata ] || ln -s $PWD/$e $B/node_modules/$n; done
//   mkdir $B/node_modules/@strata && for p in common deploy gateway master proto test worker; do
//     ln -s ../../$p $B/node_modules/@strata/$p; done
//   (cd $B/proto && npx buf generate) && (cd $B && npx tsc -b tsconfig.build.json)
//   npm run build && node bench/query/alert-ab.mjs [--rows 2000000] [--runs 9]
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCOUNT, DATA, loadRows, numberArg, startCluster } from './bench-cluster.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ROWS = numberArg('rows', 2_000_000);
const RUNS = numberArg('runs', 9);

async function variant(root) {
  const { evaluateRule } = await import(path.join(root, 'gateway/dist/src/alerting/alert-evaluation.js'));
  const { QueryService } = await import(path.join(root, 'gateway/dist/src/query/query-service.js'));
  const { SchemaCatalogSource } = await import(path.join(root, 'gateway/dist/src/query/cluster/schema-catalog.js'));
  const { warmQueryEngine } = await import(path.join(root, 'gateway/dist/src/query/engine.js'));
  await warmQueryEngine();
  return { evaluateRule, QueryService, SchemaCatalogSource };
}

const variants = { before: await variant(path.join(ROOT, '.bench-data/base')), after: await variant(ROOT) };
// A count over the last 5 days: with 1 M-row segments of 3.5 days (2 M rows over 7 days), the
// newest segment lies inside the window and the older one on its edge.
const rule = {
  name: 'bench',
  query: 'bench.requests | count',
  intervalSeconds: 60,
  lookbackSeconds: 5 * 86_400,
  condition: { kind: 'threshold', column: 'Count', operator: '>', threshold: 0 },
  dimensions: [],
  severity: 'High',
  ownerType: '',
  ownerId: '',
  assigneeUserId: '',
  title: '',
  description: '',
  enabled: true,
  mutedUntil: '',
  resolveAfter: 0,
  timeoutSeconds: 60,
};
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];

let cluster;
const services = [];
try {
  cluster = await startCluster('alert', 1);
  const t = performance.now();
  await loadRows(cluster.workers[0].storage, ROWS, 0, 1);
  console.log(`loaded ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  const runs = Object.entries(variants).map(([name, v]) => {
    const service = new v.QueryService(
      cluster.coordinator,
      cluster.channels,
      new v.SchemaCatalogSource(cluster.coordinator, cluster.channels),
    );
    services.push(service);
    return { name, v, service, samples: [], fired: 0 };
  });
  for (let i = 0; i < RUNS + 2; i++) {
    for (const r of runs) {
      const s = performance.now();
      r.fired = (await r.v.evaluateRule(r.service, ACCOUNT, rule, new Date())).firing.length;
      if (i >= 2) r.samples.push(performance.now() - s); // two warm-up rounds
    }
  }
  for (const r of runs) {
    console.log(
      `${r.name.padEnd(7)} median ${median(r.samples).toFixed(1)} ms (min ${Math.min(...r.samples).toFixed(1)}, max ${Math.max(...r.samples).toFixed(1)}), fired ${r.fired}`,
    );
  }
} finally {
  for (const s of services) await s.close();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
