import { DuckDBInstance } from '@duckdb/node-api';
import { rmSync, mkdirSync } from 'node:fs';
const D='/tmp/topn/exp'; const SEGS=Number(process.argv[2]??20), PER=500000;
const inst = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await inst.connect();
const gen = (off) => `SELECT make_timestamp(1700000000000000 + (${off}+i)*60000) AS "timestamp", CASE WHEN hash(i*7+${off})%100 < 5 THEN 'Error' ELSE 'Info' END AS level,
 (floor(-ln(1-((hash(i+${off})%1000000)/1000000.0))*80) + CASE WHEN hash(i*7+${off})%100 < 5 THEN 1000 ELSE 0 END)::BIGINT AS "latencyMs",
 'web-' || (hash(i*3+${off})%10) AS host, 'GET /api/users/' || (hash(i*5+${off})%10000) || ' 200 in ' || i || 'ms' AS message FROM range(${PER}) t(i)`;
if (process.argv[3]==='gen') { rmSync(D,{recursive:true,force:true}); mkdirSync(D,{recursive:true});
 for (let s=0;s<SEGS;s++){ await c.run(`ATTACH '${D}/s${s}.duckdb' AS w`); await c.run(`CREATE TABLE w.rows AS ${gen(s*PER)}`); await c.run('CHECKPOINT w'); await c.run('DETACH w'); }
 await c.run(`ATTACH '${D}/native.duckdb' AS w`); await c.run(`CREATE TABLE w.rows AS ${Array.from({length:SEGS},(_,s)=>`SELECT * FROM (${gen(s*PER)})`).join(' UNION ALL ')} ORDER BY "timestamp"`); await c.run('CHECKPOINT w'); await c.run('DETACH w');
}
for (let s=0;s<SEGS;s++) await c.run(`ATTACH '${D}/s${s}.duckdb' AS s${s} (READ_ONLY)`);
await c.run(`ATTACH '${D}/native.duckdb' AS nat (READ_ONLY)`);
const cols = `"timestamp", level, "latencyMs", host, message`;
const br = (s, f='') => `(SELECT ${cols} FROM s${s}.rows${f})`;
const stmt = (b) => `WITH src AS (SELECT * FROM ${b}) SELECT * FROM src ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`;
const maxes = [];
for (let s=0;s<SEGS;s++) maxes.push(Number((await c.runAndReadAll(`SELECT max("latencyMs") m FROM s${s}.rows`)).getRowObjectsJS()[0].m));
const order = maxes.map((m,s)=>[m,s]).sort((a,b)=>b[0]-a[0]);
console.log('maxes', order.map(x=>x[0]).join(' '));
const union = (bs) => `SELECT * FROM (${bs.map(b=>`(${stmt(b)})`).join(' UNION ALL ')}) ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`;
const variants = {
  current: async () => (await c.runAndReadAll(union(Array.from({length:SEGS},(_,s)=>br(s))))).getRowObjectsJS().map(r=>r.latencyMs),
  probe: async () => {
    const p = (await c.runAndReadAll(stmt(br(order[0][1])))).getRowObjectsJS();
    const T = p[9].latencyMs;
    const keep = order.filter(([m])=>m>=Number(T)).map(([,s])=>br(s, ` WHERE "latencyMs" >= ${T}`));
    return (await c.runAndReadAll(union(keep))).getRowObjectsJS().map(r=>r.latencyMs);
  },
  finalOnly: async () => { const T=1790; const keep = order.filter(([m])=>m>=T).map(([,s])=>br(s, ` WHERE "latencyMs" >= ${T}`));
    return (await c.runAndReadAll(union(keep))).getRowObjectsJS().map(r=>r.latencyMs); },
  guessUnion: async () => { const T=order[9][0]; const keep = order.filter(([m])=>m>=T).map(([,s])=>br(s, ` WHERE "latencyMs" >= ${T}`));
    return (await c.runAndReadAll(`WITH src AS (SELECT * FROM (${keep.map(b=>`SELECT * FROM ${b}`).join(' UNION ALL ')})) SELECT * FROM src ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`)).getRowObjectsJS().map(r=>r.latencyMs); },
  guessBranch: async () => { const T=order[9][0]; const keep = order.filter(([m])=>m>=T).map(([,s])=>br(s, ` WHERE "latencyMs" >= ${T}`));
    return (await c.runAndReadAll(union(keep))).getRowObjectsJS().map(r=>r.latencyMs); },
  guessAll: async () => { const T=order[9][0]; const keep = order.map(([,s])=>br(s, ` WHERE "latencyMs" >= ${T}`));
    return (await c.runAndReadAll(`WITH src AS (SELECT * FROM (${keep.map(b=>`SELECT * FROM ${b}`).join(' UNION ALL ')})) SELECT * FROM src ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`)).getRowObjectsJS().map(r=>r.latencyMs); },
  probeOnly: async () => (await c.runAndReadAll(stmt(br(order[0][1])))).getRowObjectsJS().map(r=>r.latencyMs),
  native: async () => (await c.runAndReadAll(stmt('nat.rows'))).getRowObjectsJS().map(r=>r.latencyMs),
};
const ans = {}; for (const [k,f] of Object.entries(variants)) ans[k]=(await f()).join(',');
console.log(ans);
const t = Object.fromEntries(Object.keys(variants).map(k=>[k,[]]));
for (let i=0;i<15;i++) for (const [k,f] of Object.entries(variants)) { const a=performance.now(); await f(); t[k].push(performance.now()-a); }
const med = (xs)=>xs.sort((a,b)=>a-b)[xs.length>>1];
for (const k of Object.keys(t)) console.log(k.padEnd(10), med(t[k]).toFixed(2), 'ms');
