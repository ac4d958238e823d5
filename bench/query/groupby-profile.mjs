// Profiles the group-by and top-N queries of the bench at statement level: prints the statement
// the worker runs (the planner's fragment over the scan's relation), its EXPLAIN ANALYZE, and the
// scan's parts (hot rows, segments).
//
//   npm run build && node bench/query/groupby-profile.mjs [--rows 1000000] [--query 2]
import { rmSync } from 'node:fs';
import { fragmentSql, inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, agent, DATA, loadRows, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const ONLY = numberArg('query', -1);
let cluster;
try {
  cluster = await startCluster('one', 1, {});
  const storage = cluster.workers[0].storage;
  await loadRows(storage, ROWS, 0, 1);
  await cluster.query(QUERIES[0].kql);
  const CATALOG = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  console.log(JSON.stringify(await storage.listSegments(ACCOUNT), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
  for (const [index, q] of QUERIES.entries()) {
    if (ONLY >= 0 ? index !== ONLY : ![2, 3, 4].includes(index)) continue;
    const plan = planQuery(q.kql, CATALOG, { storageTime: true });
    const spec = plan.single ?? plan.fragments[0];
    const range = { ...scanRangeMs(spec.timeRange), ...storageTimeUs(spec) };
    const scan = await storage.openScan(ACCOUNT, SCHEMA, range);
    const sql = fragmentSql(
      { ...spec, sql: inlineParams(spec.sql, spec.params) ?? spec.sql },
      scan.relation,
      scan.columns.map((c) => c.name),
      scan.branches,
    );
    console.log(`\n==== ${q.name}\n-- plan: ${plan.single ? 'single' : `${plan.fragments.length} fragments`}`);
    if (!plan.single) console.log('-- merge:', Object.keys(plan).join(','));
    console.log(sql);
    const ex = await scan.connection.runAndReadAll(`EXPLAIN ANALYZE ${sql}`);
    console.log(
      ex
        .getRows()
        .map((r) => r[1])
        .join('\n'),
    );
    await scan.release();
  }
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
