// Costs of Kusto's decimal as the engine holds it (decision 0031): fixed-width order-keyed VARCHAR
// cells, SqlDecimal's operators as JS functions inside DuckDB. One in-memory DuckDB instance with
// the engine's functions; each pair of variants runs interleaved and the medians are compared:
//   sort:  ORDER BY the cell (plain string order = value order) vs ORDER BY a JS function's key
//          per row (what a text form without an order-preserving key would need) vs a DOUBLE;
//   sum:   kql_decimal_sum(list(cell)) vs sum(DOUBLE);
//   add:   kql_decimal_add(cell, cell) vs DOUBLE + DOUBLE.
//   npm run build && node bench/query/decimal-cells.mjs [--rows 1000000] [--runs 5]
import { DuckDBInstance } from '@duckdb/node-api';
import { registerKustoFunctions } from '@strata/common';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 1_000_000);
const RUNS = arg('runs', 5);

const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await db.connect();
registerKustoFunctions(c);
// Values with two decimals, as cells and as doubles (the same numbers).
await c.run(`CREATE TABLE t AS SELECT (i * 7919) % 1000003 - 500000 AS n FROM range(${ROWS}) r(i)`);
await c.run(
  `CREATE TABLE d AS SELECT kql_decimal_divide(kql_decimal_from_long(n), kql_decimal_parse('100')) AS cell, n / 100.0 AS x FROM t`,
);

async function time(q) {
  const t0 = process.hrtime.bigint();
  await c.runAndReadAll(q);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const CASES = {
  sort: {
    cell: 'SELECT cell FROM d ORDER BY cell DESC LIMIT 10',
    'js key': 'SELECT cell FROM d ORDER BY kql_decimal_normal(cell) DESC LIMIT 10',
    double: 'SELECT x FROM d ORDER BY x DESC LIMIT 10',
  },
  sum: { cell: 'SELECT kql_decimal_sum(list(cell)) FROM d', double: 'SELECT sum(x) FROM d' },
  add: { cell: 'SELECT max(kql_decimal_add(cell, cell)) FROM d', double: 'SELECT max(x + x) FROM d' },
};

for (const [name, variants] of Object.entries(CASES)) {
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let r = 0; r < RUNS; r++) for (const [k, q] of Object.entries(variants)) times[k].push(await time(q));
  const base = median(times.double);
  const line = Object.entries(times).map(([k, xs]) => `${k} ${median(xs).toFixed(0)} ms (${(median(xs) / base).toFixed(1)}×)`);
  console.log(`${name} over ${ROWS} rows: ${line.join(', ')}`);
}
c.closeSync();
