/**
 * Cuts a bound query into per-table worker fragments and a gateway merge.
 *
 * A fragment is the longest prefix above a table scan that workers can run over their own rows
 * without changing the answer: filters and projections, then optionally a partial aggregate, a
 * limit (take), or a sort with a limit (top, sort | take). Filters on the time column give the
 * fragment a time range for segment pruning. The merge reads the union of every worker's fragment
 * rows and runs the rest: the final aggregate, the limit again, the sort again, everything after.
 * The whole query ends in a limit of maxRows + 1, so a plain filter query ships at most that many
 * rows from each worker and the caller can tell when rows were cut.
 */
import type { BranchTopN, QueryValueType, TermHint, WireType } from '@strata/common';
/** The relation name a fragment reads; each worker binds it to its rows of the table. */
import { FRAGMENT_SOURCE } from '@strata/common';
import type { PhaseAnswer } from '../semantic/phases.js';
import { type Column, type Rel, ROW_ORDER, relColumns, type SortSpec, type TimeBounds } from '../semantic/rel.js';
import type { DeferredParam, ScalarQuery } from '../semantic/scalar-query.js';
import { contains, ident, type ParamValue, type RenderedSql, render, Sql, sql } from '../sql/sql.js';
import type { RenderHint } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { duckTypeOf, type OrderKey, readableColumn, SqlGenerator, wireColumn, wireTypeOf } from './sql-gen.js';

export { FRAGMENT_SOURCE };

export interface FragmentSpec {
  index: number;
  /** The table (schema) the fragment reads. */
  table: string;
  /** Inclusive time bounds (µs since the Unix epoch) for pruning segments; absent sides are open. */
  timeRange: TimeBounds;
  /**
   * Exact inclusive bounds (µs) the worker must apply itself: the statement leaves out the where
   * conjuncts they come from (PlanInput.storageTime). Absent: the statement holds every condition.
   */
  storageTime?: TimeBounds;
  /** The statement, reading the relation named FRAGMENT_SOURCE. */
  sql: string;
  params: ParamValue[];
  /** Columns the statement reads from the table (a worker lacking one reads nulls). */
  sourceColumns: { name: string; type: QueryValueType }[];
  /** Output columns in order, with their wire (DuckDB) types. */
  columns: { id: string; type: WireType }[];
  /**
   * Constant `has` conjuncts of the fragment's filters over scan columns: a worker may skip
   * segments whose term index proves no row holds them (the statement keeps the conditions).
   */
  terms?: TermHint[];
  /** At most this many rows are useful from each worker (the statement already limits). */
  limit?: bigint;
  /**
   * Set for a top-N fragment (sort + limit): its order keys as output column positions. A worker
   * may run it over each part of its rows and keep the first rows of the union (fragmentSql).
   */
  branchTopN?: BranchTopN;
  /**
   * Set for a take without an order over filters and projections of the scan: any this many of
   * the statement's rows are its answer, so a worker may run it over a few scan parts at a time and
   * stop once it has them (anyRowsLimit).
   */
  branchLimit?: bigint;
  /** More rows than this from all workers together fail the query (a join side held at the gateway). */
  maxGatewayRows?: number;
}

/**
 * The whole query as one worker statement, for when exactly one worker is registered: it then
 * runs everything itself and returns final rows (no merge on the gateway). Present when the
 * query reads exactly one table. Its output columns are the result columns in readable form.
 */
export type SingleWorkerSpec = Omit<FragmentSpec, 'index'>;

/**
 * When the merge would only cut one fragment's rows to a count (filters and projections pushed
 * down, no order), the gateway takes the first `count` rows as they arrive instead.
 */
export interface PassthroughSpec {
  fragment: number;
  count: bigint;
  /** For each result column, its position among the fragment's output columns. */
  columnIndexes: number[];
}

/** A `toscalar()` subquery's plan and the parameter its first value fills (semantic/scalar-query.ts). */
export interface ScalarPlan {
  plan: QueryPlan;
  type: KqlType;
  target: DeferredParam;
}

export interface QueryPlan {
  /** Run first, in order (inner subqueries before outer ones): they fill parameters of what follows. */
  scalars: ScalarPlan[];
  fragments: FragmentSpec[];
  single?: SingleWorkerSpec;
  passthrough?: PassthroughSpec;
  /** The gateway statement over tables f0, f1 … holding each fragment's rows. */
  merge: RenderedSql;
  /** Result columns in order. */
  /** `int32`: a long Kusto types int, reported as Int32 (decision 0048). */
  columns: { name: string; type: KqlType; id: string; int32?: true }[];
  render?: RenderHint;
  maxRows: number;
  nowUs: bigint;
  /**
   * Set when this plan is a first phase (semantic/phases.ts): the query's columns depend on its
   * answer, which `nextPhase` takes to plan the rest. Its own columns are the phase's, not the query's.
   */
  nextPhase?: (answer: PhaseAnswer) => QueryPlan;
}

interface PlanState {
  fragments: FragmentSpec[];
  /** Leave exact time conjuncts to the storage (PlanInput.storageTime). */
  storageTime: boolean;
  /** Per fragment, the rel it was cut from and the rel its statement was written from. */
  cut: Map<number, { from: Rel; to: Rel }>;
  orderIds: { next: number };
  /** Set below a join: the fragment's rows are held at the gateway, so they are bounded. */
  underJoin?: boolean;
}

/**
 * Most rows one fragment below a join may send to the gateway, summed over the workers. The
 * gateway's merge database holds both sides of a join in memory: at this bound and a typical
 * width of 10 columns that is in the order of 100–200 MB per side. Past it the query is refused
 * with a message that says so (filter or summarize the side first).
 */
export const JOIN_SIDE_MAX_ROWS = 1_000_000;

function isPushable(rel: Rel): boolean {
  if (rel.kind === 'scan') return true;
  // A project with row functions (row_number, prev …) needs every row in order: not on a worker.
  if (rel.kind === 'project' && rel.outputs.some((o) => contains(o.sql, ROW_ORDER))) return false;
  if (rel.kind === 'filter' || rel.kind === 'project' || rel.kind === 'mv-expand') return isPushable(rel.input);
  return false;
}

function collectTime(rel: Rel, acc: TimeBounds): void {
  if (rel.kind === 'filter' && rel.time) {
    if (rel.time.fromUs !== undefined && (acc.fromUs === undefined || rel.time.fromUs > acc.fromUs)) acc.fromUs = rel.time.fromUs;
    if (rel.time.toUs !== undefined && (acc.toUs === undefined || rel.time.toUs < acc.toUs)) acc.toUs = rel.time.toUs;
  }
  if ('input' in rel) collectTime(rel.input, acc);
}

/**
 * The term hints of every filter in a fragment. Each filter of a fragment is row-wise over the
 * scan's rows, below any limit or aggregate of it: a row that leaves the fragment passed them all.
 */
function collectTerms(rel: Rel, acc: TermHint[]): void {
  if (rel.kind === 'filter' && rel.terms) acc.push(...rel.terms);
  if ('input' in rel) collectTerms(rel.input, acc);
}

/**
 * A fragment's rel without the where conjuncts the storage applies exactly (StorageTime), and
 * their bounds intersected into `acc`. Every filter of a fragment is row-wise over the scan's
 * rows below any limit or aggregate of it, so applying its time conjuncts to the scan instead
 * keeps the answer.
 */
function withoutStorageTime(rel: Rel, acc: TimeBounds): Rel {
  switch (rel.kind) {
    case 'filter': {
      const input = withoutStorageTime(rel.input, acc);
      if (!rel.storageTime) return input === rel.input ? rel : { ...rel, input };
      const { fromUs, toUs } = rel.storageTime.bounds;
      if (fromUs !== undefined && (acc.fromUs === undefined || fromUs > acc.fromUs)) acc.fromUs = fromUs;
      if (toUs !== undefined && (acc.toUs === undefined || toUs < acc.toUs)) acc.toUs = toUs;
      return rel.storageTime.residual ? { ...rel, input, predicate: rel.storageTime.residual } : input;
    }
    case 'project':
    case 'mv-expand':
    case 'partial-aggregate':
    case 'limit':
    case 'sort': {
      const input = withoutStorageTime(rel.input, acc);
      return input === rel.input ? rel : ({ ...rel, input } as Rel);
    }
    default:
      return rel;
  }
}

/** `root` with the subtree `from` (by identity) replaced by `to`. */
function replaceRel(root: Rel, from: Rel, to: Rel): Rel {
  if (root === from) return to;
  switch (root.kind) {
    case 'filter':
    case 'project':
    case 'mv-expand':
    case 'partial-aggregate':
    case 'final-aggregate':
    case 'limit':
    case 'sort': {
      const input = replaceRel(root.input, from, to);
      return input === root.input ? root : ({ ...root, input } as Rel);
    }
    case 'union':
      return { ...root, inputs: root.inputs.map((i) => ({ ...i, rel: replaceRel(i.rel, from, to) })) };
    case 'join':
      return { ...root, left: replaceRel(root.left, from, to), right: replaceRel(root.right, from, to) };
    default:
      return root;
  }
}

function scanOf(rel: Rel): Extract<Rel, { kind: 'scan' }> {
  if (rel.kind === 'scan') return rel;
  if ('input' in rel) return scanOf(rel.input);
  throw new Error('fragment without a scan');
}

/** Whether SQL holds a window (`… OVER (…)`): its value depends on the other rows read. */
function hasWindow(s: Sql): boolean {
  return s.strings.some((t) => /\bOVER\s*\(/i.test(t)) || s.values.some((v) => v instanceof Sql && hasWindow(v));
}

/**
 * The count of a limit whose rows may be any rows passing row-by-row operators over the scan (a
 * take without an order: filters, and projections without windows), else undefined. Its answer
 * over a few scan parts, once it holds that many rows, is an answer over all of them: a worker
 * runs it part by part and stops early (FragmentStatement.branchLimit, decision 0033).
 */
export function anyRowsLimit(rel: Rel): bigint | undefined {
  if (rel.kind !== 'limit') return undefined;
  const rowWise = (r: Rel): boolean => {
    if (r.kind === 'scan') return true;
    if (r.kind === 'filter') return !hasWindow(r.predicate) && rowWise(r.input);
    if (r.kind === 'project') return r.outputs.every((o) => !hasWindow(o.sql)) && rowWise(r.input);
    return false;
  };
  return rowWise(rel.input) ? rel.count : undefined;
}

function makeFragment(
  rel: Rel,
  state: PlanState,
  limit?: bigint,
): { leaf: Extract<Rel, { kind: 'fragment' }>; order?: OrderKey[] } {
  const gen = new SqlGenerator({
    scanSource: () => sql`${ident(FRAGMENT_SOURCE)}`,
    fragmentSource: () => {
      throw new Error('nested fragment');
    },
    orderIds: state.orderIds,
  });
  const storageTime: TimeBounds = {};
  const written = state.storageTime ? withoutStorageTime(rel, storageTime) : rel;
  const g = gen.gen(written);
  const order = g.order ?? [];
  const columns = [
    ...g.visible.map((c) => ({ id: c.id, type: duckTypeOf(c) })),
    ...g.extra.map((e) => ({ id: e.id, type: e.duckType })),
    ...order.map((o) => ({ id: o.id, type: o.duckType })),
  ];
  const statement = gen.statement(
    g,
    columns.map((c) => wireColumn(c.id, c.type)),
  );
  const rendered = render(statement);
  const read = gen.scanColumns()[0]?.columns ?? [];
  const anyRows = anyRowsLimit(rel);
  const timeRange: TimeBounds = {};
  collectTime(rel, timeRange);
  const terms: TermHint[] = [];
  collectTerms(rel, terms);
  const index = state.fragments.length;
  const scan = scanOf(rel);
  const stripped = written !== rel;
  if (stripped) state.cut.set(index, { from: rel, to: written });
  // A top-N's order keys are the fragment's last output columns (shipped for the merge's sort).
  const topN =
    rel.kind === 'limit' && rel.input.kind === 'sort' && order.length > 0
      ? {
          keys: order.map((o, i) => ({
            column: columns.length - order.length + i,
            descending: o.descending,
            nullsFirst: o.nullsFirst,
          })),
          limit: rel.count,
          ...(rel.input.keys[0]?.origin ? { source: rel.input.keys[0].origin } : {}),
        }
      : undefined;
  state.fragments.push({
    index,
    table: scan.table,
    timeRange,
    ...(stripped ? { storageTime } : {}),
    ...(terms.length > 0 ? { terms } : {}),
    sql: rendered.text,
    params: rendered.params,
    sourceColumns: read.map((c) => ({ name: c.origin ?? c.name, type: c.type })),
    columns: columns.map((c) => ({ id: c.id, type: wireTypeOf(c.type) as WireType })),
    ...(limit !== undefined ? { limit } : {}),
    ...(topN ? { branchTopN: topN } : {}),
    ...(!topN && anyRows !== undefined ? { branchLimit: anyRows } : {}),
    ...(state.underJoin ? { maxGatewayRows: JOIN_SIDE_MAX_ROWS } : {}),
  });
  const extra = [...g.extra, ...order.map((o) => ({ id: o.id, duckType: o.duckType }))];
  return { leaf: { kind: 'fragment', index, columns: g.visible, extra }, order };
}

function split(rel: Rel, state: PlanState): Rel {
  switch (rel.kind) {
    case 'scan':
      return makeFragment(rel, state).leaf;
    case 'filter':
    case 'project':
    case 'mv-expand':
      if (isPushable(rel)) return makeFragment(rel, state).leaf;
      return { ...rel, input: split(rel.input, state) } as Rel;
    case 'partial-aggregate':
      if (isPushable(rel.input)) return makeFragment(rel, state).leaf;
      return { ...rel, input: split(rel.input, state) };
    case 'limit': {
      if (isPushable(rel.input)) return { ...rel, input: makeFragment(rel, state, rel.count).leaf };
      if (rel.input.kind === 'sort' && isPushable(rel.input.input)) {
        const sort = rel.input;
        const { leaf, order } = makeFragment(rel, state, rel.count);
        // The merge sorts the union of every worker's top rows by the same keys (shipped as columns).
        const keys: SortSpec[] = (order ?? []).map((o, i) => ({
          sql: sql`${ident(o.id)}`,
          type: (sort.keys[i] as SortSpec).type,
          descending: o.descending,
          nullsFirst: o.nullsFirst,
        }));
        return { ...rel, input: { kind: 'sort', input: leaf, keys, columns: leaf.columns } };
      }
      return { ...rel, input: split(rel.input, state) };
    }
    case 'sort':
    case 'final-aggregate':
      return { ...rel, input: split(rel.input, state) } as Rel;
    case 'union':
      return { ...rel, inputs: rel.inputs.map((i) => ({ ...i, rel: split(i.rel, state) })) };
    case 'join': {
      // Both sides' fragments ship their rows to the gateway, which joins them: bounded per side.
      const joinState = { ...state, underJoin: true };
      return { ...rel, left: split(rel.left, joinState), right: split(rel.right, joinState) };
    }
    case 'values':
    case 'select':
    case 'range':
    case 'fragment':
      return rel;
  }
}

function passthroughSpec(mergeRel: Rel, columns: Column[], fragments: FragmentSpec[]): PassthroughSpec | undefined {
  if (mergeRel.kind !== 'limit' || mergeRel.input.kind !== 'fragment') return undefined;
  const leaf = mergeRel.input;
  if (leaf.extra.length > 0) return undefined;
  const fragment = fragments[leaf.index] as FragmentSpec;
  const indexes = columns.map((c) => fragment.columns.findIndex((f) => f.id === c.id));
  if (indexes.some((i) => i < 0)) return undefined;
  // Readable forms equal the wire forms for every type (datetime µs, guid and dynamic as text) but a
  // datetime carried as ticks: a BIGINT on the fragment wire, Kusto's text once readable (the merge
  // writes it; passing the BIGINT through printed its ticks as microseconds, year 22201).
  if (columns.some((c) => c.ticks)) return undefined;
  return { fragment: leaf.index, count: mergeRel.count, columnIndexes: indexes };
}

/** Readable result values travel as these wire types. */
const READABLE_WIRE: Record<KqlType, WireType> = {
  string: 'VARCHAR',
  long: 'BIGINT',
  real: 'DOUBLE',
  decimal: 'VARCHAR',
  bool: 'BOOLEAN',
  datetime: 'BIGINT',
  timespan: 'BIGINT',
  guid: 'VARCHAR',
  dynamic: 'VARCHAR',
};

/** The wire type of a readable column: a datetime carried as ticks is its text (decision 0036). */
const readableWire = (c: Column): WireType => (c.ticks ? 'VARCHAR' : READABLE_WIRE[c.type]);

/**
 * The limit of a whole top-N when the merge of a one-fragment plan only orders and cuts that
 * fragment's rows, then maps each row on its own (`project`/`extend` without row functions) and
 * cuts again (a `take`, the row cap): the query is a top-N over rows a worker can produce alone,
 * so one worker's top-N run per scan part, mapped row by row, is already the answer
 * (singleWorkerSpec gives it its order keys). The limit is the smallest on the way. A filter, an
 * aggregate or anything else above the top-N changes which rows count: undefined then.
 */
function wholeTopNLimit(mergeRel: Rel, fragment: FragmentSpec): bigint | undefined {
  if (!fragment.branchTopN) return undefined;
  let limit: bigint | undefined;
  let rel = mergeRel;
  for (;;) {
    if (rel.kind === 'limit') {
      limit = limit === undefined || rel.count < limit ? rel.count : limit;
      if (rel.input.kind === 'sort' && rel.input.input.kind === 'fragment') {
        const topN = rel.count === fragment.branchTopN.limit && rel.input.input.index === fragment.index;
        return topN ? limit : undefined;
      }
      rel = rel.input;
    } else if (rel.kind === 'project' && !rel.outputs.some((o) => contains(o.sql, ROW_ORDER))) {
      rel = rel.input;
    } else {
      return undefined;
    }
  }
}

/**
 * The whole query as one worker statement. For a top-N (`topNLimit`), its output carries the order
 * keys after the result columns and it is marked to run per scan part like the top-N fragment
 * (decision 0018): the worker keeps the first rows of the parts' union by those keys, and the
 * gateway reads the result columns only. Why: a top-N otherwise went through the merge database
 * on one worker too, ~5–7 ms of a ~20 ms query at 1 M rows (decision 0035).
 */
function singleWorkerSpec(
  query: Rel,
  columns: Column[],
  fragment: FragmentSpec,
  cut?: { from: Rel; to: Rel },
  topNLimit?: bigint,
): SingleWorkerSpec {
  // The fragment's part of the query is written as the fragment's statement was (its storage-applied
  // time conjuncts left out); the rest of the query keeps every condition.
  const root = cut ? replaceRel(query, cut.from, cut.to) : query;
  const gen = new SqlGenerator({
    scanSource: () => sql`${ident(FRAGMENT_SOURCE)}`,
    fragmentSource: () => {
      throw new Error('fragment in a single-worker statement');
    },
    orderIds: { next: 0 },
  });
  const g = gen.gen(root);
  const order = topNLimit !== undefined ? (g.order ?? []) : [];
  if (topNLimit !== undefined && order.length === 0) throw new Error('a top-N statement without order keys');
  const rendered = render(
    gen.statement(g, [...columns.map((c) => readableColumn(c)), ...order.map((o) => wireColumn(o.id, o.duckType))]),
  );
  const read = gen.scanColumns()[0]?.columns ?? [];
  const anyRows = anyRowsLimit(root);
  const branchTopN: BranchTopN | undefined =
    topNLimit !== undefined
      ? {
          keys: order.map((o, i) => ({ column: columns.length + i, descending: o.descending, nullsFirst: o.nullsFirst })),
          limit: topNLimit,
          // The same sort as the fragment's (wholeTopNLimit), so the same source column.
          ...(fragment.branchTopN?.source ? { source: fragment.branchTopN.source } : {}),
        }
      : undefined;
  return {
    table: fragment.table,
    timeRange: fragment.timeRange,
    ...(fragment.storageTime ? { storageTime: fragment.storageTime } : {}),
    ...(fragment.terms ? { terms: fragment.terms } : {}),
    sql: rendered.text,
    params: rendered.params,
    sourceColumns: read.map((c) => ({ name: c.origin ?? c.name, type: c.type })),
    columns: [
      ...columns.map((c) => ({ id: c.id, type: readableWire(c) })),
      ...order.map((o) => ({ id: o.id, type: wireTypeOf(o.duckType) as WireType })),
    ],
    // The whole query ends in the row cap (or a smaller take).
    ...(root.kind === 'limit' ? { limit: root.count } : {}),
    ...(anyRows !== undefined ? { branchLimit: anyRows } : {}),
    ...(branchTopN ? { branchTopN } : {}),
  };
}

export interface PlanInput {
  rel: Rel;
  /** toscalar() subqueries, inner ones first. */
  scalars?: ScalarQuery[];
  render?: RenderHint;
  maxRows: number;
  nowUs: bigint;
  /**
   * Leave the where conjuncts comparing the time column with a constant out of the worker
   * statements and send them as exact bounds (FragmentSpec.storageTime) for the worker's scan to
   * apply. Only for runners whose workers honour those bounds (the query service's); a purge's
   * fragment must hold its whole predicate.
   */
  storageTime?: boolean;
}

/** Cuts a bound query into worker fragments and the gateway merge (the rules are in the file comment). */
export function planFragments(input: PlanInput): QueryPlan {
  const columns: Column[] = relColumns(input.rel);
  let root: Rel = { kind: 'limit', input: input.rel, count: BigInt(input.maxRows) + 1n, columns };
  // `take N` at the end and the row cap are one limit.
  while (root.kind === 'limit' && root.input.kind === 'limit') {
    root = { ...root.input, count: root.input.count < root.count ? root.input.count : root.count };
  }
  const state: PlanState = { fragments: [], orderIds: { next: 0 }, storageTime: input.storageTime === true, cut: new Map() };
  const mergeRel = split(root, state);
  const gen = new SqlGenerator({
    scanSource: () => {
      throw new Error('scan left in the merge');
    },
    fragmentSource: (index) => sql`${ident(`f${index}`)}`,
    orderIds: state.orderIds,
  });
  const g = gen.gen(mergeRel);
  const merge = render(
    gen.statement(
      g,
      columns.map((c) => readableColumn(c)),
    ),
  );
  // A top-N whose merge would only order, cut and map its fragment's rows runs whole on one worker,
  // per scan part, with its order keys after the result columns (singleWorkerSpec). Any other top-N
  // fragment goes through the merge even on one worker: the whole-query statement's output has no
  // order columns, so it could not be run per scan part (branchTopN), which is worth far more than
  // the merge of a few rows costs.
  const only = state.fragments.length === 1 ? (state.fragments[0] as FragmentSpec) : undefined;
  const topNLimit = only ? wholeTopNLimit(mergeRel, only) : undefined;
  const single =
    only && (!only.branchTopN || topNLimit !== undefined)
      ? singleWorkerSpec(root, columns, only, state.cut.get(0), topNLimit)
      : undefined;
  const passthrough = passthroughSpec(mergeRel, columns, state.fragments);
  // A scalar needs one row; each subquery is planned on its own, like a query of its own.
  const scalars = (input.scalars ?? []).map(
    (s): ScalarPlan => ({
      plan: planFragments({ rel: s.rel, maxRows: 1, nowUs: input.nowUs }),
      type: s.column.type,
      target: s.target,
    }),
  );
  return {
    scalars,
    fragments: state.fragments,
    ...(single ? { single } : {}),
    ...(passthrough ? { passthrough } : {}),
    merge,
    columns: columns.map((c) => ({ name: c.name, type: c.type, id: c.id, ...(c.int32 ? { int32: true } : {}) })),
    ...(input.render ? { render: input.render } : {}),
    maxRows: input.maxRows,
    nowUs: input.nowUs,
  };
}
