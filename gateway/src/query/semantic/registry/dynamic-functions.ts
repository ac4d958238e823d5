/**
 * Functions over dynamic values (issue 16, item 7), declared with their implementations: building
 * arrays and property bags, reading their keys and lengths, slicing and combining arrays, and sets. Dynamic values are DuckDB JSON; an argument that is not the array or bag a
 * function needs gives null, as in Kusto.
 */
import { queryError } from '../../errors.js';
import { join, type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, convert, strSql } from '../bound.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: Bound['type'], s: Sql, call: CallExpr, notNull = false): Bound => ({
  type,
  sql: s,
  span: call.span,
  notNull,
});

/** A dynamic argument (anything else converts as todynamic would). */
export function dyn(b: Bound, call: CallExpr): Sql {
  return b.type === 'dynamic' ? b.sql : convert(b, 'dynamic', call.name).sql;
}

/** A value as an element of a packed array or bag: a string stays a string (it is not parsed). */
export function element(b: Bound, call: CallExpr): Sql {
  if (b.type === 'string') return sql`to_json(${strSql(b)})`;
  return dyn(b, call);
}

const isArray = (v: Sql): Sql => sql`(json_type(${v}) = 'ARRAY')`;
const asList = (v: Sql): Sql => sql`CAST(${v} AS JSON[])`;
/** A JSON list back to a dynamic array. */
const toArray = (l: Sql): Sql => sql`CAST(to_json(${l}) AS JSON)`;
/** Distinct elements in order of first appearance (list_distinct does not keep order). */
const distinctInOrder = (l: Sql): Sql => sql`list_filter(${l}, (x, i) -> list_position(${l}, x) = i)`;
/** Elements compare by their JSON text (so 1 and "1" differ, as in Kusto). */
const texts = (l: Sql): Sql => sql`list_transform(${l}, x -> CAST(x AS VARCHAR))`;

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  pack_array: (args, call) => {
    arity(call, args.length, 1, 64);
    return result(
      'dynamic',
      sql`json_array(${join(
        args.map((a) => element(a, call)),
        ', ',
      )})`,
      call,
    );
  },
  bag_pack: (args, call) => {
    if (args.length === 0 || args.length % 2 !== 0) throw queryError(`'${call.name}' takes pairs of key and value.`, call.span);
    const pairs: Sql[] = [];
    for (let i = 0; i < args.length; i += 2) {
      const key = args[i] as Bound;
      if (key.type !== 'string') throw queryError(`The keys of '${call.name}' must be strings; this is a ${key.type}.`, key.span);
      pairs.push(strSql(key), element(args[i + 1] as Bound, call));
    }
    return result('dynamic', sql`json_object(${join(pairs, ', ')})`, call);
  },
  bag_keys: (args, call) => {
    arity(call, args.length, 1, 1);
    const v = dyn(args[0] as Bound, call);
    return result('dynamic', sql`(CASE WHEN json_type(${v}) = 'OBJECT' THEN CAST(to_json(json_keys(${v})) AS JSON) END)`, call);
  },
  bag_has_key: (args, call) => {
    arity(call, args.length, 2, 2);
    const v = dyn(args[0] as Bound, call);
    const key = args[1] as Bound;
    if (key.type !== 'string') throw queryError(`The key of '${call.name}' must be a string; this is a ${key.type}.`, key.span);
    if (key.value?.type === 'string' && key.value.value.startsWith('$'))
      throw queryError(`'${call.name}' with a JSONPath key is not supported; pass the key itself.`, key.span);
    return result(
      'bool',
      sql`coalesce(json_type(${v}) = 'OBJECT' AND list_contains(json_keys(${v}), ${strSql(key)}), false)`,
      call,
      true,
    );
  },
  array_length: (args, call) => {
    arity(call, args.length, 1, 1);
    const v = dyn(args[0] as Bound, call);
    return result('long', sql`(CASE WHEN ${isArray(v)} THEN CAST(json_array_length(${v}) AS BIGINT) END)`, call);
  },
  array_concat: (args, call) => {
    arity(call, args.length, 1, 64);
    const vs = args.map((a) => dyn(a, call));
    const all = join(
      vs.map((v) => isArray(v)),
      ' AND ',
    );
    const concat = vs.map((v) => asList(v)).reduce((acc, l) => sql`list_concat(${acc}, ${l})`);
    return result('dynamic', sql`(CASE WHEN ${all} THEN ${toArray(concat)} END)`, call);
  },
  array_reverse: (args, call) => {
    arity(call, args.length, 1, 1);
    const v = dyn(args[0] as Bound, call);
    return result('dynamic', sql`(CASE WHEN ${isArray(v)} THEN ${toArray(sql`list_reverse(${asList(v)})`)} END)`, call);
  },
  array_slice: (args, call) => {
    arity(call, args.length, 3, 3);
    const v = dyn(args[0] as Bound, call);
    const [start, end] = [args[1] as Bound, args[2] as Bound];
    for (const b of [start, end])
      if (b.type !== 'long') throw queryError(`The indexes of '${call.name}' must be long; this is a ${b.type}.`, b.span);
    // Kusto: 0-based, end inclusive, negative counts from the end; out of range is clamped.
    const n = sql`json_array_length(${v})`;
    const from = sql`(CASE WHEN ${start.sql} < 0 THEN ${n} + ${start.sql} ELSE ${start.sql} END)`;
    const to = sql`(CASE WHEN ${end.sql} < 0 THEN ${n} + ${end.sql} ELSE ${end.sql} END)`;
    const slice = sql`list_slice(${asList(v)}, greatest(${from}, 0) + 1, least(${to}, ${n} - 1) + 1)`;
    return result('dynamic', sql`(CASE WHEN ${isArray(v)} THEN ${toArray(slice)} END)`, call);
  },
  array_sum: (args, call) => {
    arity(call, args.length, 1, 1);
    const v = dyn(args[0] as Bound, call);
    // A non-numeric element makes the sum null (Kusto).
    const nums = sql`list_transform(${asList(v)}, x -> CASE WHEN json_type(x) IN ('BIGINT', 'UBIGINT', 'DOUBLE') THEN CAST(x AS DOUBLE) END)`;
    return result(
      'real',
      sql`(CASE WHEN ${isArray(v)} AND NOT list_contains(list_transform(${nums}, x -> x IS NULL), true) THEN coalesce(list_sum(${nums}), 0.0) END)`,
      call,
    );
  },
  set_has_element: (args, call) => {
    arity(call, args.length, 2, 2);
    const v = dyn(args[0] as Bound, call);
    const e = element(args[1] as Bound, call);
    return result(
      'bool',
      sql`(CASE WHEN ${isArray(v)} THEN list_contains(${texts(asList(v))}, CAST(${e} AS VARCHAR)) END)`,
      call,
    );
  },
  array_index_of: (args, call) => {
    arity(call, args.length, 2, 5);
    const v = dyn(args[0] as Bound, call);
    const e = element(args[1] as Bound, call);
    for (const b of args.slice(2))
      if (b.type !== 'long')
        throw queryError(`The start, length and occurrence of '${call.name}' must be long; this is a ${b.type}.`, b.span);
    const [start, length, occurrence] = [args[2]?.sql ?? sql`0`, args[3]?.sql ?? sql`-1`, args[4]?.sql ?? sql`1`];
    // The window [from, to): a negative start counts from the end; length -1 is the rest. The
    // occurrence-th equal element (by JSON) in it, as a 0-based position; -1 when there is none;
    // null for a length below -1 or a negative occurrence (Kusto).
    const n = sql`CAST(json_array_length(${v}) AS BIGINT)`;
    const from = sql`least(greatest(CASE WHEN ${start} < 0 THEN ${n} + ${start} ELSE ${start} END, 0), ${n})`;
    const to = sql`(CASE WHEN ${length} = -1 THEN ${n} ELSE least(${from} + ${length}, ${n}) END)`;
    const list = texts(asList(v));
    const hits = sql`list_filter(range(${from}, greatest(${to}, ${from})), i -> ${list}[i + 1] = CAST(${e} AS VARCHAR))`;
    return result(
      'long',
      sql`(CASE WHEN NOT ${isArray(v)} OR ${length} < -1 OR ${occurrence} < 0 THEN NULL
        ELSE CAST(coalesce(CASE WHEN ${occurrence} >= 1 THEN ${hits}[${occurrence}] END, -1) AS BIGINT) END)`,
      call,
    );
  },
  bag_remove_keys: (args, call) => {
    arity(call, args.length, 2, 2);
    const v = dyn(args[0] as Bound, call);
    const keys = args[1] as Bound;
    if (keys.value?.type === 'dynamic' && keys.value.value !== null) {
      const parsed: unknown = JSON.parse(keys.value.value);
      if (Array.isArray(parsed) && parsed.some((k) => typeof k === 'string' && k.startsWith('$')))
        throw queryError(`'${call.name}' with JSONPath keys is not supported; pass the top-level keys.`, keys.span);
    }
    const k = dyn(keys, call);
    const kept = sql`list_filter(map_entries(CAST(${v} AS MAP(VARCHAR, JSON))), x -> NOT list_contains(list_transform(CAST(${k} AS JSON[]), y -> json_extract_string(y, '$')), x.key))`;
    return result(
      'dynamic',
      sql`(CASE WHEN json_type(${v}) = 'OBJECT' AND ${isArray(k)} THEN CAST(to_json(map_from_entries(${kept})) AS JSON) END)`,
      call,
    );
  },
  zip: (args, call) => {
    arity(call, args.length, 2, 64);
    const vs = args.map((a) => dyn(a, call));
    const all = join(
      vs.map((v) => isArray(v)),
      ' AND ',
    );
    // One array per position, as long as the longest input; shorter inputs give null.
    const longest = sql`greatest(${join(
      vs.map((v) => sql`CAST(json_array_length(${v}) AS BIGINT)`),
      ', ',
    )})`;
    const row = sql`json_array(${join(
      vs.map((v) => sql`${asList(v)}[i + 1]`),
      ', ',
    )})`;
    return result(
      'dynamic',
      sql`(CASE WHEN ${all} THEN ${toArray(sql`list_transform(range(0, ${longest}), i -> ${row})`)} END)`,
      call,
    );
  },
  set_union: (args, call) => setOf('union', args, call),
  set_intersect: (args, call) => setOf('intersect', args, call),
  set_difference: (args, call) => setOf('difference', args, call),
};

/** The set functions: distinct elements (by JSON text) in order of first appearance. */
function setOf(kind: 'union' | 'intersect' | 'difference', args: Bound[], call: CallExpr): Bound {
  arity(call, args.length, 2, 64);
  const vs = args.map((a) => dyn(a, call));
  const all = join(
    vs.map((v) => isArray(v)),
    ' AND ',
  );
  const [first, ...rest] = vs.map((v) => asList(v)) as [Sql, ...Sql[]];
  let l: Sql;
  if (kind === 'union') l = distinctInOrder(rest.reduce((acc, x) => sql`list_concat(${acc}, ${x})`, first));
  else {
    const keep = rest.map((other) =>
      kind === 'intersect'
        ? sql`list_contains(${texts(other)}, CAST(x AS VARCHAR))`
        : sql`NOT list_contains(${texts(other)}, CAST(x AS VARCHAR))`,
    );
    l = distinctInOrder(sql`list_filter(${first}, x -> ${join(keep, ' AND ')})`);
  }
  return result('dynamic', sql`(CASE WHEN ${all} THEN ${toArray(l)} END)`, call);
}

const NONE: NamingRule = { kind: 'none' };

function fn(name: string, signatures: string[], returns: string, impl = name): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[impl];
  if (!bind) throw new Error(`no implementation for the dynamic function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming: NONE, bind };
}

export const DYNAMIC_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn('pack_array', ['pack_array(value: any, ...): dynamic'], 'dynamic array of the values (strings stay strings)'),
  fn('bag_pack', ['bag_pack(key: string, value: any, ...): dynamic'], 'dynamic property bag'),
  fn('pack', ['pack(key: string, value: any, ...): dynamic'], 'dynamic property bag (bag_pack)', 'bag_pack'),
  fn(
    'pack_dictionary',
    ['pack_dictionary(key: string, value: any, ...): dynamic'],
    'dynamic property bag (bag_pack)',
    'bag_pack',
  ),
  fn('bag_keys', ['bag_keys(bag: dynamic): dynamic'], 'dynamic array of the keys in order; null for a non-bag'),
  fn('bag_has_key', ['bag_has_key(bag: dynamic, key: string): bool'], 'bool (a top-level key; false for a non-bag)'),
  fn('array_length', ['array_length(array: dynamic): long'], 'long; null for a non-array'),
  fn('array_concat', ['array_concat(array: dynamic, ...): dynamic'], 'dynamic array; null when an argument is not an array'),
  fn('array_reverse', ['array_reverse(array: dynamic): dynamic'], 'dynamic array; null for a non-array'),
  fn(
    'array_slice',
    ['array_slice(array: dynamic, start: long, end: long): dynamic'],
    'dynamic array from start to end inclusive (0-based, negative from the end, clamped)',
  ),
  fn('array_sum', ['array_sum(array: dynamic): real'], 'real; null when an element is not a number or for a non-array'),
  fn(
    'array_index_of',
    ['array_index_of(array: dynamic, value: any[, start: long[, length: long[, occurrence: long]]]): long'],
    'long: the 0-based position of the occurrence-th equal element in the window, -1 when absent; null for a non-array, length < -1 or occurrence < 0',
  ),
  fn(
    'bag_remove_keys',
    ['bag_remove_keys(bag: dynamic, keys: dynamic): dynamic'],
    'dynamic bag without the given top-level keys; null for a non-bag',
  ),
  fn(
    'zip',
    ['zip(array1: dynamic, array2: dynamic, ...): dynamic'],
    'dynamic array of arrays, one per position (shorter inputs give null)',
  ),
  fn(
    'set_has_element',
    ['set_has_element(set: dynamic, value: any): bool'],
    'bool (elements compare by their JSON: 1 is not "1"); null for a non-array',
  ),
  fn(
    'set_union',
    ['set_union(set1: dynamic, set2: dynamic, ...): dynamic'],
    'dynamic array of distinct elements, in order of first appearance',
  ),
  fn(
    'set_intersect',
    ['set_intersect(set1: dynamic, set2: dynamic, ...): dynamic'],
    'dynamic array of distinct elements of set1 in every other set',
  ),
  fn(
    'set_difference',
    ['set_difference(set1: dynamic, set2: dynamic, ...): dynamic'],
    'dynamic array of distinct elements of set1 in no other set',
  ),
];
