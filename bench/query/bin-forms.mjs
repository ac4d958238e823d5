// The cost of a datetime bin's spellings in a summarize, at statement level: the bench's
// 5-minute-bins-by-host shape (and 1-hour bins by level) over 1.43 M rows of one day (the rows the
// bench's "last day" reads at 10 M) in a checkpointed DuckDB file, one DuckDB thread, the forms
// interleaved. CPU time of the process per statement (the machine is shared: wall time swings
// with the load, CPU time much less), median and min of --runs; answers compared.
//
//   node bench/query/bin-forms.mjs [--runs 21] [--rows 1430000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { median, numberArg } from './bench-cluster.mjs';

const RUNS = numberArg('runs', 21);
const ROWS = numberArg('rows', 1_430_000);
const dir = mkdtempSync(path.join(tmpdir(), 'bin-forms-'));
const e = 'epoch_us("c0")';
const floorOld = (n) => `${e} - (((${e} % ${n}) + ${n}) % ${n})`;
const floorCase = (n) => `(CASE WHEN ${e} >= 0 THEN ${e} - ${e} % ${n} ELSE ${e} - (((${e} % ${n}) + ${n}) % ${n}) END)`;
// Each form: the statement's aggregate with its key, and the key turned into µs for comparing.
const FORMS = {
  'make_timestamp(3 mods) (before)': (n) => [`make_timestamp(${floorOld(n)})`, 'epoch_us(b)'],
  'make_timestamp(CASE)': (n) => [`make_timestamp(${floorCase(n)})`, 'epoch_us(b)'],
  'CASE µs key, timestamp after (now)': (n) => [floorCase(n), 'epoch_us(make_timestamp(b))'],
  time_bucket: (n) => [`time_bucket(INTERVAL (${n}) MICROSECOND, "c0", TIMESTAMP '1970-01-01')`, 'epoch_us(b)'],
};
const SHAPES = [
  ['5m bins by host', 300_000_000, 'c1'],
  ['1h bins by level', 3_600_000_000, 'c2'],
];
const instance = await DuckDBInstance.create(path.join(dir, 'rows.duckdb'), { threads: '1' });
const c = await instance.connect();
try {
  const start = 1_795_500_000_000_000;
  await c.run(
    `CREATE TABLE t AS SELECT make_timestamp(${start} + i * (86400000000 // ${ROWS})) AS c0, 'web-0' || (hash(i) % 10) AS c1,
     ['Info', 'Warn', 'Error'][(1 + hash(i * 7) % 3)::BIGINT] AS c2, (hash(i * 3) % 1000)::BIGINT AS c4 FROM range(${ROWS}) r(i)`,
  );
  await c.run('CHECKPOINT');
  for (const [shape, n, key] of SHAPES) {
    const statements = Object.entries(FORMS).map(([name, f]) => {
      const [bin, us] = f(n);
      const s = `SELECT ${bin} AS b, coalesce(${key}, '') AS k, count(*) AS n, sum(CAST(c4 AS DOUBLE)) AS s, count(c4) AS m FROM t GROUP BY ALL`;
      return [name, s, `SELECT ${us} AS b, k, n, s, m FROM (${s}) ORDER BY ALL`];
    });
    const answers = [];
    for (const [, , check] of statements)
      answers.push(JSON.stringify((await c.runAndReadAll(check)).getRows(), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
    const cpu = statements.map(() => []);
    for (let r = 0; r < RUNS; r++)
      for (const [k, [, s]] of statements.entries()) {
        const before = process.cpuUsage();
        await c.runAndReadAll(s);
        const used = process.cpuUsage(before);
        cpu[k].push((used.user + used.system) / 1000);
      }
    console.log(`\n${shape}, ${ROWS.toLocaleString('en')} rows, CPU ms per statement (median, min of ${RUNS})`);
    for (const [k, [name]] of statements.entries())
      console.log(
        `  ${name.padEnd(36)} ${median(cpu[k]).toFixed(1).padStart(7)}  ${Math.min(...cpu[k])
          .toFixed(1)
          .padStart(7)}  ${answers[k] === answers[0] ? 'same answer' : 'OTHER ANSWER'}`,
      );
  }
} finally {
  c.closeSync();
  instance.closeSync();
  rmSync(dir, { recursive: true, force: true });
}
