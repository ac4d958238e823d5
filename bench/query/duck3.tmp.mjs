import { DuckDBInstance } from '@duckdb/node-api';

const inst = await DuckDBInstance.create(':memory:', { threads: '1' });
const c = await inst.connect();
await c.run('CREATE TABLE t AS SELECT range AS x FROM range(1000)');
const pool = [];
let beginSync = { fresh: 0, pooled: 0 },
  beginTot = { fresh: 0, pooled: 0 };
async function q(kind) {
  const k = kind === 'pooled' ? (pool.pop() ?? (await inst.connect())) : await inst.connect();
  const t0 = performance.now();
  const p = k.run('BEGIN TRANSACTION; SELECT 1 FROM t LIMIT 0');
  const t1 = performance.now();
  await p;
  const t2 = performance.now();
  beginSync[kind] += t1 - t0;
  beginTot[kind] += t2 - t0;
  const r = await k.run('SELECT count(*) FROM t');
  await k.run('ROLLBACK');
  if (kind === 'pooled') pool.push(k);
  else k.closeSync();
}
for (let i = 0; i < 200; i++) {
  await q('fresh');
  await q('pooled');
}
beginSync = { fresh: 0, pooled: 0 };
beginTot = { fresh: 0, pooled: 0 };
const N = 3000;
for (let i = 0; i < N; i++) {
  await q('fresh');
  await q('pooled');
}
for (const k of ['fresh', 'pooled'])
  console.log(k, 'BEGIN sync', ((beginSync[k] / N) * 1000).toFixed(0), 'us total', ((beginTot[k] / N) * 1000).toFixed(0), 'us');
