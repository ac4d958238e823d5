/**
 * Scalar functions over the sketches that hll() and tdigest() return (issue 16, item 8;
 * decision 0021; the format is in ../sketch-format.ts): counting an hll, merging sketches
 * row by row, and reading percentiles from a tdigest.
 */
import { queryError } from '../../errors.js';
import { join, type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { Bound } from '../bound.js';
import { percentileConstant, percentileList } from '../sketch-aggregates.js';
import {
  fromTdigestNumber,
  hllFromList,
  hllValues,
  isHll,
  isTdigest,
  percentileAsDynamic,
  TDIGEST_TYPES,
  type TdigestType,
  tdigestFrom,
  tdigestValuesText,
  weightedPercentileNumber,
} from '../sketch-format.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: Bound['type'], s: Sql, call: CallExpr): Bound => ({ type, sql: s, span: call.span });

function sketchArg(b: Bound, call: CallExpr): Sql {
  if (b.type !== 'dynamic') throw queryError(`The sketch given to '${call.name}' must be dynamic; this is a ${b.type}.`, b.span);
  return b.sql;
}

/** The optional `typeof(T)` last argument of percentile_tdigest: the type of the result. */
function resultType(b: Bound | undefined, call: CallExpr): TdigestType | undefined {
  if (b === undefined) return undefined;
  const t = b.typeLiteral;
  if (t === undefined) throw queryError(`The last argument of '${call.name}' must be typeof(T).`, b.span);
  if (!(TDIGEST_TYPES as readonly string[]).includes(t))
    throw queryError(`'${call.name}' returns long, real, datetime or timespan; not ${t}.`, b.span);
  return t as TdigestType;
}

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  dcount_hll: (args, call) => {
    arity(call, args.length, 1);
    const h = sketchArg(args[0] as Bound, call);
    return result('long', sql`(CASE WHEN ${isHll(h)} THEN CAST(json_array_length(${h}, '$.values') AS BIGINT) END)`, call);
  },
  hll_merge: (args, call) => {
    arity(call, args.length, 2, 64);
    const hs = args.map((a) => sketchArg(a, call));
    // Arguments that are not hll sketches are skipped; null when none is one.
    const lists = hs.map((h) => sql`coalesce(${hllValues(h)}, [])`);
    const any = join(
      hs.map((h) => isHll(h)),
      ' OR ',
    );
    const all = lists.reduce((acc, l) => sql`list_concat(${acc}, ${l})`);
    return result('dynamic', sql`(CASE WHEN ${any} THEN ${hllFromList(all)} END)`, call);
  },
  tdigest_merge: (args, call) => {
    arity(call, args.length, 2, 64);
    const ts = args.map((a) => sketchArg(a, call));
    // Sketches of one type merge; other values are skipped; different types give null.
    const valid = ts.map((t) => isTdigest(t));
    const types = ts.map((t, i) => sql`(CASE WHEN ${valid[i] as Sql} THEN json_extract_string(${t}, '$.type') END)`);
    const typeList = sql`list_distinct(list_filter([${join(types, ', ')}], x -> x IS NOT NULL))`;
    const pairs = ts.map((t) => sql`coalesce(CAST(json_extract(${t}, '$.values') AS JSON[]), [])`);
    const all = sql`kql_weighted_compact(CAST(to_json(${pairs.reduce((acc, l) => sql`list_concat(${acc}, ${l})`)}) AS VARCHAR))`;
    return result('dynamic', sql`(CASE WHEN len(${typeList}) = 1 THEN ${tdigestFrom(all, sql`${typeList}[1]`)} END)`, call);
  },
  percentile_tdigest: (args, call) => {
    arity(call, args.length, 2, 3);
    const t = sketchArg(args[0] as Bound, call);
    const { n } = percentileConstant(args[1] as Bound, call.name);
    const type = resultType(args[2], call);
    if (type === undefined) return result('dynamic', percentileAsDynamic(t, n, call.span), call);
    // With typeof(T): the value when the sketch holds T, else null.
    const value = fromTdigestNumber(weightedPercentileNumber(tdigestValuesText(t), n), type);
    return result(type, sql`(CASE WHEN json_extract_string(${t}, '$.type') = ${sqlText(type)} THEN ${value} END)`, call);
  },
  percentiles_array_tdigest: (args, call) => {
    arity(call, args.length, 2, 64);
    const t = sketchArg(args[0] as Bound, call);
    const ps = percentileList(args.slice(1), call.name);
    const values = ps.map((n) => percentileAsDynamic(t, n, call.span));
    return result(
      'dynamic',
      sql`(CASE WHEN ${isTdigest(t)} AND json_array_length(${t}, '$.values') > 0 THEN json_array(${join(values, ', ')}) END)`,
      call,
    );
  },
};

const sqlText = (t: TdigestType): Sql => {
  switch (t) {
    case 'long':
      return sql`'long'`;
    case 'real':
      return sql`'real'`;
    case 'datetime':
      return sql`'datetime'`;
    case 'timespan':
      return sql`'timespan'`;
  }
};

function fn(name: string, signatures: string[], returns: string, naming: NamingRule): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the sketch function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

export const SKETCH_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'dcount_hll',
    ['dcount_hll(hll: dynamic): long'],
    'long: the distinct count of an hll() sketch (exact); null for a non-sketch',
    {
      kind: 'prefix',
      prefix: 'dcount_hll',
    },
  ),
  fn(
    'hll_merge',
    ['hll_merge(hll1: dynamic, hll2: dynamic, ...): dynamic'],
    'dynamic hll sketch of the union (non-sketches are skipped; null when none is one)',
    { kind: 'fixed', name: 'hll_merged_result' },
  ),
  fn(
    'tdigest_merge',
    ['tdigest_merge(tdigest1: dynamic, tdigest2: dynamic, ...): dynamic'],
    'dynamic tdigest sketch of all values (non-sketches are skipped; null when none is one or their types differ)',
    { kind: 'fixed', name: 'tdigests_merge_result' },
  ),
  fn(
    'percentile_tdigest',
    ['percentile_tdigest(tdigest: dynamic, percentile: real[, typeof(T)])'],
    'dynamic, or T with typeof(T) (null when the sketch holds another type): the nearest-rank percentile, exact',
    { kind: 'prefix', prefix: 'percentile_tdigest' },
  ),
  fn(
    'percentiles_array_tdigest',
    [
      'percentiles_array_tdigest(tdigest: dynamic, percentile: real, ...): dynamic',
      'percentiles_array_tdigest(tdigest: dynamic, percentiles: dynamic): dynamic',
    ],
    'dynamic array of the percentiles; null for an empty sketch or a non-sketch',
    { kind: 'prefix', prefix: 'percentile_tdigest' },
  ),
];
