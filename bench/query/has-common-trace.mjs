// Where `has "timeout" | count` goes at statement level (decision 0041): one worker's storage, the
// worker's scan, and the count written several ways, timed interleaved (--runs runs of each in
// turn after a warm-up). Also the same on a native DuckDB table with a lower-cased copy of the
// column, to price what a stored lower-cased column would save.
//
//   npm run build && node bench/query/has-common-trace.mjs [--rows 1000000] [--runs 7]
import { rmSync } from 'node:fs';
import { inlineParams } from '@strata/common';
import { planQuery, SchemaCatalogSource } from '@strata/gateway';
import { scanRangeMs, storageTimeUs } from '../../gateway/dist/src/query/cluster/worker-protocol.js';
import { ACCOUNT, agent, DATA, loadRows, median, numberArg, QUERIES, SCHEMA, startCluster } from './bench-cluster.mjs';

const ROWS = numberArg('rows', 1_000_000);
const RUNS = numberArg('runs', 7);
const SKIP = process.argv.includes('--files-only');
const spread = (xs) => `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;

let cluster;
try {
  cluster = await startCluster('one', 1);
  const storage = cluster.workers[0].storage;
  const t = performance.now();
  await loadRows(storage, ROWS, 0, 1);
  console.log(`loaded ${ROWS} rows in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  await cluster.query(QUERIES[0].kql);
  const catalog = await new SchemaCatalogSource(cluster.coordinator, cluster.channels).get(ACCOUNT);
  const q = QUERIES.find((x) => x.name.includes('has "timeout"'));
  const spec = planQuery(q.kql, catalog, { storageTime: true }).single;
  const text = inlineParams(spec.sql, spec.params) ?? spec.sql;
  console.log(text);
  const scan = await storage.openScan(ACCOUNT, SCHEMA, {
    ...scanRangeMs(spec.timeRange),
    ...storageTimeUs(spec),
    terms: spec.terms,
  });
  const where = /WHERE \((.*)\)\), "s2"/.exec(text)[1].replaceAll('"c13"', '"message"');
  const rel = `(${scan.branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
  const c = scan.connection;
  await c.run(`CREATE OR REPLACE TEMP TABLE nat AS SELECT message, lower(message) AS lm FROM ${rel}`);
  const variants = [
    ['planned (prefilter + exact)', `SELECT count(*) FROM ${rel} WHERE ${where}`],
    ['count(message) (read only)', `SELECT count(message) FROM ${rel}`],
    ['contains(x, timeout)', `SELECT count(*) FROM ${rel} WHERE contains(message, 'timeout')`],
    ['contains(lower(x), timeout)', `SELECT count(*) FROM ${rel} WHERE contains(lower(message), 'timeout')`],
    ['x ILIKE %timeout%', `SELECT count(*) FROM ${rel} WHERE message ILIKE '%timeout%'`],
    ['regex (?i)timeout', `SELECT count(*) FROM ${rel} WHERE regexp_matches(message, '(?i)timeout')`],
    ['nat: contains(lower(x))', `SELECT count(*) FROM nat WHERE contains(lower(message), 'timeout')`],
    ['nat: contains(lm)', `SELECT count(*) FROM nat WHERE contains(lm, 'timeout')`],
    ['nat: planned on x', `SELECT count(*) FROM nat WHERE ${where}`],
    [
      'nat: contains(lm) + exact on x',
      `SELECT count(*) FROM nat WHERE contains(lm, 'timeout') AND ${where.slice(where.indexOf('(CASE'))}`,
    ],
  ];
  const run = async (sql) => (typeof sql === 'function' ? sql() : Number((await c.runAndReadAll(sql)).getRows()[0][0]));
  variants.unshift([
    'service: the query over HTTP',
    async () => {
      const answer = JSON.stringify(await cluster.query(q.kql));
      return Number(/(\d+)\D*$/.exec(answer)?.[1]);
    },
  ]);
  // Where the statement's time goes, by operator (one run, after the others warmed the caches).
  const plan = async () => {
    const rows = (await c.runAndReadAll(`EXPLAIN ANALYZE SELECT count(*) FROM ${rel} WHERE ${where}`)).getRows();
    return String(rows[0]?.[1] ?? '')
      .split('\n')
      .filter((l) => /[A-Z_]{4,}|Total Time|\d+\.\d+s/.test(l))
      .map((l) => l.replace(/[│┌┐└┘─┬┴├┤]/g, ' ').trim())
      .filter((l) => l.length > 0)
      .join(' | ');
  };
  for (const [n, s] of variants) console.log(n, await run(s));
  const samples = variants.map(() => []);
  for (let i = 0; i < (SKIP ? 0 : RUNS); i++)
    for (const [k, [, s]] of variants.entries()) {
      const t0 = performance.now();
      await run(s);
      samples[k].push(performance.now() - t0);
    }
  if (!SKIP) console.log(`EXPLAIN ANALYZE (planned): ${await plan()}`);
  if (!SKIP) for (const [k, [n]] of variants.entries()) console.log(`  ${n.padEnd(34)} ${spread(samples[k])} ms`);
  await scan.release();
  // Phase 2: the segment files copied into one DuckDB file of a separate instance (not confined),
  // the message column as it is and with a lower-cased copy, read with 1 and 2 threads.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const { execSync } = await import('node:child_process');
  const files = execSync(`find ${DATA} -path '*segments*' -name '*.duckdb'`).toString().trim().split('\n');
  rmSync('/tmp/hc/f.duckdb', { force: true });
  const db = await DuckDBInstance.create('/tmp/hc/f.duckdb');
  const f = await db.connect();
  const { registerKustoFunctions } = await import('@strata/common');
  await registerKustoFunctions(f);
  const parts = [];
  for (const [i, file] of files.entries()) {
    await f.run(`ATTACH '${file}' AS s${i} (READ_ONLY)`);
    parts.push(`SELECT message FROM s${i}.rows`);
  }
  await f.run(`CREATE TABLE t AS ${parts.join(' UNION ALL ')}`);
  await f.run('CHECKPOINT');
  // What a lower-cased copy adds at write: the same rows written into a file of their own with and
  // without it (each twice, interleaved; the second of each counted).
  const { statSync } = await import('node:fs');
  const write = async (name, select) => {
    rmSync(`/tmp/hc/${name}.duckdb`, { force: true });
    const t0 = performance.now();
    await f.run(`ATTACH '/tmp/hc/${name}.duckdb' AS ${name}`);
    await f.run(`CREATE TABLE ${name}.r AS ${select}`);
    await f.run(`CHECKPOINT ${name}`);
    const ms = performance.now() - t0;
    await f.run(`DETACH ${name}`);
    return { ms, mb: statSync(`/tmp/hc/${name}.duckdb`).size / 1e6 };
  };
  for (let i = 0; i < 2; i++) {
    const plain = await write('wp', 'SELECT message FROM t');
    const lowered = await write('wl', 'SELECT message, lower(message) AS lm FROM t');
    if (i === 1)
      console.log(
        `write message only: ${plain.ms.toFixed(0)} ms, ${plain.mb.toFixed(1)} MB; with lower copy: ${lowered.ms.toFixed(0)} ms, ${lowered.mb.toFixed(1)} MB`,
      );
  }
  await f.run(`CREATE TABLE tl AS SELECT message, lower(message) AS lm FROM t`);
  await f.run('CHECKPOINT');
  console.log(
    (
      await f.runAndReadAll(`SELECT column_name, compression, count(*) FROM pragma_storage_info('tl') GROUP BY ALL ORDER BY ALL`)
    ).getRows(),
  );
  const exact = where.slice(where.indexOf('(CASE'));
  const A = '[\\x00-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]';
  const fileVariants = [
    ['file: count(message)', `SELECT count(message) FROM t`],
    ['file: planned', `SELECT count(*) FROM t WHERE ${where}`],
    ['file: contains(lower(x))', `SELECT count(*) FROM t WHERE contains(lower(message), 'timeout')`],
    ['file: contains(x)', `SELECT count(*) FROM t WHERE contains(message, 'timeout')`],
    ['file: count(lm)', `SELECT count(lm) FROM tl`],
    ['file: contains(lm)', `SELECT count(*) FROM tl WHERE contains(lm, 'timeout')`],
    ['file: contains(lm) + exact on x', `SELECT count(*) FROM tl WHERE contains(lm, 'timeout') AND ${exact}`],
    [
      'file: contains(lm) + F on lm',
      `SELECT count(*) FROM tl WHERE contains(lm, 'timeout') AND regexp_matches(lm, '(?:^|${A})timeout(?:${A}|$)')`,
    ],
  ];
  const frun = async (sql) => Number((await f.runAndReadAll(sql)).getRows()[0][0]);
  for (const threads of [1, 2]) {
    await f.run(`SET threads = ${threads}`);
    for (const [, s] of fileVariants) await frun(s);
    const fs = fileVariants.map(() => []);
    for (let i = 0; i < RUNS; i++)
      for (const [k, [, s]] of fileVariants.entries()) {
        const t0 = performance.now();
        await frun(s);
        fs[k].push(performance.now() - t0);
      }
    console.log(`threads ${threads}`);
    for (const [k, [n]] of fileVariants.entries()) console.log(`  ${n.padEnd(34)} ${spread(fs[k])} ms`);
  }
} finally {
  agent.destroy();
  await cluster?.stop();
  rmSync(DATA, { recursive: true, force: true });
}
