// The `has` queries of the bench at statement level, before and after decision 0037, in one
// process on one worker's storage (so the machine's load weighs on all variants alike): the
// worker's scan with the query's term hints, and the count over it written four ways, timed
// interleaved (--runs runs of each in turn, after a warm-up), --rounds rounds:
//
//   regex, segments     the term regex (termRegex) over the segments the segment filters keep (before)
//   regex, blocks       the term regex over only the row ranges the block filters keep
//   no class, segments  the check without the Unicode class (term-check.ts) over the kept segments
//   no class, blocks    the check without the class over the kept row ranges (after)
//
// each with the prefilter the planner writes; the four answers are compared. Also the query
// through HTTP and `count` through HTTP, for the service's fixed cost.
//
//   npm run build && node bench/query/has-ab.mjs [--rows 1000000] [--runs 9] [--rounds 3]
import { rmSync } from 'node:fs';
import { inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { termRegex } from '../../gateway/dist/src/query/semantic/expr-binder.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 9);
const ROUNDS = numberArg('rounds', 3);
const spread = (xs) => `${median(xs).toFixed(2)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

/** The planner's filter of the whole-query statement: its WHERE over column "c13" (the message). */
function plannedWhere(spec) {
  const text = inlineParams(spec.sql, spec.params) ?? spec.sql;
  const m = /WHERE \((.*)\)\), "s2"/.exec(text);
  if (!m) throw new Error(`no filter found in ${text}`);
  return m[1].replaceAll('"c13"', '"message"');
}

let cluster;
try {
  cluster = await startCluster('one', 1);
  const storage = cluster.workers[0].storage;
  const t = performance.now();
  await loadRows(storage, ROWS, 0, 1);
  const segments = await storage.listSegments(ACCOUNT);
  console.log(
    `loaded ${ROWS.toLocaleString('en')} rows in ${((performance.now() - t) / 1000).toFixed(1)} s, ${segments.length} segments`,
  );
  await cluster.query(QUERIES[0].kql);
  const catalog = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  const count7 = QUERIES.find((q) => q.name === 'count, 7 days');
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`\nround ${round} of ${ROUNDS}`);
    for (const q of QUERIES.filter((x) => x.name.includes('has "'))) {
      const needle = /has "([^"]+)"/.exec(q.kql)[1];
      const spec = planQuery(q.kql, catalog, { storageTime: true }).single;
      const scan = await storage.openScan(ACCOUNT, SCHEMA, {
        ...scanRangeMs(spec.timeRange),
        ...storageTimeUs(spec),
        terms: spec.terms,
      });
      try {
        const after = plannedWhere(spec);
        // The prefilter is what comes before the check: the same in both forms.
        const prefilter = after.slice(0, after.indexOf(' AND (CASE'));
        const before = `${prefilter} AND regexp_matches("message", '${termRegex(needle, false)}')`;
        const blocks = scan.branches;
        // The same branches without their row ranges: each narrowed segment read whole, once.
        const segmentsOnly = [
          ...new Set(
            blocks.map((b) =>
              b.replace(/ AND rowid BETWEEN \d+ AND \d+\)$/, ')').replace(/ WHERE rowid BETWEEN \d+ AND \d+\)$/, ')'),
            ),
          ),
        ];
        const over = (branches, where) =>
          `SELECT count(*) FROM (${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')}) WHERE ${where}`;
        const variants = [
          ['regex, segments', over(segmentsOnly, before)],
          ['regex, blocks', over(blocks, before)],
          ['no class, segments', over(segmentsOnly, after)],
          ['no class, blocks', over(blocks, after)],
        ];
        const run = async (sql) => Number((await scan.connection.runAndReadAll(sql)).getRows()[0][0]);
        const answers = await Promise.all(variants.map(([, sql]) => run(sql)));
        if (new Set(answers).size !== 1) throw new Error(`${q.name}: answers differ: ${answers}`);
        const fns = [
          ...variants.map(
            ([, sql]) =>
              () =>
                run(sql),
          ),
          () => cluster.query(q.kql),
          () => cluster.query(count7.kql),
        ];
        const samples = fns.map(() => []);
        for (const fn of fns) await fn();
        for (let i = 0; i < RUNS; i++)
          for (const [k, fn] of fns.entries()) {
            const s = performance.now();
            await fn();
            samples[k].push(performance.now() - s);
          }
        console.log(`${q.name}: ${answers[0]} rows; branches ${segmentsOnly.length} whole → ${blocks.length} with row ranges`);
        for (const [k, name] of [...variants.map(([n]) => n), 'HTTP (after)', 'HTTP count, 7 days'].entries())
          console.log(`  ${name.padEnd(20)} ${spread(samples[k])} ms`);
      } finally {
        await scan.release();
      }
    }
  }
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
