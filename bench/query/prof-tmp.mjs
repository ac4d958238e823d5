import { rmSync } from 'node:fs';
import { QueryCoverage } from '../../gateway/dist/src/query/query-coverage.js';
import { SchemaCatalogSource } from '@strata/gateway';
import { ACCOUNT, agent, DATA, loadRows, median, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';
const cluster = await startCluster('one', 1);
try {
  await loadRows(cluster.workers[0].storage, 1_000_000, 0, 1);
  await cluster.query(QUERIES[0].kql);
  const cat = new SchemaCatalogSource(cluster.coordinator, cluster.channels);
  const L = {
    print1: () => cluster.query('print 1'),
    count7d: () => cluster.query(`${SCHEMA} | count`),
    listPlacements: () => cluster.coordinator.listPlacements(ACCOUNT),
    listWorkers: () => cluster.coordinator.listWorkers(),
    coverage: () => QueryCoverage.resolve(cluster.coordinator, ACCOUNT, false),
    catalog: () => cat.get(ACCOUNT, {}),
  };
  for (const fn of Object.values(L)) await fn();
  const s = Object.fromEntries(Object.keys(L).map((k) => [k, []]));
  for (let i = 0; i < 41; i++) for (const [k, fn] of Object.entries(L)) { const t = performance.now(); await fn(); s[k].push(performance.now() - t); }
  for (const k of Object.keys(L)) console.log(k.padEnd(16), median(s[k]).toFixed(2));
} finally { agent.destroy(); await cluster.stop(); rmSync(DATA, { recursive: true, force: true }); }
