/**
 * Aggregates, each split into a partial state that every worker computes over its own rows and a
 * merge of the partial states that the gateway computes (an aggregate over the partial columns,
 * grouped by the same keys). Every aggregate runs this way, also on one worker, so the answer
 * does not depend on how the data is spread. Partial states cross the wire as plain columns
 * (counts, sums, JSON text for value lists).
 *
 * Kusto's defaults on empty input: count and dcount give 0, make_list/make_set give [], the rest
 * give null. Percentiles are nearest-rank (Kusto's definition), computed exactly from value lists.
 */
import { queryError } from '../errors.js';
import { dbl, ident, int, join, type Sql, sql, str } from '../sql/sql.js';
import type { Expr } from '../syntax/ast.js';
import { DUCKDB_TYPE, type KqlType } from '../types.js';
import { type Bound, coerce, convert, strSql } from './bound.js';
import { columnMarks } from './column-marks.js';
import type { ExprBinder } from './expr-binder.js';
import { expressionName, numberForName } from './naming.js';
import type { AggregatePart, Column, IdAllocator } from './rel.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

/** One output column of an aggregate: its value over the final columns, type and default name. */
export interface AggregateOutput {
  value: Sql;
  type: KqlType;
  /** The name Kusto would give the column (undefined: ColumnN). */
  name?: string;
  /** Output of `*`-expanded or extra arguments (arg_max): named after the argument. */
  fixedName?: boolean;
  /** A datetime carried as ticks (min/max/take_any of one; decision 0036). */
  ticks?: boolean;
  /** A long Kusto types int (min/max/take_any of one; decision 0048). */
  int32?: boolean;
}

export interface BoundAggregate {
  part: AggregatePart;
  outputs: AggregateOutput[];
}

export interface AggregateEnv {
  ids: IdAllocator;
  /** The condition of an `…if` aggregate: only rows where it holds enter the partial states. */
  filter?: Sql;
  /** Columns in scope (for `arg_max(x, *)`) and the summarize keys' names. */
  scope: Column[];
  keyNames: Set<string>;
}

export type AggregateDef = (call: CallExpr, row: ExprBinder, env: AggregateEnv) => BoundAggregate;

export const ref = (c: Column): Sql => sql`${ident(c.id)}`;

/** ` FILTER (WHERE …)` for a partial aggregate call: the `…if` condition and any other. */
export function filterClause(env: AggregateEnv, also?: Sql): Sql {
  const conditions = [env.filter, also].filter((c): c is Sql => c !== undefined);
  return conditions.length > 0 ? sql` FILTER (WHERE ${join(conditions, ' AND ')})` : sql``;
}

export function finalCol(env: AggregateEnv, type: KqlType): Column {
  return { name: '', type, id: env.ids.column() };
}

export function partial(env: AggregateEnv, s: Sql, duckType: string): { id: string; sql: Sql; type: string } {
  return { id: env.ids.column(), sql: s, type: duckType };
}

export function args(call: CallExpr, min: number, max = min): void {
  const n = call.args.length;
  if (n < min || n > max) {
    throw queryError(
      `The aggregate '${call.name}' takes ${min === max ? min : `${min} to ${max}`} argument(s), not ${n}.`,
      call.span,
    );
  }
}

export function numericArg(b: Bound, call: CallExpr, allowed: KqlType[]): Bound {
  // A decimal where only reals are taken (stdev, variance, percentile…) is read as its real, as
  // Microsoft's analyzer types those aggregates of a decimal (decision 0031).
  const asReal = b.type === 'dynamic' || (b.type === 'decimal' && !allowed.includes('decimal') && allowed.includes('real'));
  const v = asReal ? convert(b, 'real', call.name) : b;
  if (!allowed.includes(v.type)) {
    throw queryError(`The argument of '${call.name}' must be ${allowed.join(' or ')}; this is a ${b.type}.`, b.span);
  }
  return v;
}

export const argName = (call: CallExpr, i = 0): string => {
  const a = call.args[i];
  return a ? (expressionName(a) ?? '') : '';
};

/** A single-column aggregate with a partial column and a merge over it. */
export function single(
  env: AggregateEnv,
  partialSql: Sql,
  partialType: string,
  finalOf: (p: Sql) => Sql,
  type: KqlType,
): BoundAggregate {
  const p = partial(env, partialSql, partialType);
  const f = finalCol(env, type);
  return {
    part: { partials: [p], finals: [{ col: f, sql: finalOf(sql`${ident(p.id)}`) }] },
    outputs: [{ value: ref(f), type }],
  };
}

export const countDef: AggregateDef = (call, row, env) => {
  args(call, 0, 1);
  const x = call.args[0] ? row.bind(call.args[0]) : undefined;
  const countSql = x
    ? sql`count(${x.type === 'string' ? strSql(x) : x.sql})${filterClause(env)}`
    : sql`count(*)${filterClause(env)}`;
  return single(env, countSql, 'BIGINT', (p) => sql`CAST(coalesce(sum(${p}), 0) AS BIGINT)`, 'long');
};

export const countifDef: AggregateDef = (call, row, env) => {
  args(call, 1);
  const pred = row.bind(call.args[0] as Expr, true);
  if (pred.type !== 'bool') throw queryError(`The argument of 'countif' must be a bool; this is a ${pred.type}.`, pred.span);
  return single(
    env,
    sql`count(*)${filterClause(env, pred.sql)}`,
    'BIGINT',
    (p) => sql`CAST(coalesce(sum(${p}), 0) AS BIGINT)`,
    'long',
  );
};

function sumLike(call: CallExpr, row: ExprBinder, env: AggregateEnv, filter: Sql | undefined): BoundAggregate {
  const x = numericArg(row.bind(call.args[0] as Expr), call, ['long', 'real', 'timespan', 'decimal']);
  const where = filterClause(env, filter);
  // Decimals: the exact sum of each worker's values, then of the partial sums (decision 0031).
  if (x.type === 'decimal')
    return single(
      env,
      sql`kql_decimal_sum(list(${x.sql})${where})`,
      'VARCHAR',
      (p) => sql`kql_decimal_sum(list(${p}))`,
      'decimal',
    );
  if (x.type === 'real') return single(env, sql`sum(${x.sql})${where}`, 'DOUBLE', (p) => sql`sum(${p})`, 'real');
  return single(env, sql`TRY_CAST(sum(${x.sql})${where} AS BIGINT)`, 'BIGINT', (p) => sql`TRY_CAST(sum(${p}) AS BIGINT)`, x.type);
}

export const sumDef: AggregateDef = (call, row, env) => {
  args(call, 1);
  return sumLike(call, row, env, undefined);
};

export const sumifDef: AggregateDef = (call, row, env) => {
  args(call, 2);
  const pred = row.bind(call.args[1] as Expr, true);
  if (pred.type !== 'bool') throw queryError(`The condition of 'sumif' must be a bool; this is a ${pred.type}.`, pred.span);
  return sumLike(call, row, env, pred.sql);
};

export const avgDef: AggregateDef = (call, row, env) => {
  args(call, 1);
  const x = numericArg(row.bind(call.args[0] as Expr), call, ['long', 'real', 'timespan', 'decimal']);
  if (x.type === 'decimal') return decimalAvg(x, env);
  const s = partial(env, sql`sum(CAST(${x.sql} AS DOUBLE))${filterClause(env)}`, 'DOUBLE');
  const n = partial(env, sql`count(${x.sql})${filterClause(env)}`, 'BIGINT');
  const type: KqlType = x.type === 'timespan' ? 'timespan' : 'real';
  const f = finalCol(env, type);
  const avg = sql`(sum(${ident(s.id)}) / nullif(sum(${ident(n.id)}), 0))`;
  const finalSql = type === 'timespan' ? sql`TRY_CAST(round(${avg}) AS BIGINT)` : avg;
  return {
    part: { partials: [s, n], finals: [{ col: f, sql: finalSql }] },
    outputs: [{ value: ref(f), type }],
  };
};

/** avg of decimals: exact partial sums and counts, divided once at the gateway (decimal-udfs.ts). */
function decimalAvg(x: Bound, env: AggregateEnv): BoundAggregate {
  const s = partial(env, sql`kql_decimal_sum(list(${x.sql})${filterClause(env)})`, 'VARCHAR');
  const n = partial(env, sql`count(${x.sql})${filterClause(env)}`, 'BIGINT');
  const f = finalCol(env, 'decimal');
  const finalSql = sql`kql_decimal_avg(list(${ident(s.id)}), CAST(sum(${ident(n.id)}) AS BIGINT))`;
  return { part: { partials: [s, n], finals: [{ col: f, sql: finalSql }] }, outputs: [{ value: ref(f), type: 'decimal' }] };
}

export const minMax =
  (fn: 'min' | 'max'): AggregateDef =>
  (call, row, env) => {
    args(call, 1);
    const x = row.bind(call.args[0] as Expr);
    if (x.type === 'dynamic' || x.type === 'guid') throw queryError(`'${call.name}' cannot order ${x.type} values.`, x.span);
    const agg = fn === 'min' ? (v: Sql) => sql`min(${v})` : (v: Sql) => sql`max(${v})`;
    return ticksKept(x, single(env, sql`${agg(x.sql)}${filterClause(env)}`, duckTypeOfBound(x), agg, x.type));
  };

/** The DuckDB type of a bound value: BIGINT for a datetime carried as ticks (decision 0036). */
const duckTypeOfBound = (x: Bound): string => (x.ticks ? 'BIGINT' : DUCKDB_TYPE[x.type]);

/**
 * A one-column aggregate of a datetime carried as ticks whose answer is one of its input values
 * (min, max, take_any): the ticks order as the datetimes do, so the value keeps its ticks.
 */
function ticksKept(x: Bound, bound: BoundAggregate): BoundAggregate {
  // An int (getyear, …) answers one of its values too: Kusto types min/max/take_any of it int (decision 0048).
  if (x.int32) for (const o of bound.outputs) o.int32 = true;
  if (!x.ticks) return bound;
  for (const f of bound.part.finals) f.col.ticks = true;
  for (const o of bound.outputs) o.ticks = true;
  return bound;
}

/** Non-null values of an argument (all values `withNulls`) as JSON list text ('[]' when none). */
export function jsonList(x: Bound, distinct: boolean, env: AggregateEnv, withNulls = false): Sql {
  // A decimal enters a list as the JSON string of its text (bound.ts, decision 0031); in a
  // distinct list in one form per value, so 1.5 and 1.50 count once.
  const v =
    x.type === 'string'
      ? strSql(x)
      : x.type === 'decimal'
        ? convert(distinct ? { ...x, sql: sql`kql_decimal_normal(${x.sql})` } : x, 'dynamic', 'list').sql
        : x.sql;
  const list = distinct ? sql`list(DISTINCT ${v})` : sql`list(${v})`;
  return sql`coalesce(to_json(${list}${filterClause(env, withNulls ? undefined : sql`${v} IS NOT NULL`)}), '[]')`;
}

/** All values of the partial JSON lists of a group, as a JSON[] list. */
export const mergedJsonList = (p: Sql): Sql => sql`flatten(list(CAST(CAST(${p} AS JSON) AS JSON[])))`;

export const dcountDef: AggregateDef = (call, row, env) => {
  args(call, 1, 2);
  const x = row.bind(call.args[0] as Expr);
  return single(
    env,
    jsonList(x, true, env),
    'VARCHAR',
    (p) => sql`CAST(coalesce(len(list_distinct(${mergedJsonList(p)})), 0) AS BIGINT)`,
    'long',
  );
};

export function percentileDef(multi: boolean, asArray = false): AggregateDef {
  return (call, row, env) => {
    if (multi) args(call, 2, 32);
    else args(call, 2);
    const x = numericArg(row.bind(call.args[0] as Expr), call, ['long', 'real', 'datetime', 'timespan']);
    const ps = call.args.slice(1).map((a) => {
      const b = row.bind(a);
      const v = b.value;
      const n = v && (v.type === 'long' || v.type === 'real') && v.value !== null ? Number(v.value) : Number.NaN;
      if (!(n >= 0 && n <= 100))
        throw queryError(`The percentile of '${call.name}' must be a constant between 0 and 100.`, b.span);
      return { n, text: v?.type === 'long' ? String(v.value) : String(n) };
    });
    const p = partial(env, jsonList(x, false, env), 'VARCHAR');
    // A datetime carried as ticks sorts as its BIGINT ticks and answers one of them (decision 0036).
    const sorted = { ...finalCol(env, x.type), ...(x.ticks ? { ticks: true } : {}) };
    const elementType = duckTypeOfBound(x);
    const listSql = sql`list_sort(flatten(list(CAST(CAST(${ident(p.id)} AS JSON) AS ${elementListType(elementType)}))))`;
    const L = ref(sorted);
    const at = (n: number) => sql`${L}[greatest(1, CAST(ceil(${dbl(n)} / 100.0 * len(${L})) AS BIGINT))]`;
    const part = { partials: [p], finals: [{ col: sorted, sql: listSql }] };
    if (asArray) {
      // percentiles_array: one dynamic array of the values (null when there are no values).
      if (x.type !== 'long' && x.type !== 'real')
        throw queryError(`'${call.name}' of a ${x.type} is not supported; use percentiles().`, x.span);
      const values = join(
        ps.map(({ n }) => at(n)),
        ', ',
      );
      return {
        part,
        outputs: [{ value: sql`(CASE WHEN len(${L}) > 0 THEN CAST(to_json([${values}]) AS JSON) END)`, type: 'dynamic' }],
      };
    }
    return {
      part,
      outputs: ps.map(({ n, text }) => ({
        value: at(n),
        type: x.type,
        ...(x.ticks ? { ticks: true } : {}),
        name: `percentile_${argName(call)}_${numberForName(text)}`,
      })),
    };
  };
}

function elementListType(duckType: string): Sql {
  switch (duckType) {
    case 'BIGINT':
      return sql`BIGINT[]`;
    case 'DOUBLE':
      return sql`DOUBLE[]`;
    case 'TIMESTAMP':
      return sql`TIMESTAMP[]`;
    default:
      throw new Error(`no list type for ${duckType}`);
  }
}

export function argMaxDef(fn: 'max' | 'min'): AggregateDef {
  return (call, row, env) => {
    if (call.args.length < 2)
      throw queryError(`'${call.name}' needs the expression to ${fn}imize and at least one column (or *).`, call.span);
    const e = row.bind(call.args[0] as Expr);
    if (e.type === 'dynamic' || e.type === 'guid') throw queryError(`'${call.name}' cannot order ${e.type} values.`, e.span);
    // Columns to return: named arguments, `*` expands to every column but the keys and the maximized one.
    const returned: { bound: Bound; name?: string }[] = [];
    const maximizedColumn = call.args[0]?.kind === 'name' ? call.args[0].name : undefined;
    for (const a of call.args.slice(1)) {
      if (a.kind === 'star') {
        for (const c of env.scope) {
          if (env.keyNames.has(c.name) || c.name === maximizedColumn) continue;
          returned.push({ bound: row.bind({ kind: 'name', name: c.name, span: a.span }), name: c.name });
        }
      } else {
        returned.push({ bound: row.bind(a), name: expressionName(a) });
      }
    }
    const fields = returned.map((r, i) => sql`${ident(`f${i}`)} := ${r.bound.sql}`);
    const pe = partial(env, fn === 'max' ? sql`max(${e.sql})` : sql`min(${e.sql})`, duckTypeOfBound(e));
    const pickPartial = fn === 'max' ? sql`arg_max_null` : sql`arg_min_null`;
    const pr = partial(env, sql`to_json(${pickPartial}(struct_pack(${join(fields, ', ')}), ${e.sql}))`, 'VARCHAR');
    const fe = { ...finalCol(env, e.type), ...(e.ticks ? { ticks: true } : {}) };
    const fr = finalCol(env, 'dynamic');
    const peRef = sql`${ident(pe.id)}`;
    const finals = [
      { col: fe, sql: fn === 'max' ? sql`max(${peRef})` : sql`min(${peRef})` },
      { col: fr, sql: sql`${pickPartial}(${ident(pr.id)}, ${peRef})` },
    ];
    const outputs: AggregateOutput[] = [
      {
        value: ref(fe),
        type: e.type,
        name: expressionName(call.args[0] as Expr),
        // The answer is one of the rows' values: it keeps their marks (an int stays int, decision 0048).
        ...columnMarks(e),
      },
    ];
    returned.forEach((r, i) => {
      const path = str(`$.f${i}`);
      const text = sql`json_extract_string(${ref(fr)}, ${path})`;
      let value: Sql;
      switch (r.bound.type) {
        case 'string':
          value = sql`coalesce(${text}, '')`;
          break;
        case 'dynamic':
          value = sql`json_extract(${ref(fr)}, ${path})`;
          break;
        case 'timespan':
          value = sql`CAST(${text} AS BIGINT)`;
          break;
        default:
          // A datetime carried as ticks is a BIGINT in the JSON row (decision 0036).
          value = r.bound.ticks ? sql`CAST(${text} AS BIGINT)` : sql`CAST(${text} AS ${typeSql(r.bound.type)})`;
      }
      outputs.push({
        value,
        type: r.bound.type,
        name: r.name,
        fixedName: true,
        ...columnMarks(r.bound),
      });
    });
    return { part: { partials: [pe, pr], finals }, outputs };
  };
}

function typeSql(t: KqlType): Sql {
  const map: Record<KqlType, Sql> = {
    string: sql`VARCHAR`,
    long: sql`BIGINT`,
    real: sql`DOUBLE`,
    decimal: sql`VARCHAR`,
    bool: sql`BOOLEAN`,
    datetime: sql`TIMESTAMP`,
    timespan: sql`BIGINT`,
    guid: sql`UUID`,
    dynamic: sql`JSON`,
  };
  return map[t];
}

export function makeListDef(set: boolean, withNulls = false): AggregateDef {
  return (call, row, env) => {
    args(call, 1, 2);
    let x = row.bind(call.args[0] as Expr);
    // Inside dynamic values, datetimes and timespans read the way Kusto writes them.
    // As JSON strings (a null stays null, skipped or kept by make_list_with_nulls; tostring would
    // have made it "" and listed it).
    if (x.type === 'datetime' || x.type === 'timespan' || x.type === 'guid') x = convert(x, 'dynamic', call.name);
    let max: bigint | undefined;
    if (call.args[1]) {
      const m = row.bind(call.args[1]);
      if (m.value?.type !== 'long' || m.value.value === null || m.value.value < 1n) {
        throw queryError(`The size limit of '${call.name}' must be a positive constant integer.`, m.span);
      }
      max = m.value.value;
    }
    const finalOf = (p: Sql) => {
      let l = mergedJsonList(p);
      if (set) l = sql`list_distinct(${l})`;
      if (max !== undefined) l = sql`list_slice(${l}, 1, ${int(max)})`;
      return sql`CAST(coalesce(to_json(${l}), '[]') AS JSON)`;
    };
    return single(env, jsonList(x, set, env, withNulls), 'VARCHAR', finalOf, 'dynamic');
  };
}

export const takeAnyDef: AggregateDef = (call, row, env) => {
  if (call.args.length !== 1)
    throw queryError("'take_any' with several arguments is not supported; use one per column.", call.span);
  const x = row.bind(call.args[0] as Expr);
  return ticksKept(
    x,
    single(env, sql`any_value(${x.sql})${filterClause(env)}`, duckTypeOfBound(x), (p) => sql`any_value(${p})`, x.type),
  );
};

/** Sample (`stdev`, `variance`) or population (`stdevp`, `variancep`) spread. */
export function varianceDef(kind: 'stdev' | 'variance' | 'stdevp' | 'variancep'): AggregateDef {
  return (call, row, env) => {
    args(call, 1);
    const x = numericArg(row.bind(call.args[0] as Expr), call, ['long', 'real']);
    const v = coerce(x, 'real');
    const f = filterClause(env);
    const n = partial(env, sql`count(${v})${f}`, 'BIGINT');
    const m = partial(env, sql`avg(${v})${f}`, 'DOUBLE');
    const m2 = partial(env, sql`coalesce(var_pop(${v})${f} * count(${v})${f}, 0)`, 'DOUBLE');
    const N = finalCol(env, 'real');
    const S1 = finalCol(env, 'real');
    const S2 = finalCol(env, 'real');
    const M = finalCol(env, 'real');
    const [rn, rm, rm2] = [sql`${ident(n.id)}`, sql`${ident(m.id)}`, sql`${ident(m2.id)}`];
    const finals = [
      { col: N, sql: sql`CAST(coalesce(sum(${rn}), 0) AS DOUBLE)` },
      { col: S1, sql: sql`sum(${rn} * ${rm})` },
      { col: S2, sql: sql`sum(${rn} * ${rm} * ${rm})` },
      { col: M, sql: sql`sum(${rm2})` },
    ];
    // Chan et al.: M2 = Σ m2ᵢ + Σ nᵢ·meanᵢ² − (Σ nᵢ·meanᵢ)² / N; sample variance M2 / (N − 1),
    // population variance M2 / N.
    const m2Total = sql`greatest(${ref(M)} + ${ref(S2)} - ${ref(S1)} * ${ref(S1)} / ${ref(N)}, 0)`;
    const population = kind === 'stdevp' || kind === 'variancep';
    const variance = population
      ? sql`(CASE WHEN ${ref(N)} >= 1 THEN ${m2Total} / ${ref(N)} END)`
      : sql`(CASE WHEN ${ref(N)} > 1 THEN ${m2Total} / (${ref(N)} - 1) WHEN ${ref(N)} = 1 THEN 0.0 END)`;
    const value = kind === 'variance' || kind === 'variancep' ? variance : sql`sqrt(${variance})`;
    return { part: { partials: [n, m, m2], finals }, outputs: [{ value, type: 'real' }] };
  };
}

/** binary_all_and / _or / _xor: the bitwise combination of the group's longs (each merges itself). */
export function binaryAllDef(op: 'and' | 'or' | 'xor'): AggregateDef {
  return (call, row, env) => {
    args(call, 1);
    const x = row.bind(call.args[0] as Expr);
    if (x.type !== 'long') throw queryError(`The argument of '${call.name}' must be a long; this is a ${x.type}.`, x.span);
    const fn = (v: Sql) => (op === 'and' ? sql`bit_and(${v})` : op === 'or' ? sql`bit_or(${v})` : sql`bit_xor(${v})`);
    return single(env, sql`${fn(x.sql)}${filterClause(env)}`, 'BIGINT', fn, 'long');
  };
}

/**
 * make_bag: the property bags of the group merged into one (other values are ignored). Kusto
 * keeps an arbitrary value when a key repeats; here the smallest by its JSON text, so the answer
 * does not depend on how rows are spread over workers. Partial state: the worker's bags as a
 * JSON list.
 */
export const makeBagDef: AggregateDef = (call, row, env) => {
  args(call, 1, 2);
  const x = row.bind(call.args[0] as Expr);
  if (x.type !== 'dynamic') throw queryError(`The argument of '${call.name}' must be dynamic; this is a ${x.type}.`, x.span);
  let max: bigint | undefined;
  if (call.args[1]) {
    const m = row.bind(call.args[1]);
    if (m.value?.type !== 'long' || m.value.value === null || m.value.value < 1n)
      throw queryError(`The size limit of '${call.name}' must be a positive constant integer.`, m.span);
    max = m.value.value;
  }
  const partialSql = sql`coalesce(to_json(list(${x.sql})${filterClause(env, sql`json_type(${x.sql}) = 'OBJECT'`)}), '[]')`;
  const finalOf = (p: Sql) => {
    const entries = sql`list_sort(flatten(list_transform(${mergedJsonList(p)}, b -> map_entries(CAST(b AS MAP(VARCHAR, JSON))))))`;
    // Sorted by key, then value text: the first entry of each key wins.
    let unique = sql`list_filter(e, (x, i) -> i = 1 OR e[i - 1].key <> x.key)`;
    if (max !== undefined) unique = sql`list_slice(${unique}, 1, ${int(max)})`;
    // The entries are named `e` through a one-element list (no subquery in the statement).
    const bag = sql`list_transform([${entries}], e -> CAST(to_json(map_from_entries(${unique})) AS JSON))[1]`;
    return sql`coalesce(${bag}, CAST('{}' AS JSON))`;
  };
  return single(env, partialSql, 'VARCHAR', finalOf, 'dynamic');
};

/**
 * The `…if` form of an aggregate: the condition is the second argument; only rows where it holds
 * enter the partial states (so merging stays the base aggregate's merge).
 */
export function conditional(def: AggregateDef, maxArgs: number): AggregateDef {
  return (call, row, env) => {
    if (call.args.length < 2 || call.args.length > maxArgs) {
      throw queryError(
        `The aggregate '${call.name}' takes ${maxArgs === 2 ? 2 : `2 to ${maxArgs}`} arguments (the value, then the condition), not ${call.args.length}.`,
        call.span,
      );
    }
    const pred = row.bind(call.args[1] as Expr, true);
    if (pred.type !== 'bool')
      throw queryError(`The condition of '${call.name}' must be a bool; this is a ${pred.type}.`, pred.span);
    const rest = { ...call, args: call.args.filter((_, i) => i !== 1) };
    return def(rest, row, { ...env, filter: env.filter ? sql`(${env.filter} AND ${pred.sql})` : pred.sql });
  };
}

export const joinDef: AggregateDef = (call, row, env) => {
  // The product's join(x, separator): the group's values concatenated.
  args(call, 2);
  const x = convert(row.bind(call.args[0] as Expr), 'string', call.name);
  const sep = row.bind(call.args[1] as Expr);
  if (sep.value?.type !== 'string') throw queryError("The separator of 'join' must be a constant string.", sep.span);
  const sepParam = str(sep.value.value);
  return single(
    env,
    sql`string_agg(${x.sql}, ${sepParam})`,
    'VARCHAR',
    (p) => sql`coalesce(string_agg(${p}, ${str(sep.value?.type === 'string' ? sep.value.value : '')}), '')`,
    'string',
  );
};
