/**
 * `mv-apply [with_itemindex=I] [Name =] e [to typeof(T)], … [limit N] on (subquery)`: for each
 * input row, its arrays expanded (as mv-expand does) form a small table the subquery runs on; the
 * row's other columns are repeated next to each row the subquery gives.
 *
 * Plan: every input row gets a random id (a UUID, made where the row is read), the expansion runs
 * as mv-expand, and the subquery's operators run over all rows at once with the row's columns
 * carried along as hidden columns: row-wise operators keep them, summarize (count, distinct)
 * groups by them too, take and top keep the first N per row id (row_number() over the row id,
 * ordered by the element's position or the sort). Rows of one input row stay on one worker, so
 * every step may run there. Operators that mix rows of different input rows (join, union …)
 * are refused inside the subquery. The subquery sees the expanded columns (and the item index);
 * the result is the input's columns (an expanded column of the same name replaces its input
 * column) followed by the subquery's.
 */
import { queryError, type Span } from '../errors.js';
import { int, join, type Sql, sql } from '../sql/sql.js';
import type { Expr, NamedExpr, Operator } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { identOf } from './expr-binder.js';
import { NameAllocator } from './naming.js';
import type { Column, Output, Rel, SortSpec } from './rel.js';
import { relColumns } from './rel.js';

/** Names the subquery cannot write: the carried input columns, the row id, the element position. */
const HIDDEN = '\u0000';

type MvApply = Extract<Operator, { kind: 'mv-apply' }>;
type MvExpand = Extract<Operator, { kind: 'mv-expand' }>;

export interface MvApplyHost {
  newColumn(name: string, type: KqlType): Column;
  operator(input: Rel, op: Operator): Rel;
  mvExpand(input: Rel, columns: Column[], op: MvExpand): Rel;
  summarize(input: Rel, columns: Column[], aggregates: NamedExpr[], by: NamedExpr[], span: Span): Rel;
  sort(input: Rel, columns: Column[], keys: { expr: Expr; descending?: boolean; nullsFirst?: boolean }[]): Rel;
  constCount(expr: Expr, what: string): bigint;
  join(left: Rel, right: Rel, kind: 'inner', on: { left: string; right: string; span: Span }[], span: Span): Rel;
  union(inputs: Rel[]): Rel;
}

const isHidden = (c: Column) => c.name.startsWith(HIDDEN);
const pass = (cols: Column[]): Output[] => cols.map((c) => ({ col: c, sql: identOf(c) }));
const nameExpr = (name: string, span: Span): Expr => ({ kind: 'name', name, span });

export function bindMvApply(host: MvApplyHost, input: Rel, op: MvApply): Rel {
  const span = op.span;
  const columns = relColumns(input);
  const rid = host.newColumn(`${HIDDEN}rid`, 'guid');
  const withId: Rel = {
    kind: 'project',
    input,
    outputs: [...pass(columns), { col: rid, sql: sql`gen_random_uuid()` }],
    columns: [...columns, rid],
  };
  const position = op.itemIndex ?? `${HIDDEN}ix`;
  const expand: MvExpand = { kind: 'mv-expand', items: op.items, bagExpansion: 'bag', itemIndex: position, span };
  if (op.limit) expand.limit = op.limit;
  const expanded = host.mvExpand(withId, relColumns(withId), expand);
  if (expanded.kind !== 'mv-expand') throw new Error('mv-apply: expected an mv-expand');
  // The input columns the expansion did not replace are carried hidden, under names the subquery cannot write.
  const carried: { hidden: Column; original: Column }[] = [];
  const outputs: Output[] = [];
  for (const o of expanded.outputs) {
    if ('pass' in o && o.col !== rid) {
      const hidden = host.newColumn(`${HIDDEN}${o.col.name}`, o.col.type);
      carried.push({ hidden, original: o.col });
      outputs.push({ col: hidden, sql: identOf(o.col) });
    } else outputs.push({ col: o.col, sql: identOf(o.col) });
  }
  let rel: Rel = { kind: 'project', input: expanded, outputs, columns: outputs.map((o) => o.col) };
  const ix = relColumns(rel).find((c) => c.name === position) as Column;

  // Input rows whose arrays are all empty expand to no rows; a summarize without keys still gives
  // them one row (the aggregates of nothing), as Kusto's subquery over an empty table does.
  const empty: Rel = {
    kind: 'filter',
    input: withId,
    predicate: join(
      expanded.lists.map((l) => sql`len(${l}) = 0`),
      ' AND ',
    ),
    columns: relColumns(withId),
  };
  let grouped = false;
  let order: SortSpec[] | undefined;
  for (const step of op.subquery) {
    const hidden = relColumns(rel).filter(isHidden);
    const groupKeys = hidden.filter((c) => c !== ix).map((c) => ({ expr: nameExpr(c.name, step.span), span: step.span }));
    const pending = order;
    order = undefined;
    switch (step.kind) {
      case 'where':
      case 'extend':
      case 'project':
      case 'project-away':
      case 'project-rename':
      case 'project-keep':
      case 'project-reorder':
      case 'parse':
      case 'mv-expand':
        rel = keepHidden(host.operator(rel, step), hidden, step.kind);
        break;
      case 'summarize':
      case 'count': {
        const aggregates: NamedExpr[] =
          step.kind === 'summarize'
            ? step.aggregates
            : [
                {
                  name: step.name ?? 'Count',
                  expr: { kind: 'call', name: 'count', nameSpan: step.span, args: [], span: step.span },
                  span: step.span,
                },
              ];
        const by = step.kind === 'summarize' ? step.by : [];
        const summarized = host.summarize(rel, relColumns(rel), aggregates, [...by, ...groupKeys], step.span);
        rel =
          !grouped && by.length === 0
            ? withEmptyRows(host, rel, summarized, empty, carried, rid, aggregates, step.span)
            : summarized;
        grouped = true;
        break;
      }
      case 'distinct':
        if (step.items.some((i) => i.expr.kind === 'star'))
          throw queryError("'distinct *' is not supported inside mv-apply.", step.span);
        rel = host.summarize(rel, relColumns(rel), [], [...step.items, ...groupKeys], step.span);
        break;
      case 'sort': {
        const sorted = host.sort(rel, relColumns(rel), step.keys);
        if (sorted.kind !== 'sort') throw new Error('mv-apply: expected a sort');
        order = sorted.keys;
        break;
      }
      case 'take':
        rel = firstPerRow(host, rel, rid, pending ?? positionOrder(rel, ix), host.constCount(step.count, 'take'));
        break;
      case 'top': {
        const sorted = host.sort(rel, relColumns(rel), [step.key]);
        if (sorted.kind !== 'sort') throw new Error('mv-apply: expected a sort');
        rel = firstPerRow(host, rel, rid, [...sorted.keys, ...positionOrder(rel, ix)], host.constCount(step.count, 'top'));
        break;
      }
      default:
        throw queryError(`'${step.kind}' is not supported inside mv-apply.`, step.span);
    }
  }

  // The input's columns (by their names, in order), then the subquery's.
  const names = new NameAllocator();
  const final: Output[] = [];
  const present = relColumns(rel);
  for (const c of columns) {
    const kept = carried.find((k) => k.original.name === c.name);
    const hidden = kept && present.find((p) => p.name === kept.hidden.name);
    if (!hidden) continue;
    names.claim(c.name);
    final.push({ col: host.newColumn(c.name, c.type), sql: identOf(hidden) });
  }
  for (const c of present.filter((p) => !isHidden(p))) {
    final.push({ col: host.newColumn(names.derive(c.name), c.type), sql: identOf(c) });
  }
  return { kind: 'project', input: rel, outputs: final, columns: final.map((o) => o.col) };
}

/**
 * A keyless summarize's rows plus one row per input row that expanded to nothing: that row's
 * carried columns next to the aggregates of no rows (the same summarize over an empty input).
 */
function withEmptyRows(
  host: MvApplyHost,
  before: Rel,
  summarized: Rel,
  empty: Rel,
  carried: { hidden: Column; original: Column }[],
  rid: Column,
  aggregates: NamedExpr[],
  span: Span,
): Rel {
  const one = (input: Rel, extra: Output[] = []): Rel => {
    const outputs = [...extra, { col: host.newColumn(`${HIDDEN}one`, 'long'), sql: sql`CAST(1 AS BIGINT)` }];
    return { kind: 'project', input, outputs, columns: outputs.map((o) => o.col) };
  };
  const rows = one(empty, [
    ...carried.map((k) => ({ col: host.newColumn(k.hidden.name, k.hidden.type), sql: identOf(k.original) })),
    { col: host.newColumn(rid.name, rid.type), sql: identOf(rid) },
  ]);
  const nothing: Rel = { kind: 'filter', input: before, predicate: sql`false`, columns: relColumns(before) };
  const aggregatesOfNothing = host.summarize(nothing, relColumns(nothing), aggregates, [], span);
  const valued = one(aggregatesOfNothing, pass(relColumns(aggregatesOfNothing)));
  const joined = host.join(rows, valued, 'inner', [{ left: `${HIDDEN}one`, right: `${HIDDEN}one`, span }], span);
  const wanted = relColumns(summarized).map((c) => c.name);
  const cols = relColumns(joined).filter((c) => wanted.includes(c.name));
  return host.union([summarized, { kind: 'project', input: joined, outputs: pass(cols), columns: cols }]);
}

/** A step that dropped hidden columns (project …) gets them back: they are in its input. */
function keepHidden(rel: Rel, hidden: Column[], what: string): Rel {
  const present = new Set(relColumns(rel));
  const missing = hidden.filter((c) => !present.has(c));
  if (missing.length === 0) return rel;
  if (rel.kind !== 'project') throw queryError(`'${what}' is not supported inside mv-apply.`, { start: 0, end: 0 });
  const outputs = [...rel.outputs, ...pass(missing)];
  return { ...rel, outputs, columns: outputs.map((o) => o.col) };
}

/** The element position as the order of `take` (the array's order). */
function positionOrder(rel: Rel, ix: Column): SortSpec[] {
  return relColumns(rel).includes(ix) ? [{ sql: identOf(ix), type: 'long', descending: false, nullsFirst: false }] : [];
}

/** The first `count` rows of each input row, in `order`. */
function firstPerRow(host: MvApplyHost, rel: Rel, rid: Column, order: SortSpec[], count: bigint): Rel {
  const cols = relColumns(rel);
  const rn = host.newColumn(`${HIDDEN}rn`, 'long');
  const by: Sql[] = order.map(
    (s) => sql`${s.sql} ${s.descending ? sql`DESC` : sql`ASC`} ${s.nullsFirst ? sql`NULLS FIRST` : sql`NULLS LAST`}`,
  );
  const orderBy = by.length > 0 ? sql` ORDER BY ${join(by, ', ')}` : sql``;
  const numbered: Rel = {
    kind: 'project',
    input: rel,
    outputs: [...pass(cols), { col: rn, sql: sql`row_number() OVER (PARTITION BY ${identOf(rid)}${orderBy})` }],
    columns: [...cols, rn],
  };
  const kept: Rel = { kind: 'filter', input: numbered, predicate: sql`${identOf(rn)} <= ${int(count)}`, columns: [...cols, rn] };
  return { kind: 'project', input: kept, outputs: pass(cols), columns: cols };
}
