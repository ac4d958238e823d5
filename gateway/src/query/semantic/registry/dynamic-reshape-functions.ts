/**
 * Functions that reorder, cut and combine dynamic arrays and bags, and gettype (issue 16, item 7).
 * The reshaping runs as JS scalar functions over JSON text (common/src/query/dynamic-values.ts,
 * registered on every worker and on the gateway's merge database); gettype and pack_all are SQL.
 */
import { queryError } from '../../errors.js';
import { join, type Sql, sql, str } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { KqlType } from '../../types.js';
import type { Bound } from '../bound.js';
import { arity } from './arguments.js';
import { dyn, element } from './dynamic-functions.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry, SeveralColumns } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: KqlType, s: Sql, call: CallExpr, notNull = false): Bound => ({ type, sql: s, span: call.span, notNull });

/** The JSON text a JS function reads. */
const text = (b: Bound, call: CallExpr): Sql => sql`CAST(${dyn(b, call)} AS VARCHAR)`;
/** The JSON text a JS function returns, back as a dynamic value. */
const fromText = (s: Sql): Sql => sql`CAST(${s} AS JSON)`;

function longArg(b: Bound, call: CallExpr, what: string): Sql {
  if (b.type !== 'long') throw queryError(`The ${what} of '${call.name}' must be a long; this is a ${b.type}.`, b.span);
  return b.sql;
}

/** The arrays and the nulls_last flag (a bool last argument, true unless given) of array_sort_asc/desc. */
function sortArguments(args: readonly Bound[]): { arrays: readonly Bound[]; nullsLast: Sql } {
  const last = args[args.length - 1];
  if (args.length > 1 && last?.type === 'bool') return { arrays: args.slice(0, -1), nullsLast: last.sql };
  return { arrays: args, nullsLast: sql`true` };
}

/** array_sort_asc/desc with one array: one dynamic value. */
function arraySort(descending: boolean): ScalarFn {
  return (args, call) => {
    arity(call, args.length, 1, 64);
    const { arrays, nullsLast } = sortArguments(args);
    // Several arrays give one column per array: only a whole extend/project/print item spreads them.
    if (arrays.length > 1)
      throw queryError(
        `'${call.name}' with several arrays gives one column per array: use it as a whole item of extend, project or print (\`(a, b, …) = ${call.name}(…)\` names them, \`${call.name}(…)[k]\` picks one).`,
        call.span,
      );
    const a = text(arrays[0] as Bound, call);
    return result('dynamic', fromText(sql`kql_array_sort(${a}, ${descending ? sql`true` : sql`false`}, ${nullsLast})`), call);
  };
}

/** array_sort_asc/desc with several arrays, as one dynamic array of the reordered arrays. */
function arraySortMany(descending: boolean): ScalarFn {
  return (args, call) => {
    arity(call, args.length, 1, 64);
    const { arrays, nullsLast } = sortArguments(args);
    const all = sql`CAST(json_array(${join(
      arrays.map((a) => dyn(a, call)),
      ', ',
    )}) AS VARCHAR)`;
    return result(
      'dynamic',
      fromText(sql`kql_array_sort_many(${all}, ${descending ? sql`true` : sql`false`}, ${nullsLast})`),
      call,
    );
  };
}

/** The columns of array_sort_asc/desc: one per array when there are several, else one ordinary column. */
function sortColumns(descending: boolean): SeveralColumns {
  return {
    fields: (args) => {
      const { arrays } = sortArguments(args);
      if (arrays.length < 2) return undefined;
      return arrays.map((_, i) => ({ name: `array${i + 1}`, type: 'dynamic', path: `$[${i}]` }));
    },
    bag: arraySortMany(descending),
    perArgumentSuffix: 'sorted',
  };
}

function rotate(left: boolean): ScalarFn {
  return (args, call) => {
    arity(call, args.length, 2);
    const n = longArg(args[1] as Bound, call, 'count');
    return result(
      'dynamic',
      fromText(sql`kql_array_rotate_left(${text(args[0] as Bound, call)}, ${left ? n : sql`(- ${n})`})`),
      call,
    );
  };
}

function shift(left: boolean): ScalarFn {
  return (args, call) => {
    arity(call, args.length, 2, 3);
    const n = longArg(args[1] as Bound, call, 'count');
    const fill = args[2] ? sql`CAST(${element(args[2], call)} AS VARCHAR)` : sql`'null'`;
    return result(
      'dynamic',
      fromText(sql`kql_array_shift_left(${text(args[0] as Bound, call)}, ${left ? n : sql`(- ${n})`}, ${fill})`),
      call,
    );
  };
}

const arrayIff: ScalarFn = (args, call) => {
  arity(call, args.length, 3);
  const [c, t, f] = args as [Bound, Bound, Bound];
  const value = (b: Bound) => sql`CAST(${element(b, call)} AS VARCHAR)`;
  return result('dynamic', fromText(sql`kql_array_iff(${text(c, call)}, ${value(t)}, ${value(f)})`), call);
};

/** Kusto's runtime type names (gettype): a dynamic value by what it holds, anything else by its type. */
const gettype: ScalarFn = (args, call) => {
  arity(call, args.length, 1);
  const b = args[0] as Bound;
  if (b.type !== 'dynamic') return result('string', sql`${str(b.type)}`, call, true);
  const v = b.sql;
  return result(
    'string',
    sql`(CASE coalesce(json_type(${v}), 'NULL')
      WHEN 'NULL' THEN 'null'
      WHEN 'OBJECT' THEN 'dictionary'
      WHEN 'ARRAY' THEN 'array'
      WHEN 'BOOLEAN' THEN 'bool'
      WHEN 'DOUBLE' THEN 'real'
      WHEN 'VARCHAR' THEN 'string'
      ELSE (CASE WHEN TRY_CAST(CAST(${v} AS VARCHAR) AS INTEGER) IS NOT NULL THEN 'int' ELSE 'long' END)
    END)`,
    call,
    true,
  );
};

/** pack_all([ignore_null_empty]): a bag of every column in scope, by name. */
const packAll: ScalarFn = (args, call, binder) => {
  arity(call, args.length, 0, 1);
  const flag = args[0];
  if (flag && (flag.type !== 'bool' || flag.value?.type !== 'bool'))
    throw queryError(`The argument of '${call.name}' must be a constant bool.`, flag.span);
  const columns = [...binder.ctx.columns.values()];
  if (columns.length === 0) return result('dynamic', sql`CAST('{}' AS JSON)`, call, true);
  const pairs = columns.map((c) => {
    const b = binder.bind({ kind: 'name', name: c.name, span: call.span });
    return sql`${str(c.name)}, ${element(b, call)}`;
  });
  const bag = sql`json_object(${join(pairs, ', ')})`;
  if (flag?.value?.type !== 'bool' || flag.value.value !== true) return result('dynamic', bag, call, true);
  // ignore_null_empty: leave out null values and empty strings.
  const kept = sql`list_filter(map_entries(CAST(${bag} AS MAP(VARCHAR, JSON))), e -> coalesce(json_type(e.value), 'NULL') <> 'NULL' AND CAST(e.value AS VARCHAR) <> '""')`;
  return result('dynamic', sql`coalesce(CAST(to_json(map_from_entries(${kept})) AS JSON), CAST('{}' AS JSON))`, call, true);
};

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  array_sort_asc: arraySort(false),
  array_sort_desc: arraySort(true),
  array_split: (args, call) => {
    arity(call, args.length, 2);
    const i = args[1] as Bound;
    if (i.type !== 'long' && i.type !== 'dynamic')
      throw queryError(`The indexes of '${call.name}' must be a long or a dynamic array; this is a ${i.type}.`, i.span);
    return result('dynamic', fromText(sql`kql_array_split(${text(args[0] as Bound, call)}, ${text(i, call)})`), call);
  },
  array_rotate_left: rotate(true),
  array_rotate_right: rotate(false),
  array_shift_left: shift(true),
  array_shift_right: shift(false),
  array_iff: arrayIff,
  array_iif: arrayIff,
  bag_merge: (args, call) => {
    arity(call, args.length, 2, 64);
    const bags = sql`CAST(json_array(${join(
      args.map((a) => dyn(a, call)),
      ', ',
    )}) AS VARCHAR)`;
    return result('dynamic', fromText(sql`kql_bag_merge(${bags})`), call);
  },
  treepath: (args, call) => {
    arity(call, args.length, 1);
    return result('dynamic', fromText(sql`kql_treepath(${text(args[0] as Bound, call)})`), call);
  },
  gettype,
  pack_all: packAll,
};

function fn(name: string, signatures: string[], returns: string, naming: NamingRule = { kind: 'none' }): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the dynamic function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

const SORTED: NamingRule = { kind: 'suffix', suffix: 'sorted' };

export const DYNAMIC_RESHAPE_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  {
    ...fn(
      'array_sort_asc',
      [
        'array_sort_asc(array: dynamic[, nulls_last: bool]): dynamic',
        'array_sort_asc(array1: dynamic, array2: dynamic, ...[, nulls_last: bool])',
      ],
      'dynamic array sorted: numbers, then strings (ordinal), then other values in their order; nulls last unless nulls_last is false; null for a non-array. With several arrays, one column per array (only as a whole extend/project/print item, or `[k]` for one): the first sorted, the others in its new order, null for an array of another length',
      SORTED,
    ),
    columns: sortColumns(false),
  },
  {
    ...fn(
      'array_sort_desc',
      [
        'array_sort_desc(array: dynamic[, nulls_last: bool]): dynamic',
        'array_sort_desc(array1: dynamic, array2: dynamic, ...[, nulls_last: bool])',
      ],
      'as array_sort_asc, numbers and strings descending',
      SORTED,
    ),
    columns: sortColumns(true),
  },
  fn(
    'array_split',
    ['array_split(array: dynamic, index: long|dynamic): dynamic'],
    'dynamic array of the pieces [0..i1), [i1..i2) … (negative indexes count from the end)',
  ),
  fn(
    'array_rotate_left',
    ['array_rotate_left(array: dynamic, count: long): dynamic'],
    'dynamic array rotated left (right for a negative count)',
  ),
  fn(
    'array_rotate_right',
    ['array_rotate_right(array: dynamic, count: long): dynamic'],
    'dynamic array rotated right (left for a negative count)',
  ),
  fn(
    'array_shift_left',
    ['array_shift_left(array: dynamic, count: long[, fill: any]): dynamic'],
    'dynamic array of the same length shifted left; vacated places hold fill (null by default)',
  ),
  fn(
    'array_shift_right',
    ['array_shift_right(array: dynamic, count: long[, fill: any]): dynamic'],
    'dynamic array of the same length shifted right; vacated places hold fill (null by default)',
  ),
  fn(
    'array_iff',
    ['array_iff(conditions: dynamic, when_true: dynamic|any, when_false: dynamic|any): dynamic'],
    'dynamic array: per condition (numbers true when not 0), the element at the same place or the scalar; null for other conditions',
  ),
  fn('array_iif', ['array_iif(conditions: dynamic, when_true: dynamic|any, when_false: dynamic|any): dynamic'], 'as array_iff'),
  fn(
    'bag_merge',
    ['bag_merge(bag1: dynamic, bag2: dynamic, ...): dynamic'],
    'dynamic bag of every key; a repeated key keeps the first bag’s value; non-bags are skipped',
  ),
  fn(
    'treepath',
    ['treepath(value: dynamic): dynamic'],
    "dynamic array of the paths below the root: ['key'] for keys, [0] for all elements of an array",
    { kind: 'prefix', prefix: 'tree' },
  ),
  fn(
    'gettype',
    ['gettype(value: any): string'],
    'string: the type name (for dynamic values: int, long, real, string, bool, array, dictionary or null)',
    { kind: 'prefix', prefix: 'type' },
  ),
  fn(
    'pack_all',
    ['pack_all([ignore_null_empty: bool]): dynamic'],
    'dynamic bag of every column by name (without null and empty values when asked)',
  ),
];
