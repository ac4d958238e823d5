/**
 * How each scalar function runs: the binding code that checks arguments and writes the SQL with
 * Kusto's semantics. The declarations (signatures, return type, naming) that point here are in
 * `scalar-functions.ts`; this file holds only the implementations and their shared helpers.
 */

import { parseTimespanText } from '@strata/common';
import { queryError, type Span } from '../../errors.js';
import { int, join, type Sql, sql, str, trusted, ts } from '../../sql/sql.js';
import type { Expr, LiteralValue } from '../../syntax/ast.js';
import { TICKS_PER_DAY, TICKS_PER_SECOND } from '../../syntax/literals.js';
import type { KqlType } from '../../types.js';
import { type Bound, coerce, constant, constantDatetime, convert, strSql, unify } from '../bound.js';
import { evalBinary } from '../const-eval.js';
import { addSpanTicks, floorMod, floorView, isWholeMicros, spanNeedsTicks, tickDatetime, ticksSql } from '../datetime-ticks.js';
import { withEpochMicros } from '../epoch-bin-key.js';
import type { ExprBinder } from '../expr-binder.js';
import { decimalAbs, decimalBin, decimalFloor, decimalRound } from './decimal-functions.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;
/** Binds one call whose arguments are already bound. */
export type ScalarFn = (args: Bound[], call: CallExpr, binder: ExprBinder) => Bound;

function arity(call: CallExpr, min: number, max = min): void {
  const n = call.args.length;
  if (n < min || n > max) {
    const expected = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
    throw queryError(
      `The function '${call.name}' takes ${expected} argument${max === 1 && min === 1 ? '' : 's'}, not ${n}.`,
      call.span,
    );
  }
}

function want(b: Bound, types: KqlType[], call: CallExpr, what = 'argument'): void {
  if (!types.includes(b.type)) {
    throw queryError(`The ${what} of '${call.name}' must be ${types.join(' or ')}; this is a ${b.type}.`, b.span);
  }
}

function constLong(b: Bound, call: CallExpr, what: string): bigint {
  if (b.value?.type !== 'long' || b.value.value === null)
    throw queryError(`The ${what} of '${call.name}' must be a constant integer.`, b.span);
  return b.value.value;
}

function constString(b: Bound, call: CallExpr, what: string): string {
  if (b.value?.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a constant string.`, b.span);
  return b.value.value;
}

const bound = (type: KqlType, s: Sql, call: CallExpr, extra: Partial<Bound> = {}): Bound => ({
  type,
  sql: s,
  span: call.span,
  ...extra,
});

function toFn(target: KqlType): ScalarFn {
  return (args, call) => {
    arity(call, 1);
    const a = args[0] as Bound;
    // A 7th fractional digit makes a datetime carried as ticks (decision 0036).
    if (target === 'datetime' && a.value?.type === 'string') return constantDatetime(a.value, call.span);
    if (target === 'timespan' && a.value?.type === 'string')
      return constant({ type: 'timespan', value: parseTimespanText(a.value.value) ?? null }, call.span);
    // tolong of an int (getyear, toint, …) is a long: the int32 mark is only the reported type (decision 0048).
    if (a.type === target) return { ...a, span: call.span, ...(a.int32 ? { int32: false } : {}) };
    // Text per row keeps a 7th fractional digit (decision 0044): convert() carries it as ticks.
    return { ...convert(a, target, call.name), span: call.span };
  };
}

const EPOCH = sql`621355968000000000`;

/** Kusto's bin: floor to a multiple of the size; datetimes align to 0001-01-01 (DateTime zero). */
function binSql(value: Bound, size: Bound, call: CallExpr): Bound {
  const v = value.type === 'dynamic' ? convert(value, 'real', call.name) : value;
  const s = size;
  const positive = (x: Sql) =>
    s.value && s.value.value !== null && Number(s.value.value) > 0 ? x : sql`(CASE WHEN ${s.sql} > 0 THEN ${x} END)`;
  if (v.type === 'datetime' && (v.ticks || !isWholeMicros(s))) {
    want(s, ['timespan'], call, 'bin size');
    // A ticks value by a whole-µs constant size: every boundary is a whole microsecond, so the
    // value's microsecond floor falls in the same bin (decision 0036).
    if (s.value?.type === 'timespan' && isWholeMicros(s)) return binSql(floorView(v), s, call);
    // Bins below the microsecond: floor the ticks since 0001-01-01 (always >= 0) in ticks (decision 0044).
    const t = ticksSql(v);
    return tickDatetime(positive(sql`(${t} - ${t} % ${s.sql})`), call.span);
  }
  if (v.type === 'datetime') {
    want(s, ['timespan'], call, 'bin size');
    const size = s.value?.type === 'timespan' ? s.value.value : null;
    if (size !== null && size > 0n && size % 10n === 0n && TICKS_PER_DAY % size === 0n) {
      // A size that divides a day: 0001-01-01 and 1970-01-01 are whole days apart, so flooring
      // the Unix microseconds gives the same bins with less arithmetic (the common 1m, 5m, 1h, 1d).
      // From 1970 on (nearly every row) the remainder is already the floor's: one modulo instead
      // of three per row (~9 % of a 5-minute-bin summarize's statement; decision 0043).
      const us = sql`${int(size / 10n)}`;
      const e = sql`epoch_us(${v.sql})`;
      const floored = sql`(CASE WHEN ${e} >= 0 THEN ${e} - ${e} % ${us} ELSE ${e} - (((${e} % ${us}) + ${us}) % ${us}) END)`;
      // A summarize by the bin groups by the microseconds (epoch-bin-key.ts).
      return bound('datetime', withEpochMicros(sql`make_timestamp(${floored})`, floored), call);
    }
    const t = sql`(epoch_us(${v.sql}) * 10 + ${EPOCH})`;
    return bound('datetime', positive(sql`make_timestamp((${t} - ${t} % ${s.sql} - ${EPOCH}) // 10)`), call);
  }
  if (v.type === 'timespan') {
    want(s, ['timespan'], call, 'bin size');
    return bound('timespan', positive(sql`(${v.sql} - ((${v.sql} % ${s.sql}) + ${s.sql}) % ${s.sql})`), call);
  }
  if (v.type === 'decimal' || s.type === 'decimal') return decimalBin(v, s, call);
  if (v.type === 'long' && s.type === 'long') {
    return bound('long', positive(sql`(${v.sql} - ((${v.sql} % ${s.sql}) + ${s.sql}) % ${s.sql})`), call);
  }
  if ((v.type === 'long' || v.type === 'real') && (s.type === 'long' || s.type === 'real')) {
    return bound('real', positive(sql`(floor(${coerce(v, 'real')} / ${coerce(s, 'real')}) * ${coerce(s, 'real')})`), call);
  }
  throw queryError(`'${call.name}' cannot bin a ${v.type} by a ${s.type}.`, call.span);
}

const DATETIME_PARTS: Record<string, Sql> = {
  year: sql`year`,
  quarter: sql`quarter`,
  month: sql`month`,
  week_of_year: sql`week`,
  weekofyear: sql`week`,
  week: sql`week`,
  day: sql`day`,
  dayofyear: sql`dayofyear`,
  dayofweek: sql`dayofweek`,
  hour: sql`hour`,
  minute: sql`minute`,
  second: sql`second`,
};

function datetimePart(part: string, x: Sql): Sql | undefined {
  const p = part.toLowerCase();
  if (p === 'millisecond') return sql`(millisecond(${x}) % 1000)`;
  if (p === 'microsecond') return sql`(microsecond(${x}) % 1000000)`;
  if (p === 'nanosecond') return sql`((microsecond(${x}) % 1000000) * 1000)`;
  const fn = Object.hasOwn(DATETIME_PARTS, p) ? DATETIME_PARTS[p] : undefined;
  return fn ? sql`${fn}(${x})` : undefined;
}

/** Kusto format_datetime specifiers → SQL pieces (format strings here are this file's constants). */
function formatPiece(token: string, x: Sql, fraction?: Sql): Sql | undefined {
  const strf: Record<string, string> = {
    yyyy: '%Y',
    yy: '%y',
    MM: '%m',
    dd: '%d',
    HH: '%H',
    hh: '%I',
    mm: '%M',
    ss: '%S',
    tt: '%p',
  };
  const f = Object.hasOwn(strf, token) ? strf[token] : undefined;
  if (f) return sql`strftime(${x}, ${trusted(`'${f}'`)})`;
  switch (token) {
    case 'y':
      return sql`CAST(year(${x}) % 100 AS VARCHAR)`;
    case 'M':
      return sql`CAST(month(${x}) AS VARCHAR)`;
    case 'd':
      return sql`CAST(day(${x}) AS VARCHAR)`;
    case 'H':
      return sql`CAST(hour(${x}) AS VARCHAR)`;
    case 'h':
      return sql`CAST((hour(${x}) + 11) % 12 + 1 AS VARCHAR)`;
    case 'm':
      return sql`CAST(minute(${x}) AS VARCHAR)`;
    case 's':
      return sql`CAST(second(${x}) AS VARCHAR)`;
  }
  if (/^f{1,7}$/.test(token) || /^F{1,7}$/.test(token)) {
    const seven = fraction ?? sql`(lpad(CAST(microsecond(${x}) % 1000000 AS VARCHAR), 6, '0') || '0')`;
    const digits = sql`substr(${seven}, 1, ${int(token.length)})`;
    return token.startsWith('F') ? sql`rtrim(${digits}, '0')` : digits;
  }
  return undefined;
}

function formatDatetime(format: string, date: Bound, call: CallExpr, formatSpan: Span): Sql {
  // Fields come from the microsecond floor; the f/F digits from the ticks when there are any.
  const x = floorView(date).sql;
  const fraction = date.ticks ? sql`lpad(CAST(${floorMod(date.sql, 10_000_000n)} AS VARCHAR), 7, '0')` : undefined;
  const pieces: Sql[] = [];
  let i = 0;
  let literal = '';
  const flush = () => {
    if (literal) pieces.push(sql`${str(literal)}`);
    literal = '';
  };
  while (i < format.length) {
    const c = format[i] as string;
    if ('yMdHhmsftF'.includes(c)) {
      let j = i;
      while (j < format.length && format[j] === c) j++;
      const token = format.slice(i, j);
      const piece = formatPiece(token, x, fraction);
      if (!piece) throw queryError(`format_datetime: the format '${token}' is not supported.`, formatSpan);
      // .NET drops the '.' before F digits that print nothing (12:00:05.FFF → "12:00:05").
      const dot = token.startsWith('F') && literal.endsWith('.');
      if (dot) literal = literal.slice(0, -1);
      flush();
      pieces.push(dot ? sql`(CASE WHEN ${piece} = '' THEN '' ELSE '.' || ${piece} END)` : piece);
      i = j;
    } else {
      literal += c;
      i++;
    }
  }
  flush();
  if (pieces.length === 0) return sql`''`;
  void call;
  return sql`(CASE WHEN ${x} IS NULL THEN NULL ELSE concat(${join(pieces, ', ')}) END)`;
}

const startOf =
  (unit: 'day' | 'week' | 'month'): ScalarFn =>
  (args, call) => {
    arity(call, 1, 2);
    const x = args[0] as Bound;
    want(x, ['datetime'], call);
    let s: Sql;
    if (unit === 'day') s = sql`date_trunc('day', ${x.sql})`;
    else if (unit === 'month') s = sql`date_trunc('month', ${x.sql})`;
    else s = sql`CAST(CAST(${x.sql} AS DATE) - CAST(dayofweek(${x.sql}) AS INTEGER) AS TIMESTAMP)`; // weeks start on Sunday
    const offset = args[1];
    if (offset) {
      want(offset, ['long'], call, 'offset');
      const unitSql =
        unit === 'day'
          ? sql`to_days(CAST(${offset.sql} AS INTEGER))`
          : unit === 'week'
            ? sql`to_days(CAST(${offset.sql} * 7 AS INTEGER))`
            : sql`to_months(CAST(${offset.sql} AS INTEGER))`;
      s = sql`(${s} + ${unitSql})`;
    }
    return bound('datetime', s, call);
  };

export const SCALAR_IMPLEMENTATIONS: Record<string, ScalarFn> = {
  ago: (args, call, binder) => {
    arity(call, 1);
    let a = args[0] as Bound;
    // The product's older form: a bare number of seconds.
    if (a.type === 'long' || a.type === 'real') {
      a =
        a.value && a.value.value !== null
          ? constant({ type: 'timespan', value: BigInt(Math.trunc(Number(a.value.value) * Number(TICKS_PER_SECOND))) }, a.span)
          : { type: 'timespan', sql: sql`CAST(${coerce(a, 'real')} * 10000000 AS BIGINT)`, span: a.span };
    }
    want(a, ['timespan'], call);
    const now = binder.ctx.nowUs;
    // A span that may not be whole microseconds (a constant like 1tick, or per row) keeps its ticks.
    const at = constant({ type: 'datetime', value: now }, call.span);
    if (spanNeedsTicks(at, a)) return addSpanTicks(at, a, '-', call.span);
    if (a.value?.type === 'timespan' && a.value.value !== null) {
      const v = evalBinary('-', { type: 'datetime', value: now }, a.value);
      if (v) return constant(v, call.span);
    }
    return bound('datetime', sql`(${ts(now)} - to_microseconds(${a.sql} // 10))`, call);
  },
  now: (args, call, binder) => {
    arity(call, 0, 1);
    const now: LiteralValue = { type: 'datetime', value: binder.ctx.nowUs };
    const offset = args[0];
    if (!offset) return constant(now, call.span);
    want(offset, ['timespan'], call, 'offset');
    const at = constant(now, call.span);
    if (spanNeedsTicks(at, offset)) return addSpanTicks(at, offset, '+', call.span);
    const v = offset.value ? evalBinary('+', now, offset.value) : undefined;
    if (v) return constant(v, call.span);
    return bound('datetime', sql`(${ts(binder.ctx.nowUs)} + to_microseconds(${offset.sql} // 10))`, call);
  },
  bin: (args, call) => {
    arity(call, 2);
    return binSql(args[0] as Bound, args[1] as Bound, call);
  },
  floor: (args, call) => {
    arity(call, 1, 2);
    if (args.length === 2) return binSql(args[0] as Bound, args[1] as Bound, call);
    const x = args[0] as Bound;
    if (x.type === 'decimal') return decimalFloor(x, call);
    want(x, ['long', 'real'], call);
    return x.type === 'long' ? { ...x, span: call.span } : bound('real', sql`floor(${x.sql})`, call);
  },
  todatetime: toFn('datetime'),
  datetime: toFn('datetime'),
  tostring: toFn('string'),
  // Kusto's int is 32-bit: a value outside it is a conversion that did not succeed, so null.
  toint: (args, call, binder) => {
    const v = toFn('long')(args, call, binder);
    if (v.value !== undefined) {
      const n = v.value.value;
      const outside = typeof n === 'bigint' && (n < -2147483648n || n > 2147483647n);
      // Typed int, as Kusto types it (a long marked int32, decision 0048).
      return { ...(outside ? constant({ type: 'long', value: null }, call.span) : v), int32: true };
    }
    return {
      ...v,
      sql: sql`(CASE WHEN ${v.sql} BETWEEN -2147483648 AND 2147483647 THEN ${v.sql} END)`,
      notNull: false,
      int32: true,
    };
  },
  tolong: toFn('long'),
  todouble: toFn('real'),
  toreal: toFn('real'),
  tobool: toFn('bool'),
  toboolean: toFn('bool'),
  toguid: toFn('guid'),
  totimespan: toFn('timespan'),
  parse_json: toFn('dynamic'),
  todynamic: toFn('dynamic'),
  json: toFn('dynamic'),
  strlen: (args, call) => {
    arity(call, 1);
    return bound('long', sql`length(${strSql(convert(args[0] as Bound, 'string', call.name))})`, call, { notNull: true });
  },
  substring: (args, call) => {
    arity(call, 2, 3);
    const s = strSql(convert(args[0] as Bound, 'string', call.name));
    const start = args[1] as Bound;
    want(start, ['long'], call, 'start');
    const from = sql`(greatest(${start.sql}, 0) + 1)`;
    const len = args[2];
    if (len) {
      want(len, ['long'], call, 'length');
      return bound('string', sql`coalesce(substring(${s}, ${from}, greatest(${len.sql}, 0)), '')`, call, { notNull: true });
    }
    return bound('string', sql`coalesce(substring(${s}, ${from}), '')`, call, { notNull: true });
  },
  tolower: (args, call) => {
    arity(call, 1);
    return bound('string', sql`lower(${strSql(convert(args[0] as Bound, 'string', call.name))})`, call, { notNull: true });
  },
  toupper: (args, call) => {
    arity(call, 1);
    return bound('string', sql`upper(${strSql(convert(args[0] as Bound, 'string', call.name))})`, call, { notNull: true });
  },
  strcat: (args, call) => {
    arity(call, 1, 64);
    return bound(
      'string',
      sql`concat(${join(
        args.map((a) => strSql(convert(a, 'string', call.name))),
        ', ',
      )})`,
      call,
      { notNull: true },
    );
  },
  extract: (args, call) => {
    arity(call, 3, 4);
    const re = constString(args[0] as Bound, call, 'pattern');
    const group = constLong(args[1] as Bound, call, 'capture group');
    if (group < 0n || group > 99n) throw queryError("extract's capture group must be between 0 and 99.", (args[1] as Bound).span);
    const text = strSql(convert(args[2] as Bound, 'string', call.name));
    const match = bound('string', sql`coalesce(regexp_extract(${text}, ${str(re)}, CAST(${int(group)} AS INTEGER)), '')`, call, {
      notNull: true,
    });
    // extract(…, typeof(T)): the match converted to T (null when nothing matches or it does not convert).
    const type = args[3];
    if (type === undefined) return match;
    if (type.typeLiteral === undefined) throw queryError("The last argument of 'extract' must be typeof(T).", type.span);
    return type.typeLiteral === 'string' ? match : convert(match, type.typeLiteral, call.name);
  },
  iff: iffFn,
  iif: iffFn,
  case: (args, call) => {
    if (args.length < 3 || args.length % 2 === 0) {
      throw queryError("'case' takes pairs of condition and value, then a default value.", call.span);
    }
    const conditions: Bound[] = [];
    const values: Bound[] = [];
    for (let i = 0; i + 1 < args.length; i += 2) {
      const c = args[i] as Bound;
      want(c, ['bool'], call, 'condition');
      conditions.push(c);
      values.push(args[i + 1] as Bound);
    }
    const otherwise = args[args.length - 1] as Bound;
    const type = unify([...values, otherwise], "'case'");
    // Constant conditions fold (dashboards compute bucket sizes this way).
    for (let i = 0; i < conditions.length; i++) {
      const c = conditions[i] as Bound;
      if (c.value?.type !== 'bool') break;
      if (c.value.value === true) {
        const v = values[i] as Bound;
        return v.value ? constant(coerceLiteral(v.value, type), call.span) : bound(type, coerce(v, type), call);
      }
      if (i === conditions.length - 1)
        return otherwise.value
          ? constant(coerceLiteral(otherwise.value, type), call.span)
          : bound(type, coerce(otherwise, type), call);
    }
    const whens = join(
      conditions.map((c, i) => sql`WHEN ${c.sql} THEN ${coerce(values[i] as Bound, type)}`),
      ' ',
    );
    return bound(type, sql`(CASE ${whens} ELSE ${coerce(otherwise, type)} END)`, call);
  },
  coalesce: coalesceFn,
  notnull: (args, call, binder) => {
    // The product's notnull(x, default): x, or the default when x is null.
    arity(call, 2);
    return coalesceFn(args, call, binder);
  },
  isnull: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    // Strings are never null in Kusto.
    return bound('bool', x.type === 'string' ? sql`false` : sql`(${x.sql} IS NULL)`, call, { notNull: true });
  },
  isnotnull: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    return bound('bool', x.type === 'string' ? sql`true` : sql`(${x.sql} IS NOT NULL)`, call, { notNull: true });
  },
  isempty: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    return bound('bool', x.type === 'string' ? sql`(${strSql(x)} = '')` : sql`(${x.sql} IS NULL)`, call, { notNull: true });
  },
  isnotempty: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    return bound('bool', x.type === 'string' ? sql`(${strSql(x)} <> '')` : sql`(${x.sql} IS NOT NULL)`, call, { notNull: true });
  },
  not: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    want(x, ['bool'], call);
    if (x.value?.type === 'bool' && x.value.value !== null) return constant({ type: 'bool', value: !x.value.value }, call.span);
    return bound('bool', sql`(NOT ${x.sql})`, call);
  },
  round: (args, call) => {
    arity(call, 1, 2);
    const x = args[0] as Bound;
    const digits = args[1];
    if (digits) want(digits, ['long'], call, 'precision');
    if (x.type === 'decimal') return decimalRound(x, digits, call);
    want(x, ['long', 'real'], call);
    const d = digits ? sql`CAST(${digits.sql} AS INTEGER)` : sql`0`;
    if (x.type === 'long') return bound('long', sql`CAST(round(${x.sql}, ${d}) AS BIGINT)`, call);
    return bound('real', sql`round(${x.sql}, ${d})`, call);
  },
  abs: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    if (x.type === 'decimal') return decimalAbs(x, call);
    want(x, ['long', 'real', 'timespan'], call);
    return bound(x.type, sql`abs(${x.sql})`, call);
  },
  sqrt: (args, call) => {
    arity(call, 1);
    const x = args[0] as Bound;
    // A real also of a decimal (Microsoft's analyzer), through SqlDecimal.ToDouble.
    want(x, ['long', 'real', 'decimal'], call);
    const v = coerce(x, 'real');
    return bound('real', sql`(CASE WHEN ${v} >= 0 THEN sqrt(${v}) END)`, call);
  },
  startofday: startOf('day'),
  startofweek: startOf('week'),
  startofmonth: startOf('month'),
  datetime_part: (args, call) => {
    arity(call, 2);
    const part = constString(args[0] as Bound, call, 'part');
    const x = args[1] as Bound;
    want(x, ['datetime'], call, 'datetime');
    // The nanosecond part of a datetime with ticks: the ticks of its second × 100 (decision 0036);
    // every other part is the same at the microsecond floor.
    // Kusto types every part int (a long marked int32; decision 0048).
    if (x.ticks && part.toLowerCase() === 'nanosecond')
      return bound('long', sql`(${floorMod(x.sql, 10_000_000n)} * 100)`, call, { int32: true });
    const s = datetimePart(part, floorView(x).sql);
    if (!s) throw queryError(`datetime_part: the part '${part}' is not supported.`, (args[0] as Bound).span);
    return bound('long', sql`CAST(${s} AS BIGINT)`, call, { int32: true });
  },
  format_datetime: (args, call) => {
    arity(call, 2);
    const x = args[0] as Bound;
    want(x, ['datetime'], call, 'datetime');
    const format = constString(args[1] as Bound, call, 'format');
    return bound('string', sql`coalesce(${formatDatetime(format, x, call, (args[1] as Bound).span)}, '')`, call, {
      notNull: true,
    });
  },
};

function iffFn(args: Bound[], call: CallExpr): Bound {
  arity(call, 3);
  const [c, a, b] = args as [Bound, Bound, Bound];
  want(c, ['bool'], call, 'condition');
  const type = unify([a, b], `'${call.name}'`);
  if (c.value?.type === 'bool') {
    const pick = c.value.value === true ? a : b;
    return pick.value ? constant(coerceLiteral(pick.value, type), call.span) : bound(type, coerce(pick, type), call);
  }
  return bound(type, sql`(CASE WHEN ${c.sql} THEN ${coerce(a, type)} ELSE ${coerce(b, type)} END)`, call);
}

function coalesceFn(args: Bound[], call: CallExpr, _binder?: ExprBinder): Bound {
  arity(call, 1, 64);
  const type = unify(args, `'${call.name}'`);
  if (type === 'string') {
    // For strings the first non-empty value wins.
    return bound(
      'string',
      sql`coalesce(${join(
        args.map((a) => sql`nullif(${coerce(a, type)}, '')`),
        ', ',
      )}, '')`,
      call,
      { notNull: true },
    );
  }
  return bound(
    type,
    sql`coalesce(${join(
      args.map((a) => coerce(a, type)),
      ', ',
    )})`,
    call,
  );
}

function coerceLiteral(v: LiteralValue, type: KqlType): LiteralValue {
  if (v.type === type) return v;
  if (v.value === null) return { type, value: null } as LiteralValue;
  if (v.type === 'long' && type === 'real') return { type: 'real', value: Number(v.value) };
  return v;
}
