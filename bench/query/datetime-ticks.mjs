// Costs of datetimes carried as 100 ns ticks (decision 0036) against the TIMESTAMP (µs) forms and
// DuckDB's TIMESTAMP_NS, on one in-memory DuckDB instance with a TIMESTAMP column sorted by time
// (as segments are). Each group's variants run interleaved; medians are compared:
//   filter: `ts <= endofday(const)` as the engine writes it (the ticks moved to the µs grid, a
//           constant expression) vs the plain `ts < TIMESTAMP 'next day'` vs comparing in ticks;
//   group:  summarize by endofday(ts): BIGINT ticks (the engine's SQL) vs TIMESTAMP_NS vs the
//           µs startofday key;
//   text:   the 7-digit text of every value (ticks) vs the µs strftime text;
//   span:   `Timestamp + Duration` (a per-row timespan, decision 0036's amendment): the engine's SQL
//           now (planQuery's fragment, ticks kept) vs the µs truncation it wrote before, for a
//           filter against a constant, a summarize by bin(…, 1h) and a max.
//   npm run build && node bench/query/datetime-ticks.mjs [--rows 1000000] [--runs 7]
import { DuckDBInstance } from '@duckdb/node-api';
import { planQuery, warmQueryEngine } from '../../gateway/dist/src/query/engine.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROWS = arg('rows', 1_000_000);
const RUNS = arg('runs', 7);

const db = await DuckDBInstance.create(':memory:', { threads: '2' });
const c = await db.connect();
// One row every 600 ms from 2024-03-01: 1 M rows span about a week.
await c.run(
  `CREATE TABLE t AS SELECT TIMESTAMP '2024-03-01' + to_microseconds(i * 600000) AS ts FROM range(${ROWS}) r(i) ORDER BY ts`,
);

// A per-row span in ticks (up to ~3 h, most not whole microseconds) for the span group.
await c.run(`ALTER TABLE t ADD COLUMN d BIGINT`);
await c.run(`UPDATE t SET d = (hash(ts) % 100000000000)::BIGINT`);

const EPOCH = '621355968000000000';
const ticksOf = (x) => `(epoch_us(${x}) * 10 + ${EPOCH})`;
const floorDiv10 = (x) => `((${x} - (((${x} % 10) + 10) % 10)) // 10)`;
const floorMicros = (t) => `make_timestamp(${floorDiv10(`(${t} - ${EPOCH})`)})`;
// endofday(x) as the engine writes it (registry/datetime-functions.ts endOf).
const endOfDayTicks = (x) => {
  const next = `(date_trunc('day', ${x}) + to_days(CAST(0 + 1 AS INTEGER)))`;
  return `(CASE WHEN abs(0) <= 3660000 AND ${next} > TIMESTAMP '0001-01-01' AND ${next} <= TIMESTAMP '10000-01-01' THEN ${ticksOf(next)} - 1 END)`;
};
const CONST = "TIMESTAMP '2024-03-04 10:00:00'";

async function time(q) {
  const t0 = process.hrtime.bigint();
  await c.runAndReadAll(q);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// The engine's own fragment SQL for a KQL query over t (columns timestamp, duration), parameters inlined.
await warmQueryEngine();
const catalog = {
  tables: [
    {
      name: 'T',
      columns: [
        { name: 'ts', type: 'datetime' },
        { name: 'd', type: 'timespan' },
      ],
    },
  ],
};
function engineSql(kql) {
  const [f] = planQuery(kql, catalog, { now: new Date() }).fragments;
  const lit = (p) =>
    p.type === 'VARCHAR'
      ? `'${String(p.value).replaceAll("'", "''")}'`
      : p.type === 'TIMESTAMP'
        ? `make_timestamp(CAST(${p.value} AS BIGINT))`
        : `CAST(${p.value} AS ${p.type})`;
  return f.sql.replaceAll('"__strata_source__"', 't').replace(/\$(\d+)/g, (_, i) => lit(f.params[Number(i) - 1]));
}
// The engine's SQL before: the span truncated to whole microseconds.
const before = (x) => `(${x} + to_microseconds(d // 10))`;

const CASES = {
  filter: {
    'µs grid (engine)': `SELECT count(*) FROM t WHERE ts <= ${floorMicros(endOfDayTicks(CONST))}`,
    'plain µs': `SELECT count(*) FROM t WHERE ts < TIMESTAMP '2024-03-05'`,
    'in ticks': `SELECT count(*) FROM t WHERE ${ticksOf('ts')} <= ${endOfDayTicks(CONST)}`,
  },
  group: {
    'BIGINT ticks (engine)': `SELECT ${endOfDayTicks('ts')} AS e, count(*) FROM t GROUP BY ALL`,
    TIMESTAMP_NS: `SELECT CAST(date_trunc('day', ts) + INTERVAL 1 DAY AS TIMESTAMP_NS) - INTERVAL 1 MICROSECOND AS e, count(*) FROM t GROUP BY ALL`,
    'µs startofday': `SELECT date_trunc('day', ts) AS e, count(*) FROM t GROUP BY ALL`,
  },
  text: {
    '7 digits from ticks (engine)': `SELECT max(strftime(${floorMicros(ticksOf('ts'))}, '%Y-%m-%dT%H:%M:%S.') || lpad(CAST(((${ticksOf('ts')} % 10000000) + 10000000) % 10000000 AS VARCHAR), 7, '0') || 'Z') FROM t`,
    'µs strftime': `SELECT max(strftime(ts, '%Y-%m-%dT%H:%M:%S.%f') || '0Z') FROM t`,
  },
  'span filter': {
    'ticks (engine)': engineSql('T | where ts + d > datetime(2024-03-04 10:00) | count'),
    'µs before': `SELECT count(*) FROM t WHERE ${before('ts')} > TIMESTAMP '2024-03-04 10:00:00'`,
  },
  'span bin': {
    'floor of ticks (engine)': engineSql('T | summarize count() by bin(ts + d, 1h)'),
    'µs before': `SELECT make_timestamp(epoch_us(${before('ts')}) - (((epoch_us(${before('ts')}) % 3600000000) + 3600000000) % 3600000000)) AS b, count(*) FROM t GROUP BY ALL`,
  },
  'span max': {
    'ticks (engine)': engineSql('T | summarize max(ts + d)'),
    'µs before': `SELECT max(${before('ts')}) FROM t`,
  },
};

for (const [name, variants] of Object.entries(CASES)) {
  const answers = new Set();
  for (const q of Object.values(variants)) answers.add(JSON.stringify((await c.runAndReadAll(q)).getRowsJson().length));
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let r = 0; r < RUNS; r++) for (const [k, q] of Object.entries(variants)) times[k].push(await time(q));
  const base = median(Object.values(times).at(-1) ?? [1]);
  const line = Object.entries(times).map(([k, xs]) => `${k} ${median(xs).toFixed(1)} ms (${(median(xs) / base).toFixed(2)}×)`);
  console.log(`${name} over ${ROWS} rows: ${line.join(', ')}`);
}
c.closeSync();
