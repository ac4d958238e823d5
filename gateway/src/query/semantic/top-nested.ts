/**
 * `top-nested`: hierarchical top values. Level j groups the rows by the first j+1 `of`
 * expressions, aggregates each group, ranks the groups within their parent group (level j-1's)
 * and keeps the first N; the result has one row per kept group of the last level, with every
 * level's value and aggregate (two columns per level).
 *
 * Plan: each level is a summarize of the input by its keys (so workers compute partial
 * aggregates), ranked at the gateway with row_number() over its parent group; the levels are
 * joined on a text form of their keys (so null values match, which a join on the values would
 * not). `with others = v` adds, per kept parent, one row keyed v whose aggregate covers the
 * groups left out: only for aggregates whose value over the rest follows from the groups'
 * values (count, sum, min, max and their if forms); others are refused by name.
 *
 * Ties are ranked by the groups' key text, so the answer does not depend on how rows are spread
 * over workers (Kusto picks among ties arbitrarily).
 */
import { queryError, type Span } from '../errors.js';
import { int, join, type Sql, sql } from '../sql/sql.js';
import type { Expr, JoinCondition, JoinKind, NamedExpr, Operator, TopNestedLevel } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { literalSql } from './bound.js';
import { identOf } from './expr-binder.js';
import { expressionName, NameAllocator } from './naming.js';
import type { PluginHost } from './plugins.js';
import { type Column, type Output, type Rel, relColumns } from './rel.js';

export interface TopNestedHost extends PluginHost {
  extend(input: Rel, columns: Column[], items: NamedExpr[]): Rel;
  join(left: Rel, right: Rel, kind: JoinKind, on: JoinCondition[], span: Span): Rel;
  union(inputs: Rel[]): Rel;
  constCount(expr: Expr, what: string): bigint;
}

/** The aggregate that combines the left-out groups' values into the others row's value. */
const OTHERS_MERGE: Record<string, string> = {
  count: 'sum',
  countif: 'sum',
  sum: 'sum',
  sumif: 'sum',
  min: 'min',
  minif: 'min',
  max: 'max',
  maxif: 'max',
};

const nameExpr = (name: string, span: Span): Expr => ({ kind: 'name', name, span });
const byName = (rel: Rel, name: string): Column => {
  const c = relColumns(rel).find((x) => x.name === name);
  if (!c) throw new Error(`top-nested: no column ${name}`);
  return c;
};

/** Internal column names (engine-chosen; user columns keep theirs until the final project). */
const V = (j: number) => `__tn_v${j}`;
const A = (j: number) => `__tn_a${j}`;
const P = (j: number) => `__tn_p${j}`;
const S = (j: number) => `__tn_s${j}`;
const R = (j: number) => `__tn_r${j}`;

interface Level {
  clause: TopNestedLevel;
  valueName: string;
  aggName: string;
  count?: bigint;
  /** Kept groups, ranked: V(j), A(j), P(j) (parent key text), S(j) (own key text), R(j) (rank). */
  ranked: Rel;
  kept: Rel;
  valueType: KqlType;
  aggType: KqlType;
}

export function bindTopNested(host: TopNestedHost, input: Rel, op: Extract<Operator, { kind: 'top-nested' }>): Rel {
  const span = op.span;
  const columns = relColumns(input);
  const names = new NameAllocator();
  // Every level's value, computed once per row.
  const valued = host.extend(
    input,
    columns,
    op.levels.map((l, j) => ({ name: V(j), expr: l.of.expr, span: l.of.span })),
  );
  const valuedColumns = relColumns(valued);
  const levels: Level[] = op.levels.map((clause, j) => {
    const valueName = names.derive(clause.of.name ?? expressionName(clause.of.expr) ?? `Column${j + 1}`);
    const aggName = names.derive(clause.by.name ?? `aggregated_${valueName}`);
    const keys = op.levels.slice(0, j + 1).map((_, k) => ({ expr: nameExpr(V(k), span), span }));
    const grouped = host.summarize(
      valued,
      valuedColumns,
      [{ name: A(j), expr: clause.by.expr, span: clause.by.span }],
      keys,
      clause.span,
    );
    const ranked = rank(host, grouped, j, clause.descending);
    const count = clause.count ? host.constCount(clause.count, 'top-nested') : undefined;
    const kept: Rel =
      count === undefined
        ? ranked
        : {
            kind: 'filter',
            input: ranked,
            predicate: sql`${identOf(byName(ranked, R(j)))} <= ${int(count)}`,
            columns: relColumns(ranked),
          };
    return {
      clause,
      valueName,
      aggName,
      ...(count !== undefined ? { count } : {}),
      ranked,
      kept,
      valueType: byName(ranked, V(j)).type,
      aggType: byName(ranked, A(j)).type,
    };
  });

  // Kept groups of every level, each joined to its kept parent.
  const chains: Rel[] = [];
  levels.forEach((level, j) => {
    const parent = chains[j - 1];
    chains.push(parent ? host.join(parent, level.kept, 'inner', [{ left: S(j - 1), right: P(j), span }], span) : level.kept);
  });
  const legs = [finalColumns(host, chains[chains.length - 1] as Rel, levels, levels.length, undefined)];
  levels.forEach((level, j) => {
    if (level.clause.others) legs.push(othersRow(host, level, j, j > 0 ? (chains[j - 1] as Rel) : undefined, levels));
  });
  return legs.length === 1 ? (legs[0] as Rel) : host.union(legs);
}

/** Level j's groups with their parent's key text, their own, and their rank within the parent. */
function rank(host: TopNestedHost, grouped: Rel, j: number, descending: boolean): Rel {
  const keys = Array.from({ length: j + 1 }, (_, k) => identOf(byName(grouped, V(k))));
  const keyText = (parts: Sql[]) => (parts.length === 0 ? sql`'[]'` : sql`CAST(json_array(${join(parts, ', ')}) AS VARCHAR)`);
  const parentText = keyText(keys.slice(0, j));
  const ownText = keyText(keys);
  const agg = identOf(byName(grouped, A(j)));
  const direction = descending ? sql`DESC` : sql`ASC`;
  const value = byName(grouped, V(j));
  const aggregate = byName(grouped, A(j));
  const outputs: Output[] = [
    { col: host.newColumn(V(j), value.type), sql: identOf(value) },
    { col: host.newColumn(A(j), aggregate.type), sql: agg },
    { col: host.newColumn(P(j), 'string'), sql: parentText },
    { col: host.newColumn(S(j), 'string'), sql: ownText },
    {
      col: host.newColumn(R(j), 'long'),
      sql: sql`row_number() OVER (PARTITION BY ${parentText} ORDER BY ${agg} ${direction} NULLS LAST, ${ownText})`,
    },
  ];
  return { kind: 'project', input: grouped, outputs, columns: outputs.map((o) => o.col) };
}

/**
 * The result columns from a joined chain of levels 0..depth-1; level `depth` (when `others` is
 * given) takes the others value and aggregate; deeper levels are null.
 */
function finalColumns(
  host: TopNestedHost,
  chain: Rel,
  levels: Level[],
  depth: number,
  others: { value: Sql; aggregate: Sql } | undefined,
): Rel {
  const outputs: Output[] = [];
  levels.forEach((level, j) => {
    let value: Sql;
    let aggregate: Sql;
    if (j < depth) {
      value = identOf(byName(chain, V(j)));
      aggregate = identOf(byName(chain, A(j)));
    } else if (j === depth && others) {
      ({ value, aggregate } = others);
    } else {
      value = literalSql({ type: level.valueType, value: null } as never);
      aggregate = literalSql({ type: level.aggType, value: null } as never);
    }
    outputs.push({ col: host.newColumn(level.valueName, level.valueType), sql: value });
    outputs.push({ col: host.newColumn(level.aggName, level.aggType), sql: aggregate });
  });
  return { kind: 'project', input: chain, outputs, columns: outputs.map((o) => o.col) };
}

/** The `with others` rows of level j: per kept parent, the left-out groups' aggregate, keyed by the others value. */
function othersRow(host: TopNestedHost, level: Level, j: number, parentChain: Rel | undefined, levels: Level[]): Rel {
  const span = level.clause.span;
  const othersExpr = level.clause.others as Expr;
  const by = level.clause.by.expr;
  const merge = by.kind === 'call' ? OTHERS_MERGE[by.name.toLowerCase()] : undefined;
  if (!merge)
    throw queryError(
      'top-nested … with others needs count(), sum(), min() or max() (or their if forms) as the aggregate.',
      by.span,
    );
  const other = host.exprBinder([]).bind(othersExpr);
  if (other.value === undefined) throw queryError('The others value must be a constant.', othersExpr.span);
  if (other.type !== level.valueType && other.value.value !== null)
    throw queryError(`The others value must be a ${level.valueType}, as the level's values are.`, othersExpr.span);
  const otherSql = other.type === level.valueType ? other.sql : literalSql({ type: level.valueType, value: null } as never);
  // Without N nothing is left out.
  const count = level.count ?? 1n << 62n;
  const rest: Rel = {
    kind: 'filter',
    input: level.ranked,
    predicate: sql`${identOf(byName(level.ranked, R(j)))} > ${int(count)}`,
    columns: relColumns(level.ranked),
  };
  const merged = host.summarize(
    rest,
    relColumns(rest),
    [{ name: '__tn_o', expr: { kind: 'call', name: merge, nameSpan: span, args: [nameExpr(A(j), span)], span }, span }],
    [{ expr: nameExpr(P(j), span), span }],
    span,
  );
  const aggregate = identOf(byName(merged, '__tn_o'));
  if (!parentChain) return finalColumns(host, merged, levels, j, { value: otherSql, aggregate });
  const joined = host.join(parentChain, merged, 'inner', [{ left: S(j - 1), right: P(j), span }], span);
  return finalColumns(host, joined, levels, j, { value: otherSql, aggregate: identOf(byName(joined, '__tn_o')) });
}
