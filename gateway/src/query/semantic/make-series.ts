/**
 * make-series (issue 16, item 4; docs/decisions/0019-make-series.md): one row per group with an
 * array per aggregate and the axis array. It binds to parts the planner already distributes:
 *
 * 1. a filter and an ordinary summarize by the group keys and the bin index of each row, so the
 *    workers compute partial aggregates per (group, bin) and the gateway merges them exactly as it
 *    merges any summarize;
 * 2. at the gateway, a second grouping collects each group's bins and values into lists;
 * 3. a projection places the values on the axis (bins without rows get the default; a JS
 *    function, kql_series_place, does it in one pass) and writes the axis, both as dynamic arrays.
 *
 * The bin index is an integer: bins are numbered from `from` (or, without it, as Kusto's bin()
 * numbers them from zero), so matching a value to its bin never compares computed datetimes or
 * reals. Datetimes count in ticks from 0001-01-01 as Kusto's bin does.
 */
import { queryError, type Span } from '../errors.js';
import { ident, int, type Sql, sql } from '../sql/sql.js';
import type { Expr, NamedExpr, Operator } from '../syntax/ast.js';
import { DUCKDB_TYPE, type KqlType } from '../types.js';
import { type Bound, coerce, convert } from './bound.js';
import { columnMarks } from './column-marks.js';
import { refusedTicksUse, ticksSql } from './datetime-ticks.js';
import type { ExprBinder } from './expr-binder.js';
import { identOf } from './expr-binder.js';
import { expressionName } from './naming.js';
import { fromTicks } from './registry/datetime-functions.js';
import { aggregateFunction } from './registry/registry.js';
import { type AggregatePart, type Column, type IdAllocator, type Output, type Rel, relColumns } from './rel.js';

type MakeSeriesOp = Extract<Operator, { kind: 'make-series' }>;

/** What make-series needs from the query binder. */
export interface MakeSeriesHost {
  ids: IdAllocator;
  exprBinder(columns: Column[]): ExprBinder;
  /** summarize with extra, already bound group keys after the `by` keys. */
  summarize(input: Rel, columns: Column[], aggregates: NamedExpr[], by: NamedExpr[], span: Span, extraKeys: Output[]): Rel;
}

/** Kusto's limit on the length of a series (2^20); longer axes are cut, as its docs allow. */
export const MAX_SERIES_LENGTH = 1_048_576;

/** How axis values become numbers whose bins are counted: ticks, or the value itself. */
interface AxisDomain {
  type: KqlType;
  /** Whole numbers (BIGINT: datetime ticks, timespans, longs) or reals. */
  integral: boolean;
  num(b: Bound): Sql;
  /** The axis value of a number in the domain. */
  value(n: Sql): Bound;
}

function axisDomain(axis: Bound, step: Bound, span: Span): AxisDomain {
  const bound = (type: KqlType, s: Sql): Bound => ({ type, sql: s, span });
  switch (axis.type) {
    case 'datetime':
    case 'timespan':
      if (step.type !== 'timespan')
        throw queryError(`The step of a ${axis.type} axis must be a timespan; this is a ${step.type}.`, step.span);
      return axis.type === 'datetime'
        ? { type: 'datetime', integral: true, num: (b) => ticksSql(b), value: (n) => bound('datetime', fromTicks(n)) }
        : { type: 'timespan', integral: true, num: (b) => b.sql, value: (n) => bound('timespan', n) };
    case 'long':
    case 'real': {
      if (step.type !== 'long' && step.type !== 'real')
        throw queryError(`The step of a numeric axis must be a number; this is a ${step.type}.`, step.span);
      const integral = axis.type === 'long' && step.type === 'long';
      const type: KqlType = integral ? 'long' : 'real';
      return { type, integral, num: (b) => coerce(b, type), value: (n) => bound(type, n) };
    }
    default:
      throw queryError(`The axis of make-series must be a datetime, timespan or number; this is a ${axis.type}.`, axis.span);
  }
}

/** ⌊a / s⌋ for s > 0, exact for whole numbers (DuckDB's `//` truncates toward zero). */
function floorDiv(d: AxisDomain, a: Sql, s: Sql): Sql {
  if (!d.integral) return sql`CAST(floor(${a} / ${s}) AS BIGINT)`;
  return sql`((${a} - (((${a} % ${s}) + ${s}) % ${s})) // ${s})`;
}

/** ⌈a / s⌉ for s > 0. */
function ceilDiv(d: AxisDomain, a: Sql, s: Sql): Sql {
  if (!d.integral) return sql`CAST(ceil(${a} / ${s}) AS BIGINT)`;
  return sql`(-${floorDiv(d, sql`(-${a})`, s)})`;
}

function constantStep(b: Bound): Sql {
  const v = b.value;
  if (!v || v.value === null) throw queryError('The step of make-series must be a constant.', b.span);
  if (!(Number(v.value) > 0)) throw queryError('The step of make-series must be positive.', b.span);
  return b.sql;
}

/** A value's JSON form inside a dynamic array, as todynamic would give it. */
function elementJson(type: KqlType, s: Sql, span: Span): Sql {
  return convert({ type, sql: s, span }, 'dynamic', 'make-series').sql;
}

export function bindMakeSeries(host: MakeSeriesHost, input: Rel, op: MakeSeriesOp): Rel {
  const columns = relColumns(input);
  const rows = host.exprBinder(columns);
  const scalars = host.exprBinder([]);
  const axis = rows.bind(op.axis);
  const step = scalars.bind(op.step);
  const d = axisDomain(axis, step, op.axis.span);
  const stepSql = constantStep(step);
  const bound = (e: Expr, what: string): Bound => {
    const b = scalars.bind(e);
    const ok = b.type === d.type || (d.type === 'real' && b.type === 'long') || (b.value !== undefined && b.value.value === null);
    if (!ok) throw queryError(`The ${what} of make-series must be a ${d.type} like its axis; this is a ${b.type}.`, e.span);
    return b;
  };
  const from = op.from ? bound(op.from, op.range ? 'start' : 'from') : undefined;
  const to = op.to ? bound(op.to, op.range ? 'stop' : 'to') : undefined;
  // The axis, from and to compare in ticks (decision 0036); the bins' own datetimes are whole
  // microseconds only when their start is, so a start carried as ticks is refused.
  if (from?.ticks && !op.range) throw refusedTicksUse('make-series (its start)', from.span);

  // Bins are numbered from `from` (from … to … form), or from zero as bin() numbers them (no
  // `from`, and the range form, whose stop is inclusive).
  const base = from && !op.range ? d.num(from) : d.integral ? sql`0` : sql`0.0`;
  const index = floorDiv(d, sql`(${d.num(axis)} - ${base})`, stepSql);
  let lo: Sql | undefined;
  let hi: Sql | undefined;
  if (op.range) {
    lo = floorDiv(d, d.num(from as Bound), stepSql);
    hi = sql`(${floorDiv(d, d.num(to as Bound), stepSql)} + 1)`;
  } else {
    if (from) lo = sql`0`;
    if (to) hi = ceilDiv(d, sql`(${d.num(to)} - ${base})`, stepSql);
  }
  // Rows count from `from` (start) on and before `to` (up to stop, inclusive, in the range form);
  // the last bin may reach past `to`, its rows past it do not count.
  const conditions: Sql[] = [sql`${index} IS NOT NULL`];
  if (from) conditions.push(sql`${d.num(axis)} >= ${d.num(from)}`);
  if (to) conditions.push(op.range ? sql`${d.num(axis)} <= ${d.num(to)}` : sql`${d.num(axis)} < ${d.num(to)}`);
  const filtered: Rel = {
    kind: 'filter',
    input,
    predicate: conditions.reduce((a, c) => sql`${a} AND ${c}`),
    columns,
  };

  // 1. An ordinary summarize by the groups and the bin: partial aggregates on the workers.
  for (const a of op.aggregates) {
    const e = a.item.expr;
    const agg = e.kind === 'call' ? aggregateFunction(e.name) : undefined;
    if (!agg || agg.multiColumn)
      throw queryError('make-series takes aggregates with one numeric result, such as count() or avg(x).', e.span);
  }
  const binCol: Column = { name: '\u0000bin', type: 'long', id: host.ids.column() };
  const summarized = host.summarize(
    filtered,
    columns,
    op.aggregates.map((a) => a.item),
    op.by,
    op.span,
    [{ col: binCol, sql: index }],
  );
  const summaryColumns = relColumns(summarized);
  const keyColumns = summaryColumns.slice(0, op.by.length);
  const binOut = summaryColumns[op.by.length] as Column;
  const valueColumns = summaryColumns.slice(op.by.length + 1);
  valueColumns.forEach((c, i) => {
    // A series is an array of numbers that the series_* functions read as doubles; a decimal's
    // digits would not survive it (decision 0031).
    if (c.type === 'decimal')
      throw queryError(
        'make-series of a decimal aggregate is not supported: series hold reals, which would drop its digits; aggregate todouble(…) instead.',
        (op.aggregates[i] as MakeSeriesOp['aggregates'][number]).item.span,
      );
    if (c.type !== 'long' && c.type !== 'real')
      throw queryError(
        `make-series takes aggregates with numeric results; this one gives a ${c.type}.`,
        (op.aggregates[i] as MakeSeriesOp['aggregates'][number]).item.span,
      );
  });

  // 2. At the gateway: each group's bins and values as lists in bin order.
  const newColumn = (name: string, type: KqlType): Column => ({ name, type, id: host.ids.column() });
  const groupKeys: Output[] = keyColumns.map((c) => ({
    col: { ...newColumn(c.name, c.type), ...columnMarks(c) },
    sql: identOf(c),
  }));
  const ordered = (c: Column) => sql`list(${identOf(c)} ORDER BY ${identOf(binOut)})`;
  const part: AggregatePart = { partials: [], finals: [] };
  const listOf = (c: Column, type: KqlType): Column => {
    const partialId = host.ids.column();
    part.partials.push({ id: partialId, sql: ordered(c), type: `${DUCKDB_TYPE[type]}[]` });
    const col = newColumn(c.name, type);
    part.finals.push({ col, sql: sql`flatten(list(${ident(partialId)}))` });
    return col;
  };
  const binsList = listOf(binOut, 'long');
  const valueLists = valueColumns.map((c) => listOf(c, c.type));
  const partialRel: Rel = {
    kind: 'partial-aggregate',
    input: summarized,
    keys: groupKeys,
    aggregates: [part],
    columns: groupKeys.map((k) => k.col),
  };
  const grouped: Rel = {
    kind: 'final-aggregate',
    input: partialRel,
    keys: groupKeys.map((k) => k.col),
    aggregates: [part],
    columns: [...groupKeys.map((k) => k.col), binsList, ...valueLists],
  };
  // Without `by`, empty input still makes one (empty) group: Kusto gives no row.
  const nonEmpty: Rel = {
    kind: 'filter',
    input: grouped,
    predicate: sql`len(${identOf(binsList)}) > 0`,
    columns: grouped.columns,
  };

  // 3. The axis bounds (from the data where from/to are absent: the same axis for every group).
  const loCol = newColumn('\u0000lo', 'long');
  const hiCol = newColumn('\u0000hi', 'long');
  const dataLo = sql`min(list_min(${identOf(binsList)})) OVER ()`;
  const dataHi = sql`(max(list_max(${identOf(binsList)})) OVER () + 1)`;
  const loSql = lo ?? dataLo;
  const bounds: Rel = {
    kind: 'project',
    input: nonEmpty,
    outputs: [
      ...nonEmpty.columns.map((c) => ({ col: c, sql: identOf(c) })),
      { col: loCol, sql: loSql },
      { col: hiCol, sql: sql`least(${hi ?? dataHi}, ${loSql} + ${int(BigInt(MAX_SERIES_LENGTH))})` },
    ],
    columns: [...nonEmpty.columns, loCol, hiCol],
  };

  const bins = identOf(binsList);
  const positions = sql`range(${identOf(loCol)}, greatest(${identOf(hiCol)}, ${identOf(loCol)}))`;
  // Each group's values go to their positions in one linear pass (a JS function; a lookup per
  // position in SQL would be quadratic in the number of bins).
  const offsets = sql`CAST(to_json(list_transform(${bins}, b -> b - ${identOf(loCol)})) AS VARCHAR)`;
  const length = sql`greatest(${identOf(hiCol)} - ${identOf(loCol)}, 0)`;
  const outputs: Output[] = groupKeys.map((k) => ({ col: k.col, sql: identOf(k.col) }));
  const names = new Set(outputs.map((o) => o.col.name));
  op.aggregates.forEach((a, i) => {
    const list = valueLists[i] as Column;
    const dflt = a.defaultValue ? scalars.bind(a.defaultValue) : undefined;
    if (dflt && dflt.value === undefined) throw queryError('The default of make-series must be a constant.', dflt.span);
    const dfltJson = dflt ? elementJson(dflt.type, dflt.sql, dflt.span) : sql`CAST('0' AS JSON)`;
    const values = sql`CAST(to_json(list_transform(${identOf(list)}, v -> ${elementJson(list.type, sql`v`, a.item.span)})) AS VARCHAR)`;
    const array = sql`CAST(kql_series_place(${offsets}, ${values}, ${length}, CAST(${dfltJson} AS VARCHAR)) AS JSON)`;
    outputs.push({ col: newColumn(list.name, 'dynamic'), sql: array });
    names.add(list.name);
  });
  const axisName = expressionName(op.axis) ?? 'Column1';
  if (names.has(axisName)) throw queryError(`A column with the name '${axisName}' is already declared.`, op.axis.span);
  const axisValue = d.value(sql`(${base} + i * ${stepSql})`);
  outputs.push({
    col: newColumn(axisName, 'dynamic'),
    sql: sql`CAST(to_json(list_transform(${positions}, i -> ${elementJson(axisValue.type, axisValue.sql, op.axis.span)})) AS JSON)`,
  });
  return { kind: 'project', input: bounds, outputs, columns: outputs.map((o) => o.col) };
}
