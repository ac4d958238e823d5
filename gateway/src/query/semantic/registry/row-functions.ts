/**
 * Row functions over serialized rows (issue 16, item 4): row_number, prev, next, row_cumsum,
 * row_window_session.
 * They are window functions over the current row order (`ROW_ORDER`, filled in by the SQL
 * generator), allowed in extend, project and serialize over rows that have an order (after sort,
 * top, serialize, range, datatable …); elsewhere they are refused with what to do.
 */
import { queryError } from '../../errors.js';
import { int, type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, coerce, unify } from '../bound.js';
import { tickDatetime, ticksSql } from '../datetime-ticks.js';
import type { ExprBinder } from '../expr-binder.js';
import { ROW_ORDER } from '../rel.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const OVER = sql`OVER (${ROW_ORDER})`;

function serialOnly(call: CallExpr, binder: ExprBinder): void {
  const ctx = binder.ctx.rowFunctions;
  if (!ctx) throw queryError(`'${call.name}' is supported in extend, project and serialize.`, call.nameSpan);
  if (!ctx.serialized)
    throw queryError(
      `'${call.name}' needs serialized rows: put sort, top or serialize before it (the rows here have no order).`,
      call.nameSpan,
    );
}

function constLong(b: Bound | undefined, call: CallExpr, what: string, fallback: bigint): bigint {
  if (!b) return fallback;
  if (b.value?.type !== 'long' || b.value.value === null || b.value.value < 0n)
    throw queryError(`The ${what} of '${call.name}' must be a non-negative constant integer.`, b.span);
  return b.value.value;
}

const prevNext =
  (fn: 'lag' | 'lead'): ScalarFn =>
  (args, call, binder) => {
    serialOnly(call, binder);
    arity(call, args.length, 1, 3);
    const x = args[0] as Bound;
    const offset = constLong(args[1], call, 'offset', 1n);
    const def = args[2];
    const f: Sql = fn === 'lag' ? sql`lag` : sql`lead`;
    // A datetime carried as ticks (decision 0036): the value and a datetime default as ticks.
    if (x.type === 'datetime' && (!def || def.type === 'datetime') && (x.ticks || def?.ticks)) {
      const d = def ? (def.value?.value === null ? sql`CAST(NULL AS BIGINT)` : ticksSql(def)) : sql`NULL`;
      return tickDatetime(sql`${f}(${ticksSql(x)}, ${int(offset)}, ${d}) ${OVER}`, call.span);
    }
    const type = def ? unify([x, def], `'${call.name}'`) : x.type;
    const dflt = def ? coerce(def, type) : sql`NULL`;
    const value = sql`${f}(${coerce(x, type)}, ${int(offset)}, ${dflt}) ${OVER}`;
    // Strings are never null: before the first row prev gives "".
    return { type, sql: type === 'string' ? sql`coalesce(${value}, '')` : value, span: call.span };
  };

/**
 * The window of a row function with an optional restart flag: the current order, partitioned by
 * the restart segment (a new segment at each row whose flag is true).
 */
function windowOf(call: CallExpr, binder: ExprBinder, restart: Bound | undefined, frame: Sql = sql``): Sql {
  if (!restart) return sql`OVER (${ROW_ORDER}${frame})`;
  if (restart.type !== 'bool') throw queryError(`The restart argument of '${call.name}' must be a bool.`, restart.span);
  const segment = binder.ctx.rowFunctions?.restart;
  if (!segment) throw queryError(`The restart argument of '${call.name}' is supported in extend and project.`, restart.span);
  return sql`OVER (PARTITION BY ${segment(restart)} ${ROW_ORDER}${frame})`;
}

const ROW_FUNCTION_NAMES = new Set(['row_number', 'prev', 'next', 'row_cumsum', 'row_window_session']);

/** Whether an expression calls a row function anywhere inside it. */
function usesRowFunction(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(usesRowFunction);
  if (node === null || typeof node !== 'object') return false;
  const o = node as { kind?: unknown; name?: unknown };
  if (o.kind === 'call' && typeof o.name === 'string' && ROW_FUNCTION_NAMES.has(o.name)) return true;
  return Object.values(node).some(usesRowFunction);
}

/** A constant timespan argument of row_window_session, in 100 ns ticks. */
function constSpanTicks(b: Bound, call: CallExpr, what: string): bigint {
  if (b.type !== 'timespan' || b.value?.type !== 'timespan' || b.value.value === null)
    throw queryError(`The ${what} of '${call.name}' must be a constant timespan.`, b.span);
  return b.value.value as bigint;
}

/**
 * row_window_session(expr, maxDistanceFromFirst, maxDistanceBetweenNeighbors[, restart]): the
 * session start of each row, as Kusto defines it: a row starts a session when there is no session
 * (first row, or the previous value was null), when it is at or past the session's first value
 * plus the first limit, at or past the previous value plus the second, or when restart is true; a
 * null value gives null. The session start depends on where the previous session started, so it is
 * a fold over the rows, not a window aggregate: each row folds (`list_reduce`) the values from the
 * start of its segment. The segments are cut (hidden columns, like restart) wherever a session must
 * start anyway — restart true, a null value, or a gap at or past the second limit — which keeps
 * the folds short: the cost is quadratic in the rows of one gap-free run, not in all rows.
 */
function rowWindowSession(args: Bound[], call: CallExpr, binder: ExprBinder): Bound {
  serialOnly(call, binder);
  arity(call, args.length, 3, 4);
  const x = args[0] as Bound;
  // The value is folded inside a window aggregate, where DuckDB cannot nest another window.
  if (usesRowFunction(call.args[0]))
    throw queryError(
      `The value of '${call.name}' cannot use row functions itself: compute it in an extend before.`,
      (call.args[0] as Expr).span,
    );
  if (x.type !== 'datetime')
    throw queryError(`The first argument of 'row_window_session' must be a datetime; this is a ${x.type}.`, x.span);
  const limits = [
    constSpanTicks(args[1] as Bound, call, 'maximum distance from the first value'),
    constSpanTicks(args[2] as Bound, call, 'maximum distance between neighbors'),
  ];
  // Folded in microseconds, or in ticks where a value or a limit can hold a digit below the
  // microsecond (decision 0044): a µs fold would truncate them.
  const inTicks = x.ticks === true || limits.some((l) => l % 10n !== 0n);
  const unit = (l: bigint | undefined) => int(inTicks ? (l as bigint) : (l as bigint) / 10n);
  const first = unit(limits[0]);
  const neighbors = unit(limits[1]);
  const restart = args[3];
  if (restart && restart.type !== 'bool')
    throw queryError(`The restart argument of '${call.name}' must be a bool.`, restart.span);
  const us = inTicks ? ticksSql(x) : sql`epoch_us(${x.sql})`;
  const cut = sql`(coalesce(${restart ? restart.sql : sql`false`}, false) OR coalesce(${us} - lag(${us}) OVER (${ROW_ORDER}) >= ${neighbors}, true))`;
  const segment = binder.ctx.rowFunctions?.restart;
  if (!segment) throw queryError(`'${call.name}' is supported in extend, project and serialize.`, call.nameSpan);
  const partition = sql`PARTITION BY ${segment({ type: 'bool', sql: cut, span: call.span })} `;
  const values = sql`list({'s': ${us}, 'p': ${us}}) OVER (${partition}${ROW_ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`;
  // The fold's state and elements share one type (list_reduce needs it): {s: session start, p: previous}.
  const step = sql`lambda acc, e: CASE WHEN e.p IS NULL THEN {'s': NULL::BIGINT, 'p': NULL::BIGINT} WHEN acc.s IS NULL OR e.p - acc.s >= ${first} OR e.p - acc.p >= ${neighbors} THEN e ELSE {'s': acc.s, 'p': e.p} END`;
  const start = sql`list_reduce(${values}, ${step}, {'s': NULL::BIGINT, 'p': NULL::BIGINT}).s`;
  if (inTicks) return tickDatetime(start, call.span);
  return { type: 'datetime', sql: sql`make_timestamp(${start})`, span: call.span };
}

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  row_number: (args, call, binder) => {
    serialOnly(call, binder);
    arity(call, args.length, 0, 2);
    const start = args[0];
    if (start && start.type !== 'long') throw queryError(`The start of 'row_number' must be a long.`, start.span);
    const base = sql`row_number() ${windowOf(call, binder, args[1])}`;
    return { type: 'long', sql: start ? sql`(${base} + ${start.sql} - 1)` : base, span: call.span, notNull: true };
  },
  prev: prevNext('lag'),
  next: prevNext('lead'),
  row_cumsum: (args, call, binder) => {
    serialOnly(call, binder);
    arity(call, args.length, 1, 2);
    const x = args[0] as Bound;
    if (x.type !== 'long' && x.type !== 'real' && x.type !== 'timespan')
      throw queryError(`The argument of 'row_cumsum' must be long, real or timespan; this is a ${x.type}.`, x.span);
    const frame = sql` ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW`;
    const sum = sql`sum(${x.sql}) ${windowOf(call, binder, args[1], frame)}`;
    return { type: x.type, sql: x.type === 'real' ? sum : sql`CAST(${sum} AS BIGINT)`, span: call.span };
  },
  row_window_session: rowWindowSession,
};

const NONE: NamingRule = { kind: 'none' };

function fn(name: string, signatures: string[], returns: string): ScalarFunctionEntry {
  return { kind: 'scalar', name, signatures, returns, naming: NONE, bind: IMPLEMENTATIONS[name] as ScalarFn };
}

export const ROW_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'row_number',
    ['row_number([start: long[, restart: bool]]): long'],
    'long: the row’s position from start (default 1), over serialized rows; back to start at each row where restart is true',
  ),
  fn(
    'prev',
    ['prev(column: T[, offset: long[, default: T]]): T'],
    'the value offset rows before (null, "" for strings, or default)',
  ),
  fn(
    'next',
    ['next(column: T[, offset: long[, default: T]]): T'],
    'the value offset rows after (null, "" for strings, or default)',
  ),
  fn(
    'row_cumsum',
    ['row_cumsum(value: long|real|timespan[, restart: bool])'],
    'the running sum up to this row, of the type of value; from zero again at each row where restart is true',
  ),
  fn(
    'row_window_session',
    [
      'row_window_session(value: datetime, maxDistanceFromFirst: timespan, maxDistanceBetweenNeighbors: timespan[, restart: bool]): datetime',
    ],
    'datetime: the value at the start of the row’s session; a new session starts at the first row, after a null, at or past the session’s first value plus maxDistanceFromFirst, at or past the previous value plus maxDistanceBetweenNeighbors, or where restart is true; null for a null value',
  ),
];
