// What hot rows cost a query: the same rows on two one-worker clusters in this process, one with
// every row sealed into segments, one with the newest --hot rows left in the account's hot table
// (a live worker holds up to 250,000 rows or 60 s of them there). Each query of the set through
// HTTP and, at statement level, the worker's statement over its scan, timed interleaved (sealed,
// hot, sealed, hot …), --rounds rounds of --runs runs; medians and spread.
//
//   npm run build && node bench/query/hot-rows-ab.mjs [--rows 1000000] [--hot 200000] [--runs 9] [--rounds 3] [--match top]
import { rmSync } from 'node:fs';
import { fragmentSql, inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const HOT = numberArg('hot', 200_000);
const RUNS = numberArg('runs', 9);
const ROUNDS = numberArg('rounds', 3);
const MATCH = process.argv.includes('--match') ? process.argv[process.argv.indexOf('--match') + 1] : undefined;

const spread = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

const clusters = [];
try {
  for (const [name, hotTail] of [
    ['sealed', 0],
    ['hot', HOT],
  ]) {
    const c = await startCluster(name, 1, { sealAgeSeconds: 3600 });
    clusters.push(c);
    const t = performance.now();
    await loadRows(c.workers[0].storage, ROWS, 0, 1, { hotTail });
    await c.query(QUERIES[0].kql);
    const segments = await c.workers[0].storage.listSegments(ACCOUNT);
    console.log(
      `${name}: ${ROWS.toLocaleString('en')} rows loaded in ${((performance.now() - t) / 1000).toFixed(1)} s, ${segments.length} segments holding ${segments.reduce((n, s) => n + s.rowCount, 0).toLocaleString('en')} rows`,
    );
  }
  const catalogs = await Promise.all(clusters.map((c) => new SchemaCatalogSource(c.coordinator, c.channels).get(ACCOUNT)));
  for (const q of QUERIES) {
    if (MATCH && !q.name.includes(MATCH)) continue;
    // Statement level: the worker's statement (whole query, or the top-N fragment) over its scan.
    const statements = await Promise.all(
      clusters.map(async (c, k) => {
        const plan = planQuery(q.kql, catalogs[k], { storageTime: true });
        const spec = plan.single ?? plan.fragments[0];
        const scan = await c.workers[0].storage.openScan(ACCOUNT, SCHEMA, {
          ...scanRangeMs(spec.timeRange),
          ...storageTimeUs(spec),
        });
        const sql = fragmentSql(
          { ...spec, sql: inlineParams(spec.sql, spec.params) ?? spec.sql },
          scan.relation,
          scan.columns.map((x) => x.name),
          scan.branches,
        );
        return { scan, sql };
      }),
    );
    // Same rows, same answer: compared as sorted rows (a summarize has no order); for a limit
    // without an order or a top-N with ties, which rows come is open, so only their count.
    const answers = await Promise.all(clusters.map((c) => c.query(q.kql)));
    const open = /take|top/.test(q.kql);
    // The client's query() answers the result rows themselves (bench-cluster.mjs).
    const canonical = (a) => (open ? String(a.length) : JSON.stringify(a.map((r) => JSON.stringify(r)).sort()));
    if (canonical(answers[0]) !== canonical(answers[1])) throw new Error(`${q.name}: the answers differ`);
    for (let round = 1; round <= ROUNDS; round++) {
      const http = clusters.map(() => []);
      const stmt = clusters.map(() => []);
      for (let i = 0; i < RUNS; i++)
        for (let k = 0; k < clusters.length; k++) {
          let t = performance.now();
          await clusters[k].query(q.kql);
          http[k].push(performance.now() - t);
          t = performance.now();
          (await statements[k].scan.connection.runAndReadAll(statements[k].sql)).getRows();
          stmt[k].push(performance.now() - t);
        }
      console.log(
        `${q.name}, round ${round}: HTTP sealed ${spread(http[0])} hot ${spread(http[1])} ratio ${(median(http[1]) / median(http[0])).toFixed(2)}; statement sealed ${spread(stmt[0])} hot ${spread(stmt[1])} ratio ${(median(stmt[1]) / median(stmt[0])).toFixed(2)}`,
      );
    }
    for (const s of statements) await s.scan.release();
  }
} finally {
  agent.destroy();
  for (const c of clusters) await c.stop();
  rmSync(DATA, { recursive: true, force: true });
}
