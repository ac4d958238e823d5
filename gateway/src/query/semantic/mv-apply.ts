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
 * are refused inside the subquery. The subquery sees the expanded columns, the item index and the
 * row's other columns; the result is the input's columns (a subquery column of the same name in
 * its place; an expanded input column moves to the subquery's) followed by the subquery's.
 *
 * Each input row also gets one sentinel row (an extra null element past its longest array) that
 * passes every filter and ranks last, so a keyless summarize — whose aggregates are rewritten to
 * their `if` forms to leave the sentinel out — answers every input row, also one whose elements
 * were all filtered out, as Kusto's subquery over an empty table does. Before any other
 * grouping step, and at the end, the sentinels are dropped.
 */

import { queryError, type Span } from '../errors.js';
import { int, join, type Sql, sql } from '../sql/sql.js';
import type { Expr, NamedExpr, Operator } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { aggregateName } from './aggregate-collector.js';
import { IF_FORM, IF_FORMS } from './aggregate-if-forms.js';
import { columnMarks } from './column-marks.js';
import { identOf } from './expr-binder.js';
import { NameAllocator } from './naming.js';
import { aggregateFunction } from './registry/registry.js';
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
  const plain = host.mvExpand(withId, relColumns(withId), expand);
  if (plain.kind !== 'mv-expand') throw new Error('mv-apply: expected an mv-expand');
  // Every list gets one more (null) element: the row's sentinel, at the position just past its
  // longest list. It keeps each input row present through filters (file comment).
  const length = host.newColumn(`${HIDDEN}n`, 'long');
  const counted: Rel = {
    kind: 'project',
    input: withId,
    outputs: [
      ...pass(relColumns(withId)),
      {
        col: length,
        sql: sql`greatest(${join(
          plain.lists.map((l) => sql`len(${l})`),
          ', ',
        )})`,
      },
    ],
    columns: [...relColumns(withId), length],
  };
  const expanded: Rel = {
    ...plain,
    input: counted,
    lists: plain.lists.map((l) => sql`list_append(${l}, NULL::JSON)`),
    outputs: [...plain.outputs, { col: length, pass: length }],
    columns: [...plain.columns, length],
  };
  const ixColumn = plain.columns.find((c) => c.name === position) as Column;
  // The input columns the expansion did not replace are carried hidden, under names the subquery cannot write.
  const carried: { hidden: Column; original: Column }[] = [];
  const outputs: Output[] = [];
  for (const o of plain.outputs) {
    if ('pass' in o && o.col !== rid) {
      const hidden = { ...host.newColumn(`${HIDDEN}column:${o.col.name}`, o.col.type), ...columnMarks(o.col) };
      carried.push({ hidden, original: o.col });
      outputs.push({ col: hidden, sql: identOf(o.col) });
    } else outputs.push({ col: o.col, sql: identOf(o.col) });
  }
  let sentinel: Column | undefined = host.newColumn(`${HIDDEN}s`, 'bool');
  outputs.push({ col: sentinel, sql: sql`(${identOf(ixColumn)} >= ${identOf(length)})` });
  // The subquery may read the row's other columns too: visible copies under their own names.
  const taken = new Set(outputs.map((o) => o.col.name));
  for (const k of carried) {
    if (!taken.has(k.original.name))
      outputs.push({
        col: { ...host.newColumn(k.original.name, k.original.type), ...columnMarks(k.original) },
        sql: identOf(k.hidden),
      });
  }
  let rel: Rel = { kind: 'project', input: expanded, outputs, columns: outputs.map((o) => o.col) };
  const ix = relColumns(rel).find((c) => c.name === position) as Column;
  const isSentinel = (at: Span): Expr => nameExpr(`${HIDDEN}s`, at);
  const notSentinel = (at: Span): Expr => ({ kind: 'call', name: 'not', nameSpan: at, args: [isSentinel(at)], span: at });
  /** The rows without the sentinels (before steps that must not see them, and at the end). */
  const withoutSentinels = (at: Span): Rel => {
    if (!sentinel) return rel;
    const kept = host.operator(rel, { kind: 'where', predicate: notSentinel(at), span: at });
    sentinel = undefined;
    return kept;
  };

  let order: SortSpec[] | undefined;
  for (const step of op.subquery) {
    const keysOf = (cols: Column[]) =>
      cols
        .filter((c) => isHidden(c) && c !== ix && c.name !== `${HIDDEN}s` && c.name !== `${HIDDEN}n`)
        .map((c) => ({ expr: nameExpr(c.name, step.span), span: step.span }));
    const pending = order;
    order = undefined;
    switch (step.kind) {
      case 'where': {
        // Sentinels pass every filter.
        const predicate: Expr = sentinel
          ? { kind: 'binary', op: 'or', opSpan: step.span, left: isSentinel(step.span), right: step.predicate, span: step.span }
          : step.predicate;
        rel = host.operator(rel, { ...step, predicate });
        break;
      }
      // A sentinel row goes through these too (an expansion of its copies may repeat it, which
      // changes nothing: aggregates leave it out, take keeps it).
      case 'parse':
      case 'mv-expand':
      case 'extend':
      case 'project':
      case 'project-away':
      case 'project-rename':
      case 'project-keep':
      case 'project-reorder':
        rel = keepHidden(host.operator(rel, step), relColumns(rel).filter(isHidden), step.kind);
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
        if (sentinel && by.length === 0) {
          // One row per input row, sentinels left out of every aggregate.
          const guarded = aggregates.map((a) => guardItem(a, notSentinel(step.span)));
          rel = host.summarize(rel, relColumns(rel), guarded, keysOf(relColumns(rel)), step.span);
          sentinel = undefined;
        } else {
          const source = withoutSentinels(step.span);
          rel = host.summarize(source, relColumns(source), aggregates, [...by, ...keysOf(relColumns(source))], step.span);
        }
        break;
      }
      case 'distinct': {
        if (step.items.some((i) => i.expr.kind === 'star'))
          throw queryError("'distinct *' is not supported inside mv-apply.", step.span);
        const source = withoutSentinels(step.span);
        rel = host.summarize(source, relColumns(source), [], [...step.items, ...keysOf(relColumns(source))], step.span);
        break;
      }
      case 'sort': {
        const sorted = host.sort(rel, relColumns(rel), step.keys);
        if (sorted.kind !== 'sort') throw new Error('mv-apply: expected a sort');
        order = sorted.keys;
        break;
      }
      case 'take':
        rel = firstPerRow(host, rel, rid, pending ?? positionOrder(rel, ix), host.constCount(step.count, 'take'), sentinel);
        break;
      case 'top': {
        const sorted = host.sort(rel, relColumns(rel), [step.key]);
        if (sorted.kind !== 'sort') throw new Error('mv-apply: expected a sort');
        const keys = [...sorted.keys, ...positionOrder(rel, ix)];
        rel = firstPerRow(host, rel, rid, keys, host.constCount(step.count, 'top'), sentinel);
        break;
      }
      default:
        throw queryError(`'${step.kind}' is not supported inside mv-apply.`, step.span);
    }
  }
  rel = withoutSentinels(span);

  // The input's columns in order (a subquery column of the same name in its place: the copy the
  // subquery read, or what it made of it), then the subquery's other columns.
  const names = new NameAllocator();
  const final: Output[] = [];
  const present = relColumns(rel);
  const visible = present.filter((p) => !isHidden(p));
  const placed = new Set<Column>();
  for (const c of columns) {
    const kept = carried.find((k) => k.original.name === c.name);
    if (!kept) continue;
    const own = visible.find((p) => p.name === c.name);
    const hiddenColumn = present.find((p) => p.name === kept.hidden.name);
    const source = own ?? hiddenColumn;
    if (!source) continue;
    if (own) placed.add(own);
    names.claim(c.name);
    final.push({
      col: { ...host.newColumn(c.name, source.type), ...columnMarks(source) },
      sql: identOf(source),
    });
  }
  for (const c of visible.filter((p) => !placed.has(p))) {
    final.push({ col: { ...host.newColumn(names.derive(c.name), c.type), ...columnMarks(c) }, sql: identOf(c) });
  }
  return { kind: 'project', input: rel, outputs: final, columns: final.map((o) => o.col) };
}

/** A summarize item over the non-sentinel rows, named as the item it stands for (`sum_x`, not `sumif_x`). */
function guardItem(item: NamedExpr, keep: Expr): NamedExpr {
  const entry = item.expr.kind === 'call' ? aggregateFunction(item.expr.name.toLowerCase()) : undefined;
  const name = item.name ?? (entry && item.expr.kind === 'call' ? aggregateName(entry, item.expr) : undefined);
  return { ...item, ...(name !== undefined ? { name } : {}), expr: withoutSentinel(item.expr, keep) };
}

/**
 * A summarize item with every aggregate call restricted to the non-sentinel rows (`sum(x)` →
 * `sumif(x, keep)`, `countif(c)` → `countif(c and keep)`); an aggregate without an if form is
 * refused there, where it would see the sentinel.
 */
function withoutSentinel(e: Expr, keep: Expr): Expr {
  switch (e.kind) {
    case 'call': {
      const name = e.name.toLowerCase();
      const and = (c: Expr): Expr => ({ kind: 'binary', op: 'and', opSpan: e.span, left: c, right: keep, span: e.span });
      if (name === 'count' && e.args.length === 0) return { ...e, name: 'countif', args: [keep] };
      if (name === 'countif' && e.args.length === 1) return { ...e, args: [and(e.args[0] as Expr)] };
      if (IF_FORMS.has(name) && e.args.length >= 2)
        return { ...e, args: [e.args[0] as Expr, and(e.args[1] as Expr), ...e.args.slice(2)] };
      const ifForm = IF_FORM[name];
      if (ifForm && e.args.length >= 1) return { ...e, name: ifForm, args: [e.args[0] as Expr, keep, ...e.args.slice(1)] };
      if (aggregateFunction(name))
        throw queryError(
          `'${e.name}' in a summarize without by inside mv-apply is not supported; summarize by a column, or use an aggregate with an if form.`,
          e.nameSpan,
        );
      return { ...e, args: e.args.map((a) => withoutSentinel(a, keep)) };
    }
    case 'binary':
      return { ...e, left: withoutSentinel(e.left, keep), right: withoutSentinel(e.right, keep) };
    case 'unary':
      return { ...e, operand: withoutSentinel(e.operand, keep) };
    default:
      return e;
  }
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

/** The first `count` rows of each input row, in `order`; sentinels rank last and are kept. */
function firstPerRow(host: MvApplyHost, rel: Rel, rid: Column, order: SortSpec[], count: bigint, sentinel?: Column): Rel {
  const cols = relColumns(rel);
  const rn = host.newColumn(`${HIDDEN}rn`, 'long');
  const by: Sql[] = [
    ...(sentinel ? [sql`${identOf(sentinel)} ASC`] : []),
    ...order.map(
      (s) => sql`${s.sql} ${s.descending ? sql`DESC` : sql`ASC`} ${s.nullsFirst ? sql`NULLS FIRST` : sql`NULLS LAST`}`,
    ),
  ];
  const orderBy = by.length > 0 ? sql` ORDER BY ${join(by, ', ')}` : sql``;
  const numbered: Rel = {
    kind: 'project',
    input: rel,
    outputs: [...pass(cols), { col: rn, sql: sql`row_number() OVER (PARTITION BY ${identOf(rid)}${orderBy})` }],
    columns: [...cols, rn],
  };
  const limit = sentinel ? sql`(${identOf(rn)} <= ${int(count)} OR ${identOf(sentinel)})` : sql`${identOf(rn)} <= ${int(count)}`;
  const kept: Rel = { kind: 'filter', input: numbered, predicate: limit, columns: [...cols, rn] };
  return { kind: 'project', input: kept, outputs: pass(cols), columns: cols };
}
