/**
 * Datetimes with Kusto's 100 ns ticks (decision 0036). Stored datetimes and most datetime
 * expressions are DuckDB TIMESTAMPs (microseconds). An expression whose value can hold a digit
 * below the microsecond — `endofday(…)` (…:59.9999999), `datetime_add('nanosecond', …)`, a
 * literal with 7 fractional digits, a datetime plus a timespan constant that is not whole
 * microseconds — is carried instead as a BIGINT of ticks since 0001-01-01 (.NET's DateTime zero,
 * Kusto's), marked `ticks` on its Bound and on any column it becomes. The binder knows statically
 * which expressions those are; every consumer of a datetime either reads the ticks exactly
 * (comparisons, subtraction, datetime_diff/datetime_part in nanoseconds, format_datetime,
 * tostring, hash, the result's text) or takes the microsecond floor where its answer cannot depend
 * on the digits below it (getyear, startofday, …) — see TICKS_FLOOR_SAFE.
 *
 * Why BIGINT and not DuckDB's TIMESTAMP_NS: TIMESTAMP_NS holds only 1677-09-21…2262-04-11 (casting
 * an earlier TIMESTAMP to it is a conversion error), where Kusto's datetimes run 0001…9999, and
 * `epoch_us` of a TIMESTAMP_NS truncates toward zero before 1970 instead of flooring.
 */
import type { StrataError } from '@strata/common';
import { queryError, type Span } from '../errors.js';
import { int, type Sql, sql } from '../sql/sql.js';
import type { Bound } from './bound.js';

/** Ticks from 0001-01-01 to 1970-01-01. */
export const EPOCH_TICKS = 621_355_968_000_000_000n;
const EPOCH = sql`${int(EPOCH_TICKS)}`;

export const TICKS_PER_DAY = 864_000_000_000n;

/** Kusto's last datetime, 9999-12-31T23:59:59.9999999, in ticks. */
export const MAX_TICKS = 3_155_378_975_999_999_999n;

/**
 * Ticks (BIGINT or HUGEINT arithmetic) inside Kusto's datetime range 0001-01-01 … 9999-12-31, else
 * null. Written as a CASE rather than DuckDB's try(): try() in a GROUP BY key fails DuckDB 1.5's
 * binder ("Failed to bind column reference"), so a summarize by the value would fail.
 */
export const inKustoRange = (t: Sql): Sql => sql`(CASE WHEN ${t} BETWEEN 0 AND ${int(MAX_TICKS)} THEN CAST(${t} AS BIGINT) END)`;

/**
 * More periods of each part than Kusto's whole range holds (10,000 years): a count past it answers
 * null, checked before DuckDB's interval arithmetic could overflow.
 */
export const PERIODS_IN_RANGE: Readonly<Record<string, bigint>> = {
  year: 10_000n,
  quarter: 40_000n,
  month: 120_000n,
  week: 530_000n,
  day: 3_660_000n,
  hour: 87_840_000n,
  minute: 5_270_400_000n,
  second: 316_224_000_000n,
  millisecond: 316_224_000_000_000n,
  microsecond: 316_224_000_000_000_000n,
};

/** Floor division of a BIGINT by a positive constant (DuckDB's `//` truncates toward zero). */
export const floorDiv = (x: Sql, d: bigint): Sql => sql`((${x} - (((${x} % ${int(d)}) + ${int(d)}) % ${int(d)})) // ${int(d)})`;

/** Non-negative remainder by a positive constant. */
export const floorMod = (x: Sql, d: bigint): Sql => sql`(((${x} % ${int(d)}) + ${int(d)}) % ${int(d)})`;

/** µs since the Unix epoch as ticks. */
export const ticksOfUs = (us: bigint): bigint => us * 10n + EPOCH_TICKS;

/** A TIMESTAMP (µs) as ticks. */
export const ticksOfMicros = (x: Sql): Sql => sql`(epoch_us(${x}) * 10 + ${EPOCH})`;

/** Ticks as the TIMESTAMP of their microsecond floor. */
export const floorMicros = (t: Sql): Sql => sql`make_timestamp(${floorDiv(sql`(${t} - ${EPOCH})`, 10n)})`;

/** Ticks as the TIMESTAMP of their microsecond ceiling (the first µs value not below them). */
export const ceilMicros = (t: Sql): Sql => sql`make_timestamp(-${floorDiv(sql`(${EPOCH} - ${t})`, 10n)})`;

/** The ticks of any datetime Bound, whichever form it is carried in. */
export function ticksSql(b: Bound): Sql {
  return b.ticks ? b.sql : ticksOfMicros(b.sql);
}

/** A datetime Bound carried as ticks. */
export function tickDatetime(s: Sql, span: Bound['span'], extra: Partial<Bound> = {}): Bound {
  return { type: 'datetime', sql: s, span, ticks: true, ...extra };
}

/** The `ticks` mark of a Bound or Column, to copy onto the column made from it. */
export const ticksFlag = (x: { ticks?: boolean | undefined }): { ticks?: true } => (x.ticks ? { ticks: true } : {});

/** The same datetime at its microsecond floor, as a TIMESTAMP Bound (for TICKS_FLOOR_SAFE consumers). */
export function floorView(b: Bound): Bound {
  if (!b.ticks) return b;
  const { ticks: _ticks, value: _value, floorSql, ...rest } = b;
  return { ...rest, sql: floorSql ?? floorMicros(b.sql) };
}

/**
 * Whether datetime ± timespan must be carried as ticks: the datetime has them, or the span may not
 * be whole microseconds — a constant that is not, or any per-row span (a timespan column holds
 * ticks; the binder cannot know its rows are whole microseconds, and truncating them would answer
 * other than Kusto).
 */
export function spanNeedsTicks(date: Bound, span: Bound): boolean {
  if (date.ticks) return true;
  return !isWholeMicros(span);
}

/** A timespan whose value is whole microseconds: such a constant (or null), or marked `wholeMicros`. */
export function isWholeMicros(span: Bound): boolean {
  if (span.value?.type === 'timespan') return span.value.value === null || span.value.value % 10n === 0n;
  return span.wholeMicros === true;
}

/**
 * datetime ± timespan in ticks, null past Kusto's range. The span is checked against the range
 * first, so the BIGINT sum cannot overflow (both sides are then at most 3.2 × 10¹⁸) and no HUGEINT
 * arithmetic is needed. A TIMESTAMP datetime also gets `floorSql`, the sum's microsecond floor
 * written on the TIMESTAMP's µs (`d + floor(span / 10)`), which floor-safe consumers (bin by whole
 * microseconds, startofday, getyear, …) read instead of converting the ticks back.
 */
export function addSpanTicks(date: Bound, span: Bound, sign: '+' | '-', at: Span): Bound {
  const t = span.sql;
  const op = sign === '+' ? sql`+` : sql`-`;
  const inSpan = (x: Sql) => sql`(CASE WHEN ${t} BETWEEN -${int(MAX_TICKS)} AND ${int(MAX_TICKS)} THEN ${x} END)`;
  const ticks = inSpan(inKustoRange(sql`(${ticksSql(date)} ${op} ${t})`));
  if (date.ticks) return tickDatetime(ticks, at);
  // The floor of d + s (d whole microseconds) is d + floor(s / 10) µs; of d − s, d + floor(−s / 10) µs.
  // Integer µs, no range CASE: DuckDB does not share the repeated expression (bin reads its
  // argument twice), and the CASE made `summarize by bin(Timestamp + Duration, 1h)` 2-3x slower
  // (bench/query/datetime-ticks.mjs). It cannot overflow (|s| / 10 < 10¹⁸ µs, inside DuckDB's
  // TIMESTAMP); only a sum past Kusto's 9999-12-31 reads as that later date here, not null.
  const micros = floorDiv(sign === '+' ? t : sql`(-${t})`, 10n);
  const floorSql = sql`make_timestamp(epoch_us(${date.sql}) + ${micros})`;
  return tickDatetime(ticks, at, { floorSql });
}

/** Kusto's text of a datetime held as ticks: `2017-01-01T23:59:59.9999999Z`. */
export function ticksTextSql(t: Sql): Sql {
  const digits = sql`lpad(CAST(${floorMod(t, 10_000_000n)} AS VARCHAR), 7, '0')`;
  return sql`(strftime(${floorMicros(t)}, '%Y-%m-%dT%H:%M:%S.') || ${digits} || 'Z')`;
}

/**
 * Functions whose answer depends only on the microsecond floor of their datetime arguments, so a
 * ticks argument is passed to them floored: the calendar fields and the starts and ends of
 * periods (a period boundary is a whole day, so the floor lies in the same period).
 */
export const TICKS_FLOOR_SAFE: ReadonlySet<string> = new Set([
  'getyear',
  'getmonth',
  'monthofyear',
  'dayofmonth',
  'dayofyear',
  'dayofweek',
  'hourofday',
  'week_of_year',
  'startofday',
  'startofweek',
  'startofmonth',
  'startofyear',
  'endofday',
  'endofweek',
  'endofmonth',
  'endofyear',
  'gettype',
  'isempty',
  'isnotempty',
]);

/**
 * Functions that answer one of their arguments (or the common type of several): a datetime
 * carried as ticks makes every datetime argument ticks and the answer keeps the mark.
 */
export const TICKS_BRANCHES: ReadonlySet<string> = new Set(['iff', 'iif', 'case', 'coalesce', 'max_of', 'min_of']);

/** Functions that read a ticks datetime argument exactly themselves. */
export const TICKS_AWARE: ReadonlySet<string> = new Set([
  'datetime_add',
  'datetime_diff',
  'datetime_part',
  'format_datetime',
  'tostring',
  'hash',
  'hash_xxhash64',
  'isnull',
  'isnotnull',
  'tolong',
  'todynamic',
  'strcat',
  'todatetime',
  'datetime',
  'datetime_utc_to_local',
  'datetime_local_to_utc',
  'prev',
  'next',
  'pack_array',
  'bag_pack',
  'pack',
  'bin',
  'floor',
  'bin_at',
  'row_window_session',
]);

/**
 * The refusal of a place that does not yet carry a datetime with ticks below the microsecond (it
 * would otherwise have to drop them and answer other than Kusto).
 */
export function refusedTicksUse(what: string, span?: Span): StrataError {
  return queryError(
    `${what}: this datetime can hold 100-nanosecond ticks below the microsecond (endof…, datetime_add of nanoseconds, a 7-digit literal), which are not carried here yet; compare it, format it or use datetime_diff instead, or round it with bin(…, 1microsecond) (decision 0036).`,
    span,
  );
}

/**
 * Aggregates that read a datetime carried as ticks exactly. min, max, take_any, arg_max/arg_min and
 * percentile(s) answer one of its values, ticks kept (their partial states and sorted lists are
 * BIGINT ticks); count and dcount count the ticks values (dcount's distinct list compares ticks);
 * make_list/make_set write each value as Kusto's 7-digit text into the dynamic array.
 */
export const TICKS_AGGREGATES: ReadonlySet<string> = new Set([
  'min',
  'max',
  'agg_min',
  'agg_max',
  'minif',
  'maxif',
  'take_any',
  'take_anyif',
  'arg_max',
  'arg_min',
  'count',
  'dcount',
  'dcountif',
  'make_list',
  'make_set',
  'make_list_if',
  'make_set_if',
  'make_list_with_nulls',
  'percentile',
  'percentiles',
]);
