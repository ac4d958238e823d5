// Where `has "timeout" | count` goes with the stored term fold (decision 0045), at statement level:
// one worker's storage (the query bench's rows, sealed per 1 M rows, then compacted into one
// segment as the settled layout is), the worker's own scan with the fold asked for, and the count
// written several ways, timed interleaved (--runs runs of each in turn after a warm-up); then
// EXPLAIN ANALYZE of the planned statement. The planned statement before 0045 (prefilter and
// exact check on `message`) runs over the same scan for comparison.
//
//   npm run build && node bench/query/has-fold-trace.mjs [--rows 1000000] [--runs 7]
import { rmSync } from 'node:fs';
import { inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 7);
const spread = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

let cluster;
try {
  cluster = await startCluster('one', 1);
  const storage = cluster.workers[0].storage;
  const t = performance.now();
  await loadRows(storage, ROWS, 0, 1);
  const loaded = await storage.listSegments(ACCOUNT);
  if (loaded.length > 1)
    await storage.compact({ accountId: ACCOUNT, schema: SCHEMA, segmentIds: loaded.map((s) => s.segmentId) });
  const segments = await storage.listSegments(ACCOUNT);
  console.log(
    `loaded ${ROWS} rows in ${((performance.now() - t) / 1000).toFixed(1)} s; ${segments.length} segment(s), ${(segments.reduce((n, s) => n + s.byteSize, 0) / 1e6).toFixed(1)} MB`,
  );
  await cluster.query(QUERIES[0].kql);
  const catalog = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  const q = QUERIES.find((x) => x.name.includes('has "timeout"'));
  const spec = planQuery(q.kql, catalog, { storageTime: true }).single;
  const text = inlineParams(spec.sql, spec.params) ?? spec.sql;
  console.log(text);
  const folds = spec.sourceColumns.flatMap((c) => (c.name.startsWith('#fold:') ? [c.name.slice(6)] : []));
  const scan = await storage.openScan(ACCOUNT, SCHEMA, {
    ...scanRangeMs(spec.timeRange),
    ...storageTimeUs(spec),
    terms: spec.terms,
    folds,
  });
  const where = /WHERE \((.*)\)\), "s2"/.exec(text)[1].replaceAll(/"c\d+_fold"/g, '"#fold:message"');
  const before = where
    .replaceAll('"#fold:message"', '"message"')
    .replace(`contains("message", 'timeout')`, `contains(lower("message"), 'timeout')`);
  const rel = scan.relation;
  const c = scan.connection;
  const variants = [
    ['service: the query over HTTP', async () => Number(/(\d+)\D*$/.exec(JSON.stringify(await cluster.query(q.kql)))?.[1])],
    ['planned on the fold (0045)', `SELECT count(*) FROM ${rel} WHERE ${where}`],
    ['planned on message (before 0045)', `SELECT count(*) FROM ${rel} WHERE ${before}`],
    ['count(fold) (read only)', `SELECT count("#fold:message") FROM ${rel}`],
    ['contains(fold, timeout)', `SELECT count(*) FROM ${rel} WHERE contains("#fold:message", 'timeout')`],
    ['count(message) (read only)', `SELECT count(message) FROM ${rel}`],
    ['contains(lower(message), timeout)', `SELECT count(*) FROM ${rel} WHERE contains(lower(message), 'timeout')`],
  ];
  const run = async (sql) => (typeof sql === 'function' ? sql() : Number((await c.runAndReadAll(sql)).getRows()[0][0]));
  for (const [n, s] of variants) console.log(`${n}: ${await run(s)}`);
  const samples = variants.map(() => []);
  for (let i = 0; i < RUNS; i++)
    for (const [k, [, s]] of variants.entries()) {
      const t0 = performance.now();
      await run(s);
      samples[k].push(performance.now() - t0);
    }
  const rows = (await c.runAndReadAll(`EXPLAIN ANALYZE SELECT count(*) FROM ${rel} WHERE ${where}`)).getRows();
  const plan = String(rows[0]?.[1] ?? '')
    .split('\n')
    .filter((l) => /[A-Z_]{4,}|Total Time|\d+\.\d+s/.test(l))
    .map((l) => l.replace(/[│┌┐└┘─┬┴├┤]/g, ' ').trim())
    .filter((l) => l.length > 0)
    .join(' | ');
  console.log(`EXPLAIN ANALYZE (planned on the fold): ${plan}`);
  for (const [k, [n]] of variants.entries()) console.log(`  ${n.padEnd(36)} ${spread(samples[k])} ms`);
  await scan.release();
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
