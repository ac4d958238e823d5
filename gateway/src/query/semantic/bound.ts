/**
 * A bound expression: its KQL type, the SQL that computes it, and — when it is a compile-time
 * constant — its value. Helpers here convert between representations with Kusto's rules:
 * strings are never null (a missing string reads as ""), bad conversions give null.
 */
import type { Span } from '../errors.js';
import { queryError } from '../errors.js';
import { bool, dbl, int, param, type Sql, sql, str, ts } from '../sql/sql.js';
import type { LiteralValue } from '../syntax/ast.js';
import { hasSubMicrosecondDigits, parseDateTimeText, subMicrosecondMessage, tickDigit } from '../syntax/literals.js';
import type { KqlType } from '../types.js';
import { EPOCH_TICKS, floorDiv, refusedTicksUse, ticksOfMicros, ticksOfUs, ticksSql, ticksTextSql } from './datetime-ticks.js';
import type { Column } from './rel.js';

export interface Bound {
  type: KqlType;
  sql: Sql;
  /** The constant value, when the expression is one. */
  value?: LiteralValue;
  /** The column, when the expression is a plain column reference. */
  column?: Column;
  /** A dynamic value reached by member/index access, kept as base + JSON pointer segments. */
  json?: { base: Sql; path: string[] };
  /** The SQL value is never NULL. */
  notNull?: boolean;
  /**
   * Set on a function argument that reads the caller's row, inside a toscalar() subquery: the
   * subquery runs once, before any row exists, so the name cannot be used there (as in Kusto).
   */
  outsideRowContext?: boolean;
  /** The type given by a `typeof(T)` argument (the Bound itself is the type's name as a string). */
  typeLiteral?: KqlType;
  /**
   * A datetime carried as BIGINT 100 ns ticks since 0001-01-01 instead of a TIMESTAMP, because
   * its value can hold a digit below the microsecond (decision 0036; datetime-ticks.ts).
   */
  ticks?: boolean;
  /**
   * For a ticks datetime: its microsecond floor written as a TIMESTAMP without the ticks (a
   * TIMESTAMP plus a per-row span), cheaper for the consumers that read only the floor.
   */
  floorSql?: Sql;
  /**
   * A timespan known to be whole microseconds (a multiple of 10 ticks) though not a constant: the
   * difference of two µs datetimes, a long times a whole-µs constant, sums of those. A datetime
   * plus such a span stays a TIMESTAMP (datetime-ticks.ts spanNeedsTicks).
   */
  wholeMicros?: boolean;
  /** A long Kusto types int (getyear, datetime_part, …): only its reported type differs (int-columns.ts). */
  int32?: boolean;
  span: Span;
}

/** SQL for a constant. */
export function literalSql(lit: LiteralValue): Sql {
  switch (lit.type) {
    case 'string':
      return sql`${str(lit.value)}`;
    case 'long':
      return lit.value === null ? sql`CAST(NULL AS BIGINT)` : sql`${int(lit.value)}`;
    case 'real':
      return lit.value === null ? sql`CAST(NULL AS DOUBLE)` : sql`${dbl(lit.value)}`;
    case 'decimal':
      return lit.value === null ? sql`CAST(NULL AS VARCHAR)` : sql`${str(lit.value)}`;
    case 'bool':
      return lit.value === null ? sql`CAST(NULL AS BOOLEAN)` : sql`${bool(lit.value)}`;
    case 'datetime':
      return lit.value === null ? sql`CAST(NULL AS TIMESTAMP)` : sql`${ts(lit.value)}`;
    case 'timespan':
      return lit.value === null ? sql`CAST(NULL AS BIGINT)` : sql`${int(lit.value)}`;
    case 'guid':
      return lit.value === null ? sql`CAST(NULL AS UUID)` : sql`CAST(${str(lit.value)} AS UUID)`;
    case 'dynamic':
      return lit.value === null ? sql`CAST(NULL AS JSON)` : sql`CAST(${str(lit.value)} AS JSON)`;
  }
}

export function constant(lit: LiteralValue, span: Span): Bound {
  // A datetime with a 7th fractional digit is carried as ticks, and not as a folded constant: the
  // constant folding and time pruning read microseconds (decision 0036).
  if (lit.type === 'datetime' && lit.tick && lit.value !== null)
    return { type: 'datetime', sql: sql`${int(ticksOfUs(lit.value) + BigInt(lit.tick))}`, ticks: true, notNull: true, span };
  return { type: lit.type, sql: literalSql(lit), value: lit, notNull: lit.value !== null, span };
}

/** The string value of a string-typed expression, with NULL read as "". */
export function strSql(b: Bound): Sql {
  if (b.type !== 'string') throw new Error(`strSql on ${b.type}`);
  return b.notNull ? b.sql : sql`coalesce(${b.sql}, '')`;
}

/** A constant non-empty string: comparisons with it may skip the null-to-"" step in a filter. */
export function isNonEmptyConstString(b: Bound): boolean {
  return b.value?.type === 'string' && b.value.value !== '';
}

/** Kusto's fixed-width rendering of a datetime: 2024-02-21T07:50:00.0000000Z. */
function datetimeToStringSql(x: Sql): Sql {
  return sql`(strftime(${x}, '%Y-%m-%dT%H:%M:%S.%f') || '0Z')`;
}

/** Kusto's rendering of a timespan: [-][d.]hh:mm:ss[.fffffff]. */
function timespanToStringSql(x: Sql): Sql {
  return sql`(CASE WHEN ${x} IS NULL THEN NULL ELSE
    (CASE WHEN ${x} < 0 THEN '-' ELSE '' END)
    || (CASE WHEN abs(${x}) >= 864000000000 THEN CAST(abs(${x}) // 864000000000 AS VARCHAR) || '.' ELSE '' END)
    || lpad(CAST(abs(${x}) % 864000000000 // 36000000000 AS VARCHAR), 2, '0') || ':'
    || lpad(CAST(abs(${x}) % 36000000000 // 600000000 AS VARCHAR), 2, '0') || ':'
    || lpad(CAST(abs(${x}) % 600000000 // 10000000 AS VARCHAR), 2, '0')
    || (CASE WHEN abs(${x}) % 10000000 <> 0 THEN '.' || lpad(CAST(abs(${x}) % 10000000 AS VARCHAR), 7, '0') ELSE '' END)
  END)`;
}

/** Kusto's rendering of a real: integral values without a fraction (1 rather than 1.0). */
/** A real as Kusto prints it (a JS function inside DuckDB: common/src/query/kusto-udfs.ts, kustoRealText). */
function realToStringSql(x: Sql): Sql {
  return sql`kql_real_tostring(${x})`;
}

/**
 * A datetime from text: ISO forms (an explicit offset `±hh:mm`, `±hhmm` or `±hh` converted to UTC; a
 * time must precede it, so a date's `-02` is not one) or RFC 822/850; otherwise null.
 */
function parseDatetimeSql(text: Sql): Sql {
  const iso = sql`(CASE WHEN regexp_matches(${text}, '[+-][0-9]{2}(:?[0-9]{2})?\\s*$') AND regexp_matches(${text}, '[0-9]{2}:[0-9]{2}') THEN timezone('UTC', TRY_CAST(${text} AS TIMESTAMPTZ)) ELSE TRY_CAST(${text} AS TIMESTAMP) END)`;
  // RFC 822/850 forms only where the ISO cast fails (a JS function: common/src/query/rfc-datetime.ts).
  return sql`coalesce(${iso}, make_timestamp(kql_rfc_datetime_us(${text})))`;
}

/**
 * `todatetime` of text or a dynamic value per row, carried as ticks (decision 0044): Kusto keeps a
 * 7th fractional digit, DuckDB's cast stops at the microsecond (it drops the digits past the 6th,
 * which is the floor), so the ticks come from a TIMESTAMP_NS cast or the text's 7th digit. Digits past the 7th are
 * dropped. The µs parse is the value's floor, kept as `floorSql` for the consumers that read only
 * it. Every text → datetime conversion gives this form (convert(): todatetime, parse, parse-kv, typed
 * mv-expand, bag_unpack, datatable cells), and the operators that make a column of it mark the
 * column ticks (decision 0048).
 */
export function parsedTicks(b: Bound, span: Span): Bound {
  const text = b.type === 'dynamic' ? dynamicTextSql(b.sql) : b.sql;
  const floor = parseDatetimeSql(text);
  // DuckDB's TIMESTAMP_NS cast reads up to 9 fractional digits (offsets converted to UTC) and is as
  // fast as the µs cast, but holds only 1677-09-21 … 2262-04-11 (null outside): its ticks are the
  // floor of nanoseconds / 100. They are used where they agree with the µs parse to the
  // microsecond (the same instant read the same way); elsewhere — outside that range, or text only
  // the µs parse reads — the 7th digit is read from the text (`:ss.fffffff`). A regexp for every
  // row made `max(todatetime(s))` 3.6x the µs parse (1 M rows).
  const fromNs = sql`(${floorDiv(sql`epoch_ns(TRY_CAST(${text} AS TIMESTAMP_NS))`, 100n)} + ${int(EPOCH_TICKS)})`;
  const seventh = sql`coalesce(TRY_CAST(regexp_extract(${text}, ':[0-9]{2}\\.[0-9]{6}([0-9])', 1) AS BIGINT), 0)`;
  const ticks = sql`(CASE WHEN ${floorDiv(sql`(${fromNs} - ${int(EPOCH_TICKS)})`, 10n)} = epoch_us(${floor}) THEN ${fromNs} ELSE ${ticksOfMicros(floor)} + ${seventh} END)`;
  return { type: 'datetime', sql: ticks, ticks: true, floorSql: floor, span };
}

/** A long from text: integers exactly, decimals truncated toward zero; otherwise null. */
function parseLongSql(text: Sql): Sql {
  return sql`(CASE WHEN regexp_full_match(trim(${text}), '[+-]?[0-9]+') THEN TRY_CAST(trim(${text}) AS BIGINT) ELSE TRY_CAST(trunc(TRY_CAST(trim(${text}) AS DOUBLE)) AS BIGINT) END)`;
}

function parseBoolSql(text: Sql): Sql {
  return sql`(CASE lower(trim(${text})) WHEN 'true' THEN true WHEN 'false' THEN false WHEN '1' THEN true WHEN '0' THEN false ELSE NULL END)`;
}

/** Text of a dynamic value: a JSON string unquoted, anything else as JSON text. */
function dynamicTextSql(x: Sql): Sql {
  return sql`json_extract_string(${x}, '$')`;
}

/**
 * A datetime from constant text (or a constant dynamic string), folded in JS: a 7th fractional digit
 * makes it a ticks constant, digits below the tick are refused (decision 0036), text that is not a
 * datetime is null.
 */
export function constantDatetime(v: LiteralValue, span: Span): Bound {
  const text = v.type === 'string' ? v.value : v.type === 'dynamic' && v.value !== null ? jsonStringOf(v.value) : undefined;
  if (text === undefined || text === null) return constant({ type: 'datetime', value: null }, span);
  if (hasSubMicrosecondDigits(text)) throw queryError(subMicrosecondMessage(text), span);
  const us = parseDateTimeText(text);
  const tick = us === undefined ? 0 : tickDigit(text);
  return constant(tick ? { type: 'datetime', value: us ?? null, tick } : { type: 'datetime', value: us ?? null }, span);
}

/** The string a dynamic constant's JSON text holds, if it is a JSON string (todynamic("…") of non-JSON text is one). */
function jsonStringOf(json: string): string | undefined {
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === 'string' ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Conversion with Kusto's `to*()` semantics; throws a query error when Kusto has no such conversion. */
export function convert(b: Bound, target: KqlType, what: string): Bound {
  if (b.type === target) return b;
  const x = b.sql;
  const out = (s: Sql, notNull = false): Bound => ({ type: target, sql: s, notNull, span: b.span });
  const fail = () => queryError(`${what}: a ${b.type} cannot be converted to ${target}.`, b.span);
  switch (target) {
    case 'string':
      switch (b.type) {
        case 'long':
          return out(sql`coalesce(CAST(${x} AS VARCHAR), '')`, true);
        case 'real':
          return out(sql`coalesce(${realToStringSql(x)}, '')`, true);
        case 'bool':
          return out(sql`(CASE WHEN ${x} THEN 'true' WHEN NOT ${x} THEN 'false' ELSE '' END)`, true);
        case 'datetime':
          return out(sql`coalesce(${b.ticks ? ticksTextSql(x) : datetimeToStringSql(x)}, '')`, true);
        case 'timespan':
          return out(sql`coalesce(${timespanToStringSql(x)}, '')`, true);
        case 'guid':
          return out(sql`coalesce(CAST(${x} AS VARCHAR), '')`, true);
        case 'dynamic':
          return out(sql`coalesce(${dynamicTextSql(x)}, '')`, true);
        case 'decimal':
          return out(sql`coalesce(kql_decimal_text(${x}), '')`, true);
      }
      break;
    case 'decimal':
      // SqlDecimal's conversions (decision 0031; common/src/query/udfs/decimal-udfs.ts).
      switch (b.type) {
        case 'string':
          return out(sql`kql_decimal_parse(${x})`);
        case 'long':
          return out(sql`kql_decimal_from_long(${x})`);
        case 'real':
          return out(sql`kql_decimal_from_real(${x})`);
        case 'bool':
          return out(sql`kql_decimal_from_long(CAST(${x} AS BIGINT))`);
        case 'dynamic':
          return out(sql`kql_decimal_parse(${dynamicTextSql(x)})`);
      }
      break;
    case 'long':
      switch (b.type) {
        case 'string':
          return out(parseLongSql(x));
        case 'real':
          return out(sql`TRY_CAST(trunc(${x}) AS BIGINT)`);
        case 'bool':
          return out(sql`CAST(${x} AS BIGINT)`);
        case 'datetime':
          return out(ticksSql(b));
        case 'timespan':
          return out(x);
        case 'dynamic':
          return out(parseLongSql(dynamicTextSql(x)));
        case 'decimal':
          return out(sql`kql_decimal_to_long(${x})`);
      }
      break;
    case 'real':
      switch (b.type) {
        case 'string':
          return out(sql`TRY_CAST(trim(${x}) AS DOUBLE)`);
        case 'long':
        case 'timespan':
          return out(sql`CAST(${x} AS DOUBLE)`);
        case 'bool':
          return out(sql`CAST(CAST(${x} AS INTEGER) AS DOUBLE)`);
        case 'dynamic':
          return out(sql`TRY_CAST(${dynamicTextSql(x)} AS DOUBLE)`);
        case 'decimal':
          return out(sql`kql_decimal_to_real(${x})`);
      }
      break;
    case 'bool':
      switch (b.type) {
        case 'string':
          return out(parseBoolSql(x));
        case 'long':
        case 'real':
          return out(sql`(${x} <> 0)`);
        case 'decimal':
          return out(sql`(kql_decimal_sign(${x}) <> 0)`);
        case 'dynamic':
          return out(parseBoolSql(dynamicTextSql(x)));
      }
      break;
    case 'datetime':
      // Text keeps a 7th fractional digit (Kusto's tick): the value is carried as ticks, and the
      // operators that make a column of it (parse, parse-kv, typed mv-expand, bag_unpack, the
      // several-column functions) mark that column (decision 0048). A constant folds in JS.
      if (b.type === 'string' || b.type === 'dynamic')
        return b.value ? constantDatetime(b.value, b.span) : parsedTicks(b, b.span);
      break;
    case 'timespan':
      switch (b.type) {
        case 'string':
          // `1.02:03:04.5`, `90m` … read by the same code as timespan literals (kusto-udfs.ts).
          return out(sql`kql_timespan_ticks(${x})`);
        case 'dynamic':
          return out(sql`kql_timespan_ticks(${dynamicTextSql(x)})`);
        case 'long':
          return out(x);
        case 'real':
          return out(sql`TRY_CAST(${x} AS BIGINT)`);
      }
      break;
    case 'guid':
      switch (b.type) {
        case 'string':
          return out(sql`TRY_CAST(${x} AS UUID)`);
        case 'dynamic':
          return out(sql`TRY_CAST(${dynamicTextSql(x)} AS UUID)`);
      }
      break;
    case 'dynamic':
      switch (b.type) {
        case 'string':
          // Text that is not JSON is a dynamic string holding it (Kusto's parse_json/todynamic), so
          // todatetime(todynamic("2024-01-01T00:00:00Z")) reads the date; an empty string stays null.
          return out(sql`(CASE WHEN json_valid(${x}) THEN CAST(${x} AS JSON) WHEN ${x} <> '' THEN to_json(${x}) END)`);
        case 'datetime':
          return out(sql`to_json(${b.ticks ? ticksTextSql(x) : datetimeToStringSql(x)})`);
        case 'timespan':
          return out(sql`to_json(${timespanToStringSql(x)})`);
        case 'decimal':
          // A JSON string of the decimal's text ("1.50"): DuckDB's JSON functions read numbers as
          // doubles, which would drop digits and the scale; todecimal() reads the text back exactly.
          return out(sql`to_json(kql_decimal_text(${x}))`);
        default:
          return out(sql`to_json(${x})`);
      }
  }
  throw fail();
}

/** The common type of branches (iff, case, coalesce …): numbers widen to real. */
export function unify(items: Bound[], what: string): KqlType {
  const first = items[0];
  if (!first) throw new Error('unify of nothing');
  // Null literals take the type of the others.
  const typed = items.filter((b) => !(b.value !== undefined && b.value.value === null));
  if (typed.length === 0) return first.type;
  // Datetimes carried as ticks mix only with each other (the binder makes every branch ticks).
  const ticks = typed.find((b) => b.ticks);
  if (ticks && typed.some((b) => b.type === 'datetime' && !b.ticks)) throw refusedTicksUse(what, ticks.span);
  let type = (typed[0] as Bound).type;
  for (const b of typed.slice(1)) {
    if (b.type === type) continue;
    if ((type === 'long' && b.type === 'real') || (type === 'real' && b.type === 'long')) type = 'real';
    // A decimal with longs or reals is a decimal (Microsoft's analyzer types mixed arithmetic so).
    else if (isDecimalMix(type, b.type)) type = 'decimal';
    else throw queryError(`${what}: the values have different types (${type} and ${b.type}).`, b.span);
  }
  return type;
}

/** Decimal with long, real or decimal: the pair is a decimal. */
export function isDecimalMix(a: KqlType, b: KqlType): boolean {
  const numeric = (t: KqlType) => t === 'long' || t === 'real' || t === 'decimal';
  return (a === 'decimal' || b === 'decimal') && numeric(a) && numeric(b);
}

/** Brings a value to the unified type (widening or a null literal of another type). */
export function coerce(b: Bound, type: KqlType): Sql {
  if (b.type === type) return b.sql;
  if (b.value !== undefined && b.value.value === null) return literalSql({ type, value: null } as LiteralValue);
  if (b.type === 'long' && type === 'real') return sql`CAST(${b.sql} AS DOUBLE)`;
  return convert(b, type, 'conversion').sql;
}

export const nullOf = (type: KqlType): Sql => literalSql({ type, value: null } as LiteralValue);

export { param };
