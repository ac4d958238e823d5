/**
 * Aggregates whose partial state is a sketch or a weighted list (issue 16, item 8; decision 0021):
 * percentilew/percentilesw, hll/hll_if/hll_merge, tdigest/tdigest_merge, and the covariance
 * family. Like every aggregate, each is a partial state per worker and a merge at the gateway; the
 * states are exact, so one worker and three give the same answer.
 */
import { queryError } from '../errors.js';
import { ident, join, type Sql, sql, str } from '../sql/sql.js';
import type { Expr } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import {
  type AggregateDef,
  type AggregateEnv,
  type AggregateOutput,
  argName,
  args,
  filterClause,
  finalCol,
  jsonList,
  mergedJsonList,
  numericArg,
  partial,
  ref,
  single,
} from './aggregates.js';
import { type Bound, coerce } from './bound.js';
import { numberForName } from './naming.js';
import type { Column } from './rel.js';
import {
  fromTdigestNumber,
  hllFromList,
  hllValues,
  isHll,
  isTdigest,
  TDIGEST_TYPES,
  type TdigestType,
  tdigestFrom,
  tdigestNumber,
  weightedPercentileNumber,
} from './sketch-format.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

/** A partial column, as the gateway's merge reads it. */
const partialRef = (p: { id: string }): Sql => sql`${ident(p.id)}`;

/**
 * The percentiles of the array forms: constants, or one constant dynamic array of them
 * (`percentilesw_array(x, w, dynamic([50, 90]))`).
 */
export function percentileList(bs: Bound[], fn: string): number[] {
  const only = bs[0];
  if (bs.length === 1 && only?.value?.type === 'dynamic' && only.value.value !== null) {
    const parsed: unknown = JSON.parse(only.value.value);
    if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((p) => typeof p === 'number' && p >= 0 && p <= 100))
      throw queryError(`The percentiles of '${fn}' must be numbers between 0 and 100.`, only.span);
    return parsed as number[];
  }
  return bs.map((b) => percentileConstant(b, fn).n);
}

/** A constant percentile between 0 and 100, with the text Kusto puts in the column name. */
export function percentileConstant(b: Bound, fn: string): { n: number; text: string } {
  const v = b.value;
  const n = v && (v.type === 'long' || v.type === 'real') && v.value !== null ? Number(v.value) : Number.NaN;
  if (!(n >= 0 && n <= 100)) throw queryError(`The percentile of '${fn}' must be a constant between 0 and 100.`, b.span);
  return { n, text: v?.type === 'long' ? String(v.value) : String(n) };
}

function tdigestValue(b: Bound, call: CallExpr): Bound & { type: TdigestType } {
  const x = numericArg(b, call, [...TDIGEST_TYPES]);
  return x as Bound & { type: TdigestType };
}

function weightArg(b: Bound, call: CallExpr): Sql {
  const w = numericArg(b, call, ['long', 'real']);
  return coerce(w, 'real');
}

/** A worker's [value, weight] pairs, compacted (sorted, each value once): JSON text, '[]' when none. */
function weightedPartial(x: Bound & { type: TdigestType }, w: Sql, env: AggregateEnv): Sql {
  const v = tdigestNumber(x);
  const pairs = sql`to_json(list(json_array(${v}, ${w}))${filterClause(env, sql`${v} IS NOT NULL AND ${w} > 0`)})`;
  return sql`kql_weighted_compact(coalesce(CAST(${pairs} AS VARCHAR), '[]'))`;
}

/** The merge of pair-list partial columns: every pair, compacted again. */
const mergedWeighted = (p: Sql): Sql => sql`kql_weighted_compact(coalesce(CAST(to_json(${mergedJsonList(p)}) AS VARCHAR), '[]'))`;

/**
 * percentilew(x, w, p), percentilesw(x, w, p, …) and percentilesw_array: the nearest-rank
 * percentile with each value counted `w` times (Kusto: weightExpr is a long; non-positive or null
 * weights count 0 times here).
 */
export function weightedPercentileDef(multi: boolean, asArray = false): AggregateDef {
  return (call, row, env) => {
    if (multi) args(call, 3, 34);
    else args(call, 3);
    const x = tdigestValue(row.bind(call.args[0] as Expr), call);
    const w = weightArg(row.bind(call.args[1] as Expr), call);
    const bound = call.args.slice(2).map((a) => row.bind(a));
    const ps = asArray
      ? percentileList(bound, call.name).map((n) => ({ n, text: String(n) }))
      : bound.map((b) => percentileConstant(b, call.name));
    const p = partial(env, weightedPartial(x, w, env), 'VARCHAR');
    const state = finalCol(env, 'string');
    const part = { partials: [p], finals: [{ col: state, sql: mergedWeighted(partialRef(p)) }] };
    const at = (n: number) => fromTdigestNumber(weightedPercentileNumber(ref(state), n), x.type);
    if (asArray) {
      if (x.type !== 'long' && x.type !== 'real')
        throw queryError(`'${call.name}' of a ${x.type} is not supported; use percentilesw().`, x.span);
      const values = ps.map(({ n }) => at(n));
      return {
        part,
        outputs: [
          {
            value: sql`(CASE WHEN ${ref(state)} <> '[]' THEN CAST(to_json([${join(values, ', ')}]) AS JSON) END)`,
            type: 'dynamic',
          },
        ],
      };
    }
    return {
      part,
      outputs: ps.map(
        ({ n, text }): AggregateOutput => ({
          value: at(n),
          type: x.type,
          name: `percentile_${argName(call)}_${numberForName(text)}`,
        }),
      ),
    };
  };
}

/** tdigest(x[, w]): the weighted values as a tdigest sketch of x's type. */
export const tdigestDef: AggregateDef = (call, row, env) => {
  args(call, 1, 2);
  const x = tdigestValue(row.bind(call.args[0] as Expr), call);
  const w = call.args[1] ? weightArg(row.bind(call.args[1]), call) : sql`1.0`;
  return single(
    env,
    weightedPartial(x, w, env),
    'VARCHAR',
    (p) => tdigestFrom(mergedWeighted(p), sql`${str(x.type)}`),
    'dynamic',
  );
};

/**
 * tdigest_merge(t): the sketches of the group merged. The type is the sketches' common type;
 * sketches of different types give the type "mixed", which percentile_tdigest reads as null.
 */
export const tdigestMergeDef: AggregateDef = (call, row, env) => {
  args(call, 1);
  const t = dynamicArg(row.bind(call.args[0] as Expr), call);
  const valid = isTdigest(t);
  const pairs = partial(
    env,
    sql`kql_weighted_compact(coalesce(CAST(to_json(flatten(list(CAST(json_extract(${t}, '$.values') AS JSON[]))${filterClause(env, valid)})) AS VARCHAR), '[]'))`,
    'VARCHAR',
  );
  const typeOf = sql`json_extract_string(${t}, '$.type')`;
  const type = partial(
    env,
    sql`(CASE WHEN min(${typeOf})${filterClause(env, valid)} = max(${typeOf})${filterClause(env, valid)} THEN min(${typeOf})${filterClause(env, valid)} WHEN count(*)${filterClause(env, valid)} > 0 THEN 'mixed' END)`,
    'VARCHAR',
  );
  const f = finalCol(env, 'dynamic');
  const [pp, pt] = [partialRef(pairs), partialRef(type)];
  const mergedType = sql`(CASE WHEN min(${pt}) = max(${pt}) THEN min(${pt}) WHEN count(${pt}) > 0 THEN 'mixed' END)`;
  return {
    part: {
      partials: [pairs, type],
      finals: [
        { col: f, sql: sql`(CASE WHEN ${mergedType} IS NOT NULL THEN ${tdigestFrom(mergedWeighted(pp), mergedType)} END)` },
      ],
    },
    outputs: [{ value: ref(f), type: 'dynamic' }],
  };
};

/** hll(x[, accuracy]) and hll_if: the distinct values as an hll sketch (the accuracy is accepted; the count is exact). */
export const hllDef: AggregateDef = (call, row, env) => {
  args(call, 1, 2);
  if (call.args[1]) accuracyArg(row.bind(call.args[1]), call);
  const x = row.bind(call.args[0] as Expr);
  return single(env, jsonList(x, true, env), 'VARCHAR', (p) => hllFromList(mergedJsonList(p)), 'dynamic');
};

/** hll_merge(h): the hll sketches of the group merged; other values are skipped. */
export const hllMergeDef: AggregateDef = (call, row, env) => {
  args(call, 1, 2);
  const h = dynamicArg(row.bind(call.args[0] as Expr), call);
  const values = sql`coalesce(CAST(to_json(list_distinct(flatten(list(${hllValues(h)})${filterClause(env, isHll(h))}))) AS VARCHAR), '[]')`;
  return single(env, values, 'VARCHAR', (p) => hllFromList(mergedJsonList(p)), 'dynamic');
};

/** The accuracy argument of hll/dcount: a constant 0 to 4 (Kusto's levels; accepted, the count is exact). */
function accuracyArg(b: Bound, call: CallExpr): void {
  const v = b.value;
  if (v?.type !== 'long' || v.value === null || v.value < 0n || v.value > 4n)
    throw queryError(`The accuracy of '${call.name}' must be a constant from 0 to 4.`, b.span);
}

function dynamicArg(b: Bound, call: CallExpr): Sql {
  if (b.type !== 'dynamic') throw queryError(`The argument of '${call.name}' must be dynamic; this is a ${b.type}.`, b.span);
  return b.sql;
}

/**
 * covariance (sample) and covariancep (population) of the rows where both values are set; the
 * `…if` forms take the condition third. Partial state per worker: n, the two means and the
 * co-moment; merged with Chan et al.'s pairwise formula.
 */
export function covarianceDef(population: boolean, conditional: boolean): AggregateDef {
  return (call, row, env0) => {
    args(call, conditional ? 3 : 2);
    let env = env0;
    if (conditional) {
      const pred = row.bind(call.args[2] as Expr, true);
      if (pred.type !== 'bool')
        throw queryError(`The condition of '${call.name}' must be a bool; this is a ${pred.type}.`, pred.span);
      env = { ...env0, filter: env0.filter ? sql`(${env0.filter} AND ${pred.sql})` : pred.sql };
    }
    const x = coerce(numericArg(row.bind(call.args[0] as Expr), call, ['long', 'real']), 'real');
    const y = coerce(numericArg(row.bind(call.args[1] as Expr), call, ['long', 'real']), 'real');
    const f = filterClause(env, sql`${x} IS NOT NULL AND ${y} IS NOT NULL`);
    const n = partial(env, sql`count(*)${f}`, 'BIGINT');
    const mx = partial(env, sql`avg(${x})${f}`, 'DOUBLE');
    const my = partial(env, sql`avg(${y})${f}`, 'DOUBLE');
    const c = partial(env, sql`coalesce(covar_pop(${y}, ${x})${f} * count(*)${f}, 0)`, 'DOUBLE');
    const [N, SX, SY, SXY, C] = [0, 1, 2, 3, 4].map(() => finalCol(env, 'real')) as [Column, Column, Column, Column, Column];
    const id = partialRef;
    const finals = [
      { col: N, sql: sql`CAST(coalesce(sum(${id(n)}), 0) AS DOUBLE)` },
      { col: SX, sql: sql`sum(${id(n)} * ${id(mx)})` },
      { col: SY, sql: sql`sum(${id(n)} * ${id(my)})` },
      { col: SXY, sql: sql`sum(${id(n)} * ${id(mx)} * ${id(my)})` },
      { col: C, sql: sql`sum(${id(c)})` },
    ];
    // Co-moment of the union: Σ cᵢ + Σ nᵢ·mxᵢ·myᵢ − (Σ nᵢ·mxᵢ)(Σ nᵢ·myᵢ) / N.
    const comoment = sql`(${ref(C)} + ${ref(SXY)} - ${ref(SX)} * ${ref(SY)} / ${ref(N)})`;
    const value = population
      ? sql`(CASE WHEN ${ref(N)} >= 1 THEN ${comoment} / ${ref(N)} END)`
      : sql`(CASE WHEN ${ref(N)} > 1 THEN ${comoment} / (${ref(N)} - 1) WHEN ${ref(N)} = 1 THEN 0.0 END)`;
    const type: KqlType = 'real';
    return { part: { partials: [n, mx, my, c], finals }, outputs: [{ value, type }] };
  };
}
