/**
 * Functions with several result columns (series_stats, series_fit_line) in extend and project:
 * the call binds to a property bag (its `_dynamic` form) and each field becomes a column, named as
 * Microsoft's analyzer names them: `fn_arg_field` (arg: the first argument's column name, empty
 * for an expression), the first column taking the item's name (`st = series_stats(x)`), or the
 * first columns taking the names of `(a, b, …) = fn(…)`. A function may give several columns only for
 * some arguments (array_sort_asc with several arrays gives one per array, named `arg_sorted`).
 */
import { queryError, type Span } from '../errors.js';
import { sql, str } from '../sql/sql.js';
import type { NamedExpr } from '../syntax/ast.js';
import { type Bound, convert } from './bound.js';
import type { ExprBinder } from './expr-binder.js';
import { expressionName } from './naming.js';
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
  const { bag, perArgumentSuffix } = entry.columns;
  const args = e.args.map((a) => binder.bind(a));
  const fields = typeof entry.columns.fields === 'function' ? entry.columns.fields(args) : entry.columns.fields;
  if (!fields) {
    // This call gives one column (array_sort_asc with one array): an ordinary item.
    if (item.names) throw queryError(`'${e.name}' with these arguments gives one column; name it with \`name = …\`.`, item.span);
    return undefined;
  }
  const explicit = item.names ?? (item.name ? [{ name: item.name, span: item.nameSpan ?? item.span }] : []);
  if (explicit.length > fields.length)
    throw queryError(`'${e.name}' gives ${fields.length} columns; ${explicit.length} names were given.`, item.span);
  const first = e.args[0];
  const prefix = `${entry.name}_${first?.kind === 'name' ? first.name : ''}_`;
  const b = bag(args, e, binder);
  return fields.map((f, i) => {
    const value = sql`json_extract(${b.sql}, ${str(f.path ?? `$.${f.name}`)})`;
    const bound: Bound =
      f.type === 'dynamic'
        ? { type: 'dynamic', sql: value, span: e.span }
        : convert({ type: 'dynamic', sql: value, span: e.span }, f.type, e.name);
    const name = explicit[i];
    if (name) return { name: name.name, nameSpan: name.span, bound };
    if (perArgumentSuffix === undefined) return { name: `${prefix}${f.name}`, bound };
    const arg = e.args[i];
    return { name: `${(arg && expressionName(arg)) ?? `array${i}`}_${perArgumentSuffix}`, bound };
  });
}
