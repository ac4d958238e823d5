/**
 * Functions with several result columns (series_stats, series_fit_line, array_sort_asc/desc with
 * several arrays) in extend, project and print: the call binds to a property bag or array (its
 * `_dynamic` form) and each field becomes a column, named as Microsoft's analyzer names them
 * (naming.ts `severalColumnName`): `fn_arg_field`, or `arg_sorted` per array for the sorts; the
 * first column takes the item's name (`st = series_stats(x)`), or the first columns take the
 * names of `(a, b, …) = fn(…)`. A constant index picks one column as an ordinary value
 * (`array_sort_asc(times, commands)[1]`), as Kusto's tuples allow.
 */
import { queryError, type Span } from '../errors.js';
import { sql, str } from '../sql/sql.js';
import type { Expr, NamedExpr } from '../syntax/ast.js';
import { type Bound, convert } from './bound.js';
import type { ExprBinder } from './expr-binder.js';
import { severalColumnName } from './naming.js';
import { scalarFunction } from './registry/registry.js';
import type { ResultField } from './registry/types.js';

export interface ExpandedColumn {
  name: string;
  nameSpan?: Span;
  bound: Bound;
}

type CallExpr = Extract<Expr, { kind: 'call' }>;

/** The columns of a call, or undefined when the call gives one ordinary column. */
interface Spread {
  fields: readonly ResultField[];
  column(i: number): Bound;
}

function spreadCall(e: Expr, binder: ExprBinder): Spread | undefined {
  const entry = e.kind === 'call' ? scalarFunction(e.name) : undefined;
  if (e.kind !== 'call' || !entry?.columns) return undefined;
  const args = e.args.map((a) => binder.bind(a));
  const fields = typeof entry.columns.fields === 'function' ? entry.columns.fields(args) : entry.columns.fields;
  if (!fields) return undefined;
  const b = entry.columns.bag(args, e, binder);
  return {
    fields,
    column: (i) => {
      const f = fields[i] as ResultField;
      const value = sql`json_extract(${b.sql}, ${str(f.path ?? `$.${f.name}`)})`;
      return f.type === 'dynamic'
        ? { type: 'dynamic', sql: value, span: e.span }
        : convert({ type: 'dynamic', sql: value, span: e.span }, f.type, e.name);
    },
  };
}

/** The columns of an item that calls a several-column function, or undefined for other items. */
export function expandMultiColumn(item: NamedExpr, binder: ExprBinder): ExpandedColumn[] | undefined {
  const e = item.expr;
  const spread = spreadCall(e, binder);
  if (!spread || e.kind !== 'call') {
    if (item.names)
      throw queryError('Naming several columns at once, `(a, b) = …`, needs a function with several result columns.', item.span);
    return undefined;
  }
  const { fields } = spread;
  const explicit = item.names ?? (item.name ? [{ name: item.name, span: item.nameSpan ?? item.span }] : []);
  if (explicit.length > fields.length)
    throw queryError(`'${e.name}' gives ${fields.length} columns; ${explicit.length} names were given.`, item.span);
  return fields.map((f, i) => {
    const bound = spread.column(i);
    const name = explicit[i];
    if (name) return { name: name.name, nameSpan: name.span, bound };
    return { name: severalColumnName(e, i, f.name), bound };
  });
}

/** `fn(…)[k]` over a several-column call: its column k; undefined when the call gives one column. */
export function pickColumn(call: CallExpr, index: bigint, span: Span, binder: ExprBinder): Bound | undefined {
  const spread = spreadCall(call, binder);
  if (!spread) return undefined;
  if (index >= BigInt(spread.fields.length))
    throw queryError(`'${call.name}' gives ${spread.fields.length} columns; there is no column ${index}.`, span);
  return { ...spread.column(Number(index)), span };
}
