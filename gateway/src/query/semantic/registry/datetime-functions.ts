/**
 * Date and time functions (issue 17, family 2), declared with their implementations. A datetime is
 * a DuckDB TIMESTAMP (microseconds) and a timespan a BIGINT of 100 ns ticks, so everything here is
 * exact DuckDB SQL and runs the same on a worker and in the gateway's merge. Results that hold
 * Kusto's 100 ns ticks below the microsecond — `endof*` (their last tick is .9999999) and
 * `datetime_add` of nanoseconds — are carried as BIGINT ticks (decision 0036, datetime-ticks.ts). Time zones come from DuckDB's built-in
 * ICU; the conversions name UTC explicitly so no session time zone can change an answer.
 */
import { queryError } from '../../errors.js';
import { dbl, int, join, type Sql, sql, str } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { KqlType } from '../../types.js';
import { type Bound, coerce } from '../bound.js';
import {
  EPOCH_TICKS as EPOCH_TICKS_N,
  floorDiv,
  floorMicros,
  floorMod,
  floorView,
  inKustoRange,
  isWholeMicros,
  PERIODS_IN_RANGE,
  tickDatetime,
  ticksOfMicros,
  ticksSql,
} from '../datetime-ticks.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

function want(b: Bound, types: KqlType[], call: CallExpr, what: string): void {
  if (!types.includes(b.type))
    throw queryError(`The ${what} of '${call.name}' must be ${types.join(' or ')}; this is a ${b.type}.`, b.span);
}

function constString(b: Bound, call: CallExpr, what: string): string {
  if (b.value?.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a constant string.`, b.span);
  return b.value.value;
}

const result = (type: KqlType, s: Sql, call: CallExpr): Bound => ({ type, sql: s, span: call.span });

/** Unix microseconds as ticks since 0001-01-01 (Kusto's DateTime zero), and back. */
const EPOCH_TICKS = sql`${int(EPOCH_TICKS_N)}`;
export const ticksOf = ticksOfMicros;
export const fromTicks = (t: Sql): Sql => sql`make_timestamp((${t} - ${EPOCH_TICKS}) // 10)`;

/** A datetime argument. */
function date(b: Bound, call: CallExpr, what = 'datetime'): Sql {
  want(b, ['datetime'], call, what);
  return b.sql;
}

/** A whole-number argument as BIGINT (a real truncates, as Kusto's int parameters do). */
function whole(b: Bound, call: CallExpr, what: string): Sql {
  want(b, ['long', 'real'], call, what);
  return b.type === 'long' ? b.sql : sql`CAST(trunc(${b.sql}) AS BIGINT)`;
}

const DATE_PARTS = [
  'year',
  'quarter',
  'month',
  'week',
  'day',
  'hour',
  'minute',
  'second',
  'millisecond',
  'microsecond',
  'nanosecond',
];

function part(b: Bound, call: CallExpr): string {
  const p = constString(b, call, 'part').toLowerCase();
  if (!DATE_PARTS.includes(p))
    throw queryError(`'${call.name}': the part '${p}' is not one of ${DATE_PARTS.join(', ')}.`, b.span);
  return p;
}

/** Sunday on or before the day (Kusto's weeks start on Sunday). */
const sunday = (x: Sql): Sql => sql`CAST(CAST(${x} AS DATE) - CAST(dayofweek(${x}) AS INTEGER) AS TIMESTAMP)`;

/** An integer field of a datetime, as Kusto's int-returning accessors: a long marked int32 (decision 0048). */
const field =
  (expr: (x: Sql) => Sql): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    return { ...result('long', sql`CAST(${expr(date(args[0] as Bound, call))} AS BIGINT)`, call), int32: true };
  };

function binAtSql(value: Bound, size: Bound, fixed: Bound, call: CallExpr): Bound {
  if (value.type === 'datetime') {
    want(size, ['timespan'], call, 'bin size');
    want(fixed, ['datetime'], call, 'fixed point');
    const [t, f, s] = [ticksSql(value), ticksSql(fixed), size.sql];
    // floor((t - f) / s) * s + f, with a floor that rounds negatives down.
    const floored = sql`(${t} - (((${t} - ${f}) % ${s}) + ${s}) % ${s})`;
    // A bin boundary below the microsecond (a ticks value or fixed point, a size that may not be
    // whole microseconds) is answered in ticks (decision 0044); fromTicks would drop the digit.
    if (value.ticks || fixed.ticks || !isWholeMicros(size))
      return tickDatetime(sql`(CASE WHEN ${s} > 0 THEN ${inKustoRange(floored)} END)`, call.span);
    return result('datetime', sql`(CASE WHEN ${s} > 0 THEN ${fromTicks(floored)} END)`, call);
  }
  if (value.type === 'timespan') {
    want(size, ['timespan'], call, 'bin size');
    want(fixed, ['timespan'], call, 'fixed point');
    const [v, f, s] = [value.sql, fixed.sql, size.sql];
    return result('timespan', sql`(CASE WHEN ${s} > 0 THEN ${v} - (((${v} - ${f}) % ${s}) + ${s}) % ${s} END)`, call);
  }
  if (value.type === 'long' && size.type === 'long' && fixed.type === 'long') {
    const [v, f, s] = [value.sql, fixed.sql, size.sql];
    return result('long', sql`(CASE WHEN ${s} > 0 THEN ${v} - (((${v} - ${f}) % ${s}) + ${s}) % ${s} END)`, call);
  }
  for (const b of [value, size, fixed]) want(b, ['long', 'real'], call, 'argument');
  const [v, f, s] = [coerce(value, 'real'), coerce(fixed, 'real'), coerce(size, 'real')];
  return result('real', sql`(CASE WHEN ${s} > 0 THEN floor((${v} - ${f}) / ${s}) * ${s} + ${f} END)`, call);
}

/** datetime_diff: how many boundaries of the part lie between the two datetimes (first minus second). */
function diffSql(p: string, a: Sql, b: Sql): Sql {
  switch (p) {
    case 'year':
      return sql`(year(${a}) - year(${b}))`;
    case 'quarter':
      return sql`((year(${a}) * 4 + quarter(${a})) - (year(${b}) * 4 + quarter(${b})))`;
    case 'month':
      return sql`((year(${a}) * 12 + month(${a})) - (year(${b}) * 12 + month(${b})))`;
    case 'week':
      return sql`(datediff('day', ${sunday(b)}, ${sunday(a)}) // 7)`;
    case 'nanosecond':
      return sql`((epoch_us(${a}) - epoch_us(${b})) * 1000)`;
    default: {
      // Whole units of fixed length: the difference of the values truncated to the unit.
      const us: Record<string, bigint> = {
        day: 86_400_000_000n,
        hour: 3_600_000_000n,
        minute: 60_000_000n,
        second: 1_000_000n,
        millisecond: 1000n,
        microsecond: 1n,
      };
      const u = int(us[p] as bigint);
      const floorDiv = (x: Sql) => sql`((${x} - (((${x} % ${u}) + ${u}) % ${u})) // ${u})`;
      return sql`(${floorDiv(sql`epoch_us(${a})`)} - ${floorDiv(sql`epoch_us(${b})`)})`;
    }
  }
}

function addSql(p: string, amount: Sql, x: Sql): Sql {
  const n = sql`CAST(${amount} AS BIGINT)`;
  switch (p) {
    case 'year':
      return sql`(${x} + to_years(CAST(${n} AS INTEGER)))`;
    case 'quarter':
      return sql`(${x} + to_months(CAST(${n} * 3 AS INTEGER)))`;
    case 'month':
      return sql`(${x} + to_months(CAST(${n} AS INTEGER)))`;
    case 'week':
      return sql`(${x} + to_days(CAST(${n} * 7 AS INTEGER)))`;
    case 'day':
      return sql`(${x} + to_days(CAST(${n} AS INTEGER)))`;
    case 'hour':
      return sql`(${x} + to_microseconds(${n} * 3600000000))`;
    case 'minute':
      return sql`(${x} + to_microseconds(${n} * 60000000))`;
    case 'second':
      return sql`(${x} + to_microseconds(${n} * 1000000))`;
    case 'millisecond':
      return sql`(${x} + to_microseconds(${n} * 1000))`;
    default:
      return sql`(${x} + to_microseconds(${n}))`;
  }
}

/**
 * Kusto's datetime range in µs since the Unix epoch, 0001-01-01 … 10000-01-01, as doubles: a guard
 * against overflow before make_timestamp; inRangeUs then keeps the exact range.
 */
const MIN_US = -62_135_596_800_000_000;
const MAX_US = 253_402_300_800_000_000;

/**
 * A TIMESTAMP inside Kusto's range, else null. A CASE rather than DuckDB's try(), which as a GROUP
 * BY key fails DuckDB 1.5's binder ("Failed to bind column reference"): `summarize by
 * datetime_add(…)` failed before (decision 0036).
 */
const inRangeUs = (x: Sql): Sql =>
  sql`(CASE WHEN ${x} BETWEEN TIMESTAMP '0001-01-01' AND TIMESTAMP '9999-12-31 23:59:59.999999' THEN ${x} END)`;

/** Ticks per unit of the fixed-length parts datetime_add adds in ticks. */
const TICKS_PER: Record<string, bigint> = {
  hour: 36_000_000_000n,
  minute: 600_000_000n,
  second: 10_000_000n,
  millisecond: 10_000n,
  microsecond: 10n,
};

/**
 * datetime_add in ticks: calendar parts move the microsecond floor as TIMESTAMP arithmetic does
 * (months clamp to the month's last day) and keep the digit below; fixed-length parts add ticks;
 * nanoseconds add amount / 100 ticks, truncated toward zero as .NET's integer division of a long
 * (Kusto's datetime holds 100 ns ticks, so 1–99 ns add nothing).
 */
function addTicks(p: string, amount: Sql, x: Bound, call: CallExpr): Bound {
  const t = sql`CAST(${ticksSql(x)} AS HUGEINT)`;
  const n = sql`CAST(${amount} AS BIGINT)`;
  let s: Sql;
  if (p === 'nanosecond') s = inKustoRange(sql`(${t} + ${n} // 100)`);
  else if (Object.hasOwn(TICKS_PER, p)) s = inKustoRange(sql`(${t} + CAST(${n} AS HUGEINT) * ${int(TICKS_PER[p] as bigint)})`);
  else {
    const limit = int(PERIODS_IN_RANGE[p] as bigint);
    const moved = ticksOfMicros(addSql(p, amount, floorMicros(ticksSql(x))));
    s = sql`(CASE WHEN abs(${n}) <= ${limit} THEN ${inKustoRange(sql`(${moved} + ${floorMod(ticksSql(x), 10n)})`)} END)`;
  }
  return tickDatetime(s, call.span);
}

/**
 * endofday/week/month/year: the last tick of the period `offset` periods from the one holding the
 * date — the next period's start minus one tick (Kusto: …T23:59:59.9999999Z), carried as ticks;
 * null past Kusto's datetime range.
 */
const endOf =
  (unit: string, start: (x: Sql) => Sql, add: (n: Sql) => Sql): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1, 2);
    const x = date(args[0] as Bound, call);
    const offset = args[1] ? whole(args[1], call, 'offset') : sql`0`;
    const next = sql`(${start(x)} + ${add(sql`CAST(${offset} + 1 AS INTEGER)`)})`;
    const limit = int(PERIODS_IN_RANGE[unit] as bigint);
    // In range exactly when the next period starts after 0001-01-01 and by 10000-01-01: checked on
    // the TIMESTAMP, which costs DuckDB far less than a range check of the ticks (datetime-ticks.mjs).
    const inRange = sql`abs(${offset}) <= ${limit} AND ${next} > TIMESTAMP '0001-01-01' AND ${next} <= TIMESTAMP '10000-01-01'`;
    return tickDatetime(sql`(CASE WHEN ${inRange} THEN ${ticksOfMicros(next)} - 1 END)`, call.span);
  };

/** A time zone name DuckDB's ICU and Kusto both know (IANA); checked here so a typo is a 400. */
function timeZone(b: Bound, call: CallExpr): string {
  const tz = constString(b, call, 'time zone');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    throw queryError(`'${call.name}': '${tz}' is not a known time zone.`, b.span);
  }
  return tz;
}

/** Unix time in a unit (microseconds per unit) to a datetime; out of range gives null. */
const unixTime =
  (perUnit: number): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    const v = args[0] as Bound;
    want(v, ['long', 'real'], call, 'value');
    const us =
      perUnit >= 1
        ? v.type === 'long'
          ? sql`(${v.sql} * ${int(perUnit)})`
          : sql`CAST(round(${v.sql} * ${int(perUnit)}) AS BIGINT)`
        : sql`CAST(floor(${coerce(v, 'real')} / 1000) AS BIGINT)`;
    // Kusto's range, checked on the value before the product could overflow and exactly on the
    // result (a CASE, not try(): try() as a GROUP BY key fails DuckDB's binder; decision 0036).
    const [lo, hi] = [MIN_US / perUnit, MAX_US / perUnit];
    const inRange = sql`${coerce(v, 'real')} BETWEEN ${dbl(lo)} AND ${dbl(hi)}`;
    return result('datetime', sql`(CASE WHEN ${inRange} THEN ${inRangeUs(sql`make_timestamp(${us})`)} END)`, call);
  };

/**
 * datetime_utc_to_local / datetime_local_to_utc. A zone's offset is whole seconds, so a datetime
 * carried as ticks shifts its microsecond floor and keeps the digit below (decision 0036's
 * amendment).
 */
function timeZoneShift(args: Bound[], call: CallExpr, shift: (x: Sql, tz: Sql) => Sql): Bound {
  arity(call, args.length, 2);
  const b = args[0] as Bound;
  date(b, call);
  const tz = sql`${str(timeZone(args[1] as Bound, call))}`;
  if (!b.ticks) return result('datetime', shift(b.sql, tz), call);
  const shifted = ticksOfMicros(shift(floorMicros(b.sql), tz));
  return tickDatetime(sql`(${shifted} + ${floorMod(b.sql, 10n)})`, call.span);
}

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  bin_at: (args, call) => {
    arity(call, args.length, 3);
    return binAtSql(args[0] as Bound, args[1] as Bound, args[2] as Bound, call);
  },
  datetime_add: (args, call) => {
    arity(call, args.length, 3);
    const p = part(args[0] as Bound, call);
    const amount = whole(args[1] as Bound, call, 'amount');
    const x = args[2] as Bound;
    date(x, call);
    // A nanosecond amount, or a datetime already holding ticks, is added in ticks (decision 0036).
    if (p === 'nanosecond' || x.ticks) return addTicks(p, amount, x, call);
    const limit = int(PERIODS_IN_RANGE[p] as bigint);
    const moved = inRangeUs(addSql(p, amount, x.sql));
    return result('datetime', sql`(CASE WHEN abs(CAST(${amount} AS BIGINT)) <= ${limit} THEN ${moved} END)`, call);
  },
  datetime_diff: (args, call) => {
    arity(call, args.length, 3);
    const p = part(args[0] as Bound, call);
    const [a, b] = [args[1] as Bound, args[2] as Bound];
    date(a, call);
    date(b, call);
    // Nanoseconds: the ticks apart × 100. Every other part counts boundaries of whole
    // microseconds or more, which the microsecond floor of each side crosses the same way.
    if (p === 'nanosecond' && (a.ticks || b.ticks)) return result('long', sql`((${ticksSql(a)} - ${ticksSql(b)}) * 100)`, call);
    return result('long', sql`CAST(${diffSql(p, floorView(a).sql, floorView(b).sql)} AS BIGINT)`, call);
  },
  dayofweek: (args, call) => {
    arity(call, args.length, 1);
    // A timespan: whole days since the Sunday before.
    return result('timespan', sql`(CAST(dayofweek(${date(args[0] as Bound, call)}) AS BIGINT) * 864000000000)`, call);
  },
  dayofmonth: field((x) => sql`day(${x})`),
  dayofyear: field((x) => sql`dayofyear(${x})`),
  getyear: field((x) => sql`year(${x})`),
  getmonth: field((x) => sql`month(${x})`),
  monthofyear: field((x) => sql`month(${x})`),
  hourofday: field((x) => sql`hour(${x})`),
  week_of_year: field((x) => sql`weekofyear(${x})`), // ISO 8601, as Kusto
  endofday: endOf(
    'day',
    (x) => sql`date_trunc('day', ${x})`,
    (n) => sql`to_days(${n})`,
  ),
  endofweek: endOf('week', sunday, (n) => sql`to_days(${n} * 7)`),
  endofmonth: endOf(
    'month',
    (x) => sql`date_trunc('month', ${x})`,
    (n) => sql`to_months(${n})`,
  ),
  endofyear: endOf(
    'year',
    (x) => sql`date_trunc('year', ${x})`,
    (n) => sql`to_years(${n})`,
  ),
  startofyear: (args, call) => {
    arity(call, args.length, 1, 2);
    const x = date(args[0] as Bound, call);
    const offset = args[1] ? whole(args[1], call, 'offset') : undefined;
    const s = sql`date_trunc('year', ${x})`;
    if (!offset) return result('datetime', s, call);
    const moved = inRangeUs(sql`(${s} + to_years(CAST(${offset} AS INTEGER)))`);
    return result('datetime', sql`(CASE WHEN abs(${offset}) <= ${int(PERIODS_IN_RANGE.year as bigint)} THEN ${moved} END)`, call);
  },
  make_datetime: (args, call) => {
    arity(call, args.length, 3, 6);
    const [y, m, d] = args.slice(0, 3).map((a, i) => whole(a, call, ['year', 'month', 'day'][i] as string)) as [Sql, Sql, Sql];
    const h = args[3] ? whole(args[3], call, 'hour') : sql`0`;
    const mi = args[4] ? whole(args[4], call, 'minute') : sql`0`;
    let s: Sql = sql`0.0`;
    if (args[5]) {
      want(args[5], ['long', 'real'], call, 'second');
      s = coerce(args[5], 'real');
    }
    // Kusto: year 1..9999, and fields in their ranges; anything else gives null (DuckDB would roll over).
    const valid = sql`(${y} BETWEEN 1 AND 9999 AND ${m} BETWEEN 1 AND 12 AND ${d} BETWEEN 1 AND 31 AND ${h} BETWEEN 0 AND 23 AND ${mi} BETWEEN 0 AND 59 AND ${s} >= 0 AND ${s} < 60)`;
    const made = sql`try(make_timestamp(${y}, ${m}, ${d}, ${h}, ${mi}, ${s}))`;
    // make_timestamp accepts 31 February by rolling over: keep only days that exist.
    return result('datetime', sql`(CASE WHEN ${valid} AND day(${made}) = ${d} THEN ${made} END)`, call);
  },
  make_timespan: (args, call) => {
    arity(call, args.length, 2, 4);
    // Every field is an integer (Microsoft's analyzer refuses a real); hours/minutes may overflow into days.
    const parts = args.length === 2 ? [null, args[0], args[1], null] : args.length === 3 ? [null, ...args] : args;
    const [d, h, m, s] = parts as [Bound | null, Bound, Bound, Bound | null];
    const field = (b: Bound | null, what: string): Sql => {
      if (!b) return sql`0`;
      want(b, ['long'], call, what);
      return b.sql;
    };
    const seconds = sql`(${field(d, 'days')} * 86400 + ${field(h, 'hours')} * 3600 + ${field(m, 'minutes')} * 60 + ${field(s, 'seconds')})`;
    return result('timespan', sql`(${seconds} * 10000000)`, call);
  },
  unixtime_seconds_todatetime: unixTime(1_000_000),
  unixtime_milliseconds_todatetime: unixTime(1000),
  unixtime_microseconds_todatetime: unixTime(1),
  unixtime_nanoseconds_todatetime: (args, call) => {
    arity(call, args.length, 1);
    const v = args[0] as Bound;
    want(v, ['long', 'real'], call, 'value');
    // Kusto's datetime holds 100 ns ticks, so the answer keeps them (decision 0036's amendment):
    // the floor of nanoseconds / 100, exact for a long; a real is a double (53 bits), so its ticks
    // are what the double holds. Kusto's range checked on the value before any product or cast.
    const ticks =
      v.type === 'long'
        ? sql`(${floorDiv(v.sql, 100n)} + ${EPOCH_TICKS})`
        : sql`(CAST(floor(${v.sql} / 100) AS BIGINT) + ${EPOCH_TICKS})`;
    const inRange = sql`${coerce(v, 'real')} BETWEEN ${dbl(MIN_US * 1000)} AND ${dbl(MAX_US * 1000)}`;
    return tickDatetime(sql`(CASE WHEN ${inRange} THEN ${inKustoRange(ticks)} END)`, call.span);
  },
  datetime_utc_to_local: (args, call) => timeZoneShift(args, call, (x, tz) => sql`timezone(${tz}, timezone('UTC', ${x}))`),
  datetime_local_to_utc: (args, call) => timeZoneShift(args, call, (x, tz) => sql`timezone('UTC', timezone(${tz}, ${x}))`),
};

/**
 * One element of a format_timespan format over the absolute tick count `t` (a .NET custom TimeSpan
 * format prints no sign). Timespans keep Kusto's 100 ns ticks, so every element is exact.
 */
function timespanPiece(token: string, t: Sql): Sql | undefined {
  const c = token[0] as string;
  const n = token.length;
  // DuckDB's lpad also cuts a longer text to the width: pad to at least the width, never cut.
  const padded = (v: Sql, width: number) =>
    sql`lpad(CAST(${v} AS VARCHAR), CAST(greatest(length(CAST(${v} AS VARCHAR)), ${int(width)}) AS INTEGER), '0')`;
  if (c === 'd' && n <= 8) return padded(sql`(${t} // 864000000000)`, n);
  if ((c === 'h' || c === 'H') && n <= 2) return padded(sql`((${t} // 36000000000) % 24)`, n);
  if (c === 'm' && n <= 2) return padded(sql`((${t} // 600000000) % 60)`, n);
  if (c === 's' && n <= 2) return padded(sql`((${t} // 10000000) % 60)`, n);
  if ((c === 'f' || c === 'F') && n <= 7) {
    const digits = sql`substr(lpad(CAST(${t} % 10000000 AS VARCHAR), 7, '0'), 1, ${int(n)})`;
    return c === 'F' ? sql`rtrim(${digits}, '0')` : digits;
  }
  return undefined;
}

function formatTimespanSql(format: string, x: Sql, formatSpan: Bound['span']): Sql {
  // The smallest long has no absolute value; no timespan Kusto shows reaches it.
  const t = sql`abs(CASE WHEN ${x} = -9223372036854775808 THEN NULL ELSE ${x} END)`;
  const pieces: Sql[] = [];
  let literal = '';
  const flush = () => {
    if (literal) pieces.push(sql`${str(literal)}`);
    literal = '';
  };
  for (let i = 0; i < format.length; ) {
    const c = format[i] as string;
    if (!'dhHmsfF'.includes(c)) {
      literal += c;
      i++;
      continue;
    }
    let j = i;
    while (j < format.length && format[j] === c) j++;
    const token = format.slice(i, j);
    const piece = timespanPiece(token, t);
    if (!piece) throw queryError(`format_timespan: the format '${token}' is not supported.`, formatSpan);
    flush();
    pieces.push(piece);
    i = j;
  }
  flush();
  if (pieces.length === 0) return sql`''`;
  return sql`(CASE WHEN ${t} IS NULL THEN '' ELSE concat(${join(pieces, ', ')}) END)`;
}

IMPLEMENTATIONS.format_timespan = (args, call) => {
  arity(call, args.length, 2);
  const x = args[0] as Bound;
  want(x, ['timespan'], call, 'timespan');
  const format = constString(args[1] as Bound, call, 'format');
  return { ...result('string', formatTimespanSql(format, x.sql, (args[1] as Bound).span), call), notNull: true };
};

/**
 * bin_auto never reaches the binder: the parser rewrites it to bin/bin_at with the size and fixed
 * point of the query's `set query_bin_auto_size` / `query_bin_auto_at` (parse-kql.ts binAutoCall).
 * It is declared here so it is documented and completed like every other function.
 */
IMPLEMENTATIONS.bin_auto = (_args, call) => {
  throw queryError("bin_auto needs the bin size: put 'set query_bin_auto_size = <size>;' before the query.", call.span);
};

const NONE: NamingRule = { kind: 'none' };

function fn(name: string, signatures: string[], returns: string, naming: NamingRule = NONE): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the date and time function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

const accessor = (name: string, what: string) => fn(name, [`${name}(date: datetime): int`], `int: ${what}`);
const unix = (unit: string) =>
  fn(
    `unixtime_${unit}_todatetime`,
    [`unixtime_${unit}_todatetime(${unit}: long|real): datetime`],
    `datetime from Unix ${unit}; null out of range${unit === 'nanoseconds' ? ' (kept to the 100 ns tick, floored)' : ''}`,
  );

export const DATETIME_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'bin_at',
    ['bin_at(value: long|real|datetime|timespan, size: long|real|timespan, fixed_point: same as value)'],
    'the type of value: bins of size aligned to fixed_point',
    { kind: 'first-argument' },
  ),
  fn(
    'datetime_add',
    ['datetime_add(part: string, amount: long, date: datetime): datetime'],
    'datetime (months clamp to the last day); part year … nanosecond (100 ns ticks: nanoseconds / 100, truncated)',
  ),
  fn(
    'datetime_diff',
    ['datetime_diff(part: string, date1: datetime, date2: datetime): long'],
    'long: part boundaries from date2 to date1 (weeks start on Sunday)',
  ),
  fn('dayofweek', ['dayofweek(date: datetime): timespan'], 'timespan: whole days since Sunday'),
  accessor('dayofmonth', 'day of the month, 1 to 31'),
  accessor('dayofyear', 'day of the year, 1 to 366'),
  accessor('getyear', 'the year'),
  accessor('getmonth', 'the month, 1 to 12'),
  accessor('monthofyear', 'the month, 1 to 12'),
  accessor('hourofday', 'the hour, 0 to 23'),
  accessor('week_of_year', 'the ISO 8601 week number'),
  fn('startofyear', ['startofyear(date: datetime[, offset: long]): datetime'], 'datetime'),
  fn(
    'endofday',
    ['endofday(date: datetime[, offset: long]): datetime'],
    "datetime: the day's last 100 ns tick (…T23:59:59.9999999Z)",
  ),
  fn('endofweek', ['endofweek(date: datetime[, offset: long]): datetime'], "datetime: the last tick of the week (Saturday's)"),
  fn('endofmonth', ['endofmonth(date: datetime[, offset: long]): datetime'], "datetime: the month's last 100 ns tick"),
  fn('endofyear', ['endofyear(date: datetime[, offset: long]): datetime'], "datetime: the year's last 100 ns tick"),
  fn(
    'make_datetime',
    ['make_datetime(year, month, day[, hour, minute[, second: real]]): datetime'],
    'datetime; null when a field is out of range or the day does not exist',
  ),
  fn(
    'make_timespan',
    [
      'make_timespan(hours: long, minutes: long)',
      'make_timespan(hours, minutes, seconds: long)',
      'make_timespan(days, hours, minutes, seconds: long)',
    ],
    'timespan',
  ),
  fn(
    'bin_auto',
    ['bin_auto(value: long|real|datetime|timespan)'],
    'the type of value: bin(value, query_bin_auto_size), aligned to query_bin_auto_at when set',
    { kind: 'first-argument' },
  ),
  fn(
    'format_timespan',
    ['format_timespan(timespan: timespan, format: string): string'],
    'string: d…dddddddd, h/hh/H/HH, m/mm, s/ss, f…fffffff, F…FFFFFFF (no sign, as .NET); other characters as written',
    { kind: 'first-argument' },
  ),
  unix('seconds'),
  unix('milliseconds'),
  unix('microseconds'),
  unix('nanoseconds'),
  fn(
    'datetime_utc_to_local',
    ['datetime_utc_to_local(from: datetime, timezone: string): datetime'],
    'datetime: the wall-clock time in the (IANA) time zone',
  ),
  fn(
    'datetime_local_to_utc',
    ['datetime_local_to_utc(from: datetime, timezone: string): datetime'],
    'datetime in UTC of a wall-clock time in the (IANA) time zone',
  ),
];
