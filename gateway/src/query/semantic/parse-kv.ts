/**
 * The `parse-kv` operator (issue 16, item 5): one column per listed key, typed as declared. The
 * delimiter modes run as a JS function over the text (common/src/query/parse-kv.ts) that returns
 * the found keys as a bag; the regex mode runs in DuckDB (RE2): its two groups are the key and the
 * value, and a key's first appearance wins. A key that is not found gives "" for a string column
 * and null for any other (a value that does not convert is null too).
 */
import { queryError } from '../errors.js';
import { type Sql, sql, str } from '../sql/sql.js';
import type { Operator } from '../syntax/ast.js';
import { type Bound, convert, strSql } from './bound.js';
import { ticksFlag } from './datetime-ticks.js';
import { type ExprBinder, identOf } from './expr-binder.js';
import { captureGroups } from './registry/text-parsing-functions.js';
import type { Column, IdAllocator, Output, Rel } from './rel.js';

type ParseKv = Extract<Operator, { kind: 'parse-kv' }>;

export function bindParseKv(binder: ExprBinder, ids: IdAllocator, input: Rel, columns: Column[], op: ParseKv): Rel {
  if (op.keys.length === 0) throw queryError('parse-kv needs at least one key.', op.span);
  const text = strSql(convert(binder.bind(op.source), 'string', 'parse-kv'));
  const o = op.options;
  const delimiters = o.pairDelimiter !== undefined || o.kvDelimiter !== undefined;
  if (o.regex !== undefined && (delimiters || o.greedy))
    throw queryError('parse-kv takes either a regex or delimiters, not both.', op.span);
  if (delimiters && (o.pairDelimiter === undefined || o.kvDelimiter === undefined))
    throw queryError('parse-kv needs both pair_delimiter and kv_delimiter, or neither.', op.span);
  if (o.greedy && !delimiters) throw queryError('parse-kv greedy=true needs pair_delimiter and kv_delimiter.', op.span);
  for (const q of o.quotes)
    if (q.length < 1 || q.length > 2) throw queryError(`A parse-kv quote is one or two characters, not '${q}'.`, op.span);
  for (const e of o.escapes) if (e.length !== 1) throw queryError(`A parse-kv escape is one character, not '${e}'.`, op.span);
  for (const d of [o.pairDelimiter, o.kvDelimiter])
    if (d === '') throw queryError('A parse-kv delimiter cannot be empty.', op.span);

  const seen = new Set<string>();
  let foundValue: (key: string) => Sql;
  if (o.regex !== undefined) {
    if (captureGroups(o.regex).length !== 2)
      throw queryError('The regex of parse-kv must have exactly two capture groups: the key and the value.', op.span);
    const re = str(o.regex);
    const keys = sql`list_transform(regexp_extract_all(${text}, ${re}, 1), k -> trim(k))`;
    const values = sql`regexp_extract_all(${text}, ${re}, 2)`;
    foundValue = (key) => sql`trim(${values}[list_position(${keys}, ${str(key)})])`;
  } else {
    const spec = { ...o, keys: op.keys.map((k) => k.name) };
    delete spec.regex;
    const bag = sql`kql_parse_kv(${text}, ${str(JSON.stringify(spec))})`;
    foundValue = (key) => sql`json_extract_string(${bag}, ${str(`$."${key.replaceAll('"', '')}"`)})`;
  }
  // Two stages: the raw text of each key as a column, then the typed values reading it. Written as
  // one expression a datetime's conversion (which reads its text several times) repeated the
  // extraction per use (decision 0048).
  const pass = (cols: Column[]): Output[] => cols.map((c) => ({ col: c, sql: identOf(c) }));
  const raws: Output[] = [];
  for (const key of op.keys) {
    if (seen.has(key.name)) throw queryError(`A column with the name '${key.name}' is already declared.`, key.span);
    seen.add(key.name);
    if (key.name.includes('"')) throw queryError('A parse-kv key cannot contain a double quote.', key.span);
    raws.push({ col: { name: `\u0000parse-kv:${raws.length}`, type: 'string', id: ids.column() }, sql: foundValue(key.name) });
  }
  const stage1Outputs = [...pass(columns), ...raws];
  const stage1: Rel = { kind: 'project', input, outputs: stage1Outputs, columns: stage1Outputs.map((x) => x.col) };
  const outputs: Output[] = pass(columns);
  op.keys.forEach((key, i) => {
    const raw: Bound = { type: 'string', sql: identOf((raws[i] as Output).col), span: key.span };
    const typed: Bound =
      key.type === 'string' ? { ...raw, sql: sql`coalesce(${raw.sql}, '')` } : convert(raw, key.type, 'parse-kv');
    // A datetime read from the text keeps a 7th fractional digit: the column carries ticks (decision 0048).
    const col: Column = { name: key.name, type: key.type, id: ids.column(), ...ticksFlag(typed) };
    const at = outputs.findIndex((x) => x.col.name === key.name);
    if (at >= 0) outputs[at] = { col, sql: typed.sql };
    else outputs.push({ col, sql: typed.sql });
  });
  return { kind: 'project', input: stage1, outputs, columns: outputs.map((x) => x.col) };
}
