/**
 * Functions with several result columns (series_stats, series_fit_line) in extend and project:
 * the call binds to a property bag (its `_dynamic` form) and each field becomes a column, named as
 * Microsoft's analyzer names them: `fn_arg_field` (arg: the first argument's column name, empty
 * for an expression), the first column taking the item's name (`st = series_stats(x)`), or the
 * first columns taking the names of `(a, b, …) = fn(…)`.
 */
import { queryError, type Span } from '../errors.js';
import { sql, str } from '../sql/sql.js';
import type { NamedExpr } from '../syntax/ast.js';
import { type Bound, convert } from './bound.js';
import type { ExprBinder } from './expr-binder.js';
import { scalarFunction } from './registry/registry.js';

export interface ExpandedColumn {
  name: string;
  nameSpan?: Span;
  bound: Bound;
}

/** The columns of an item that calls a several-column function, or undefined for other items. */
export function expandMultiColumn(item: NamedExpr, binder: ExprBinder): ExpandedColumn[] | undefined {
  const e = item.expr;
  const entry = e.kind === 'call' ? scalarFunction(e.name) : undefined;
  if (e.kind !== 'call' || !entry?.columns) {
    if (item.names)
      throw queryError('Naming several columns at once, `(a, b) = …`, needs a function with several result columns.', item.span);
    return undefined;
  }
  const { fields, bag } = entry.columns;
  const explicit = item.names ?? (item.name ? [{ name: item.name, span: item.nameSpan ?? item.span }] : []);
  if (explicit.length > fields.length)
    throw queryError(`'${e.name}' gives ${fields.length} columns; ${explicit.length} names were given.`, item.span);
  const first = e.args[0];
  const prefix = `${entry.name}_${first?.kind === 'name' ? first.name : ''}_`;
  const b = bag(
    e.args.map((a) => binder.bind(a)),
    e,
    binder,
  );
  return fields.map((f, i) => {
    const value = sql`json_extract(${b.sql}, ${str(`$.${f.name}`)})`;
    const bound: Bound =
      f.type === 'dynamic'
        ? { type: 'dynamic', sql: value, span: e.span }
        : convert({ type: 'dynamic', sql: value, span: e.span }, f.type, e.name);
    const name = explicit[i];
    return name ? { name: name.name, nameSpan: name.span, bound } : { name: `${prefix}${f.name}`, bound };
  });
}
