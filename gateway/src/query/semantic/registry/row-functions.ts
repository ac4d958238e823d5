/**
 * Row functions over serialized rows (issue 16, item 4): row_number, prev, next, row_cumsum.
 * They are window functions over the current row order (`ROW_ORDER`, filled in by the SQL
 * generator), allowed in extend, project and serialize over rows that have an order (after sort,
 * top, serialize, range, datatable …); elsewhere they are refused with what to do.
 */
import { queryError } from '../../errors.js';
import { int, type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, coerce, unify } from '../bound.js';
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
    const type = def ? unify([x, def], `'${call.name}'`) : x.type;
    const dflt = def ? coerce(def, type) : sql`NULL`;
    const f: Sql = fn === 'lag' ? sql`lag` : sql`lead`;
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
];
