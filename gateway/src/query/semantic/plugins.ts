/**
 * `evaluate` plugins: bag_unpack, pivot and narrow. bag_unpack and pivot make one column per
 * distinct property name or pivot value, so without an output schema their columns depend on the
 * data: a first phase asks for those names over the same input (phases.ts), and the operator is
 * bound with the answer. At most MAX_PLUGIN_COLUMNS such columns; past it the query is refused.
 */
import { queryError, type Span } from '../errors.js';
import { join, type Sql, sql, str } from '../sql/sql.js';
import type { Expr, NamedExpr, Operator, OutputSchema } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { IF_FORM } from './aggregate-if-forms.js';
import { type Bound, convert } from './bound.js';
import { ticksFlag } from './datetime-ticks.js';
import type { ExprBinder } from './expr-binder.js';
import { identOf } from './expr-binder.js';
import { NameAllocator } from './naming.js';
import type { PhaseAnswer } from './phases.js';
import { type Column, type Output, type Rel, ROW_ORDER, relColumns } from './rel.js';

/** Most columns bag_unpack or pivot may add (distinct property names, distinct pivot values). */
export const MAX_PLUGIN_COLUMNS = 1000;

/** What the plugins use of the query binder. */
export interface PluginHost {
  newColumn(name: string, type: KqlType): Column;
  exprBinder(columns: Column[]): ExprBinder;
  summarize(input: Rel, columns: Column[], aggregates: NamedExpr[], by: NamedExpr[], span: Span): Rel;
  answer(rel: Rel, maxRows: number): PhaseAnswer;
}

type Evaluate = Extract<Operator, { kind: 'evaluate' }>;

export function bindEvaluate(host: PluginHost, input: Rel, op: Evaluate): Rel {
  const named = op.named[0];
  if (named && op.plugin !== 'bag_unpack')
    throw queryError(`The argument '${named.name}' of ${op.plugin}() is not supported.`, named.span);
  switch (op.plugin) {
    case 'bag_unpack':
      return bagUnpack(host, input, op);
    case 'pivot':
      return pivot(host, input, op);
    case 'narrow':
      if (op.args.length > 0) throw queryError('narrow() takes no arguments.', op.span);
      if (op.schema) throw queryError('narrow() takes no output schema.', op.schema.span);
      return narrow(host, input);
    default:
      throw queryError(`The plugin '${op.plugin}' of 'evaluate' is not supported.`, op.pluginSpan);
  }
}

const nameExpr = (name: string, span: Span): Expr => ({ kind: 'name', name, span });
const strExpr = (value: string, span: Span): Expr => ({ kind: 'literal', lit: { type: 'string', value }, span });
const callExpr = (name: string, args: Expr[], span: Span): Expr => ({ kind: 'call', name, nameSpan: span, args, span });

function constString(b: Bound, what: string): string {
  if (b.value?.type !== 'string') throw queryError(`${what} must be a constant string.`, b.span);
  return b.value.value;
}

/** DuckDB's json_type of a property value → the column type it gives on its own. */
function typeOfJson(jsonType: string): KqlType | undefined {
  switch (jsonType) {
    // DuckDB types a non-negative integer as UBIGINT.
    case 'BIGINT':
    case 'UBIGINT':
      return 'long';
    case 'DOUBLE':
      return 'real';
    case 'VARCHAR':
      return 'string';
    case 'BOOLEAN':
      return 'bool';
    case 'NULL':
      return undefined;
    default:
      return 'dynamic';
  }
}

/**
 * `bag_unpack(column [, prefix [, columnsConflict [, ignoredProperties]]]) [: (schema)]`: the
 * column is removed and every top-level property of its bags becomes a column (named prefix +
 * property, in name order), typed as the property's values when they all have one type, dynamic
 * otherwise. A property named like an existing column: an error (columnsConflict='error', the
 * default), the property's column replaces it ('replace_source') or it is left out ('keep_source').
 */
function bagUnpack(host: PluginHost, input: Rel, op: Evaluate): Rel {
  const columns = relColumns(input);
  const binder = host.exprBinder(columns);
  const [colArg, ...positional] = op.args;
  // Options by position or by name.
  const options: (Expr | undefined)[] = [...positional];
  for (const n of op.named) {
    const at = ['outputcolumnprefix', 'columnsconflict', 'ignoredproperties'].indexOf(n.name.toLowerCase());
    if (at < 0) throw queryError(`bag_unpack has no argument '${n.name}'.`, n.span);
    options[at] = n.expr;
  }
  const [prefixArg, conflictArg, ignoredArg, ...rest] = options;
  if (!colArg || rest.length > 0) throw queryError('bag_unpack takes a column and up to three options.', op.span);
  if (colArg.kind !== 'name') throw queryError('bag_unpack unpacks a column: name it.', colArg.span);
  const source = binder.bind(colArg);
  if (source.type !== 'dynamic' || !source.column) throw queryError('bag_unpack needs a dynamic column.', colArg.span);
  const prefix = prefixArg ? constString(binder.bind(prefixArg), 'The column prefix of bag_unpack') : '';
  const conflict = conflictArg ? constString(binder.bind(conflictArg), 'columnsConflict') : 'error';
  if (!['error', 'replace_source', 'keep_source'].includes(conflict))
    throw queryError("columnsConflict is 'error', 'replace_source' or 'keep_source'.", conflictArg?.span ?? op.span);
  const ignored = new Set<string>();
  if (ignoredArg) {
    const b = binder.bind(ignoredArg);
    const list = b.value?.type === 'dynamic' && b.value.value !== null ? (JSON.parse(b.value.value) as unknown) : undefined;
    if (!Array.isArray(list)) throw queryError('ignoredProperties must be a constant dynamic array of names.', ignoredArg.span);
    for (const n of list) ignored.add(String(n));
  }
  const kept = columns.filter((c) => c !== source.column);

  let slots: { name: string; type: KqlType }[];
  let keepInput = true;
  if (op.schema) {
    keepInput = op.schema.star;
    slots = schemaSlots(op.schema, prefix, keepInput ? kept : []);
  } else {
    slots = discoverSlots(host, input, source, op.span).filter((s) => !ignored.has(s.name));
  }
  const outputs: Output[] = keepInput ? kept.map((c) => ({ col: c, sql: identOf(c) })) : [];
  for (const slot of slots) {
    const name = prefix + slot.name;
    const at = outputs.findIndex((o) => o.col.name === name);
    if (at >= 0 && !op.schema) {
      if (conflict === 'error')
        throw queryError(
          `bag_unpack: the property '${slot.name}' would be a column named like the input's '${name}'; use columnsConflict.`,
          op.span,
        );
      // Either way the column stands where the property's column would (Kusto's order).
      const [source] = outputs.splice(at, 1);
      if (conflict === 'keep_source') {
        outputs.push(source as Output);
        continue;
      }
    }
    const access: Expr = { kind: 'index', target: colArg, index: strExpr(slot.name, op.span), span: op.span };
    const value = binder.bind(access);
    const typed = slot.type === 'dynamic' ? value : convert(value, slot.type, 'bag_unpack');
    // A datetime property keeps a 7th fractional digit: the column carries ticks (decision 0048).
    outputs.push({ col: { ...host.newColumn(name, slot.type), ...ticksFlag(typed) }, sql: typed.sql });
  }
  return { kind: 'project', input, outputs, columns: outputs.map((o) => o.col) };
}

/** The slots an output schema declares (without the prefix); input columns it names are taken as given. */
function schemaSlots(schema: OutputSchema, prefix: string, inputColumns: Column[]): { name: string; type: KqlType }[] {
  const names = new NameAllocator(inputColumns.map((c) => c.name));
  return schema.columns.map((c) => {
    if (!names.claim(c.name)) throw queryError(`The column '${c.name}' is already declared.`, c.span);
    return { name: c.name.startsWith(prefix) ? c.name.slice(prefix.length) : c.name, type: c.type };
  });
}

/**
 * First phase of bag_unpack: the distinct (property, JSON type) pairs of the bags, over the same
 * input. The answer decides the columns and their types.
 */
function discoverSlots(host: PluginHost, input: Rel, source: Bound, span: Span): { name: string; type: KqlType }[] {
  const bags: Rel = {
    kind: 'filter',
    input,
    predicate: sql`json_type(${source.sql}) = 'OBJECT'`,
    columns: relColumns(input),
  };
  const entry = host.newColumn('__entry', 'dynamic');
  const entries: Rel = {
    kind: 'mv-expand',
    input: bags,
    lists: [
      sql`list_transform(map_entries(CAST(${source.sql} AS MAP(VARCHAR, JSON))), e -> json_array(e.key, json_type(e.value)))`,
    ],
    outputs: [{ col: entry, element: 0 }],
    columns: [entry],
  };
  const name = host.newColumn('__name', 'string');
  const type = host.newColumn('__type', 'string');
  const pairs: Rel = {
    kind: 'project',
    input: entries,
    outputs: [
      { col: name, sql: sql`json_extract_string(${identOf(entry)}, '$[0]')` },
      { col: type, sql: sql`coalesce(json_extract_string(${identOf(entry)}, '$[1]'), 'NULL')` },
    ],
    columns: [name, type],
  };
  const distinct = host.summarize(
    pairs,
    [name, type],
    [],
    [
      { expr: nameExpr('__name', span), span },
      { expr: nameExpr('__type', span), span },
    ],
    span,
  );
  const answer = host.answer(distinct, MAX_PLUGIN_COLUMNS * 4);
  const types = new Map<string, Set<KqlType>>();
  for (let r = 0; r < answer.rowCount; r++) {
    const slot = String(answer.values[0]?.[r] ?? '');
    const t = typeOfJson(String(answer.values[1]?.[r] ?? 'NULL'));
    if (!types.has(slot)) types.set(slot, new Set());
    if (t) types.get(slot)?.add(t);
  }
  if (answer.truncated || types.size > MAX_PLUGIN_COLUMNS)
    throw queryError(
      `bag_unpack would make more than ${MAX_PLUGIN_COLUMNS} columns; give an output schema or unpack fewer properties.`,
      span,
    );
  return [...types.keys()]
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    .map((slot) => {
      const t = types.get(slot) as Set<KqlType>;
      return { name: slot, type: t.size === 1 ? ([...t][0] as KqlType) : 'dynamic' };
    });
}

/** Column names an expression reads. */
function namesIn(e: Expr, out: Set<string>): Set<string> {
  switch (e.kind) {
    case 'name':
      out.add(e.name);
      break;
    case 'member':
      namesIn(e.target, out);
      break;
    case 'index':
      namesIn(e.target, out);
      namesIn(e.index, out);
      break;
    case 'call':
      for (const a of e.args) namesIn(a, out);
      break;
    case 'binary':
      namesIn(e.left, out);
      namesIn(e.right, out);
      break;
    case 'unary':
      namesIn(e.operand, out);
      break;
    case 'in':
      namesIn(e.left, out);
      for (const a of e.list) namesIn(a, out);
      break;
    case 'between':
      namesIn(e.left, out);
      namesIn(e.low, out);
      namesIn(e.high, out);
      break;
    default:
      break;
  }
  return out;
}

/**
 * `pivot(column [, aggregate [, by columns…]])`: one row per value of the by columns (default:
 * every column the pivot column and the aggregate do not read), one column per distinct value of
 * the pivot column (as a string, in value order) holding the aggregate (default count()) over the
 * rows with that value. Kusto orders the value columns as it meets the values; Strata sorts them so
 * the answer does not depend on how rows are spread over workers.
 */
function pivot(host: PluginHost, input: Rel, op: Evaluate): Rel {
  const columns = relColumns(input);
  const [pivotArg, ...rest] = op.args;
  if (pivotArg?.kind !== 'name') throw queryError('pivot takes the column to pivot first.', op.args[0]?.span ?? op.span);
  if (!columns.some((c) => c.name === pivotArg.name))
    throw queryError(`The column '${pivotArg.name}' does not exist.`, pivotArg.span);
  let aggregate: Extract<Expr, { kind: 'call' }> = { kind: 'call', name: 'count', nameSpan: op.span, args: [], span: op.span };
  let byArgs = rest;
  const first = rest[0];
  if (first && first.kind === 'call') {
    aggregate = first;
    byArgs = rest.slice(1);
  }
  const ifForm = IF_FORM[aggregate.name.toLowerCase()];
  if (!ifForm) throw queryError(`pivot does not support the aggregate '${aggregate.name}'.`, aggregate.nameSpan);
  for (const b of byArgs) {
    if (b.kind !== 'name') throw queryError('pivot groups by column names.', b.span);
    if (!columns.some((c) => c.name === b.name)) throw queryError(`The column '${b.name}' does not exist.`, b.span);
  }
  const read = namesIn(aggregate, new Set([pivotArg.name]));
  const by: NamedExpr[] = (
    byArgs.length > 0
      ? byArgs.map((b) => (b as { name: string }).name)
      : columns.filter((c) => !read.has(c.name)).map((c) => c.name)
  ).map((n) => ({ expr: nameExpr(n, op.span), span: op.span }));

  const pivotValue = callExpr('tostring', [pivotArg], pivotArg.span);
  let values: string[];
  if (op.schema) {
    const byNames = new Set(by.map((b) => (b.expr as { name: string }).name));
    values = op.schema.columns.filter((c) => !byNames.has(c.name)).map((c) => c.name);
  } else {
    const distinct = host.summarize(input, columns, [], [{ name: '__value', expr: pivotValue, span: op.span }], op.span);
    const answer = host.answer(distinct, MAX_PLUGIN_COLUMNS);
    if (answer.truncated)
      throw queryError(
        `pivot would make more than ${MAX_PLUGIN_COLUMNS} columns; filter the pivot column's values first.`,
        op.span,
      );
    values = (answer.values[0] ?? []).slice(0, answer.rowCount).map((v) => String(v ?? ''));
    values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
  const names = new NameAllocator(by.map((b) => (b.expr as { name: string }).name));
  const isCount = aggregate.name.toLowerCase() === 'count';
  if (!isCount && !aggregate.args[0]) throw queryError(`'${aggregate.name}' needs an argument.`, aggregate.span);
  // Kusto's pivot shows a sum over no rows as 0 (as it does a count), where sumif gives null.
  const zero =
    aggregate.name.toLowerCase() === 'sum'
      ? zeroOf(host.exprBinder(columns).bind(aggregate.args[0] as Expr).type, op.span)
      : undefined;
  const cells: NamedExpr[] = values.map((v) => {
    const predicate: Expr = {
      kind: 'binary',
      op: '==',
      opSpan: op.span,
      left: pivotValue,
      right: strExpr(v, op.span),
      span: op.span,
    };
    const args = isCount ? [predicate] : [aggregate.args[0] as Expr, predicate, ...aggregate.args.slice(1)];
    const cell = callExpr(ifForm, args, aggregate.span);
    const expr = zero ? callExpr('coalesce', [cell, zero], aggregate.span) : cell;
    return { name: v === '' ? names.column() : names.derive(v), expr, span: op.span };
  });
  if (cells.length === 0 && by.length === 0) throw queryError('pivot has no values to make columns of.', op.span);
  return host.summarize(input, columns, cells, by, op.span);
}

/** A zero of a sum's type (a sum of longs is a long, of reals a real, of timespans a timespan). */
function zeroOf(type: KqlType, span: Span): Expr | undefined {
  switch (type) {
    case 'long':
      return { kind: 'literal', lit: { type: 'long', value: 0n }, span };
    case 'real':
      return { kind: 'literal', lit: { type: 'real', value: 0 }, span };
    case 'timespan':
      return { kind: 'literal', lit: { type: 'timespan', value: 0n }, span };
    default:
      return undefined;
  }
}

/**
 * `narrow()`: every cell as a row — Row (the input row's 0-based position), Column (its name) and
 * Value (the value as a string). The rows are numbered in their current order (an arbitrary but
 * fixed one when the input was never sorted, as serialize does).
 */
function narrow(host: PluginHost, input: Rel): Rel {
  const columns = relColumns(input);
  const row = host.newColumn('Row', 'long');
  const numbered: Output[] = [{ col: row, sql: sql`(row_number() OVER (${ROW_ORDER}) - 1)` }];
  const values = columns.map((c) => {
    const b = host.exprBinder(columns).bind(nameExpr(c.name, { start: 0, end: 0 }));
    const s = b.type === 'string' ? b : convert(b, 'string', 'narrow');
    return sql`to_json(coalesce(${s.sql}, ''))`;
  });
  const names = columns.map((c) => sql`to_json(${str(c.name)})`);
  const withRow: Rel = {
    kind: 'project',
    input,
    outputs: [...columns.map((c) => ({ col: c, sql: identOf(c) })), ...numbered],
    columns: [...columns, row],
  };
  const column = host.newColumn('Column', 'string');
  const value = host.newColumn('Value', 'string');
  const asString = (e: Sql) => sql`json_extract_string(${e}, '$')`;
  return {
    kind: 'mv-expand',
    input: withRow,
    lists: [sql`[${join(names, ', ')}]`, sql`[${join(values, ', ')}]`],
    outputs: [
      { col: row, pass: row },
      { col: column, element: 0, cast: asString },
      { col: value, element: 1, cast: asString },
    ],
    columns: [row, column, value],
  };
}
