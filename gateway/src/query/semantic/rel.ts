/**
 * The relational form of a bound query: what the binder produces from the syntax tree and what the
 * planner cuts into worker fragments and a gateway merge. Expressions are already SQL (`Sql`
 * nodes with bound parameters); column identities are engine-generated SQL names (`c12`), so user
 * column names never appear in statements, and two columns whose names differ only by case (legal
 * in KQL, not in DuckDB) cannot collide.
 */
import type { TermHint } from '@strata/common';
import { Ident, type Sql } from '../sql/sql.js';

/**
 * Stands for the current row order inside a window (`row_number() OVER (ROW_ORDER)`): the
 * binder does not know which hidden columns carry the order, the SQL generator does and puts
 * `ORDER BY …` there. A project using it runs where all rows are (the gateway's merge).
 */
export const ROW_ORDER = new Ident('\u0000row_order');

import type { KqlType } from '../types.js';

export interface Column {
  /** The KQL name shown in results. */
  name: string;
  type: KqlType;
  /** The SQL column name inside statements (`c12`). */
  id: string;
  /** Set while the column still carries a source table column unchanged (used for time pruning). */
  origin?: string;
  /** A datetime column holding BIGINT 100 ns ticks instead of a TIMESTAMP (decision 0036). */
  ticks?: boolean;
  /** A long column Kusto types int: reported as int / Int32 (int-columns.ts, decision 0048). */
  int32?: boolean;
}

export interface Output {
  col: Column;
  sql: Sql;
}

export interface SortSpec {
  sql: Sql;
  type: KqlType;
  /** A datetime key carried as ticks (decision 0036). */
  ticks?: boolean;
  descending: boolean;
  nullsFirst: boolean;
  /**
   * The scan column this key is, unchanged, when it is a long, real or datetime one (a worker
   * prunes a top-N's scan parts by it: BranchTopN.source, decision 0038).
   */
  origin?: string;
}

/** Inclusive bounds on the time column of one scan, in µs since the Unix epoch. */
export interface TimeBounds {
  fromUs?: bigint;
  toUs?: bigint;
}

/**
 * The where conjuncts of a filter that compare the scan's time column with a constant, as exact
 * inclusive bounds, and the filter's other conjuncts (`residual`; absent when there are none). A
 * fragment may leave those conjuncts to the storage, which then reads segments wholly inside the
 * bounds with no time filter at all (planner.ts, decision 0018).
 */
export interface StorageTime {
  bounds: TimeBounds;
  residual?: Sql;
}

/**
 * One aggregate split into a per-worker partial state and a merge over the partial states. The
 * partial columns are SQL aggregates over the input rows; the final expressions are SQL
 * aggregates over the partial columns (grouped by the same keys).
 */
export interface AggregatePart {
  /** `type` is the DuckDB type of the partial state (it crosses the wire). */
  partials: { id: string; sql: Sql; type: string }[];
  finals: { col: Column; sql: Sql }[];
}

export type Rel =
  | { kind: 'scan'; table: string; columns: Column[] }
  | { kind: 'values'; columns: Column[]; rows: Sql[][] }
  | { kind: 'select'; columns: Column[]; outputs: Output[] } // print: one row, no input
  | { kind: 'range'; column: Column; from: Sql; to: Sql; step: Sql }
  | {
      kind: 'filter';
      input: Rel;
      predicate: Sql;
      time?: TimeBounds;
      storageTime?: StorageTime;
      /** Constant `has` conjuncts over scan columns, for the workers' term indexes (term-hints.ts). */
      terms?: TermHint[];
      columns: Column[];
    }
  | { kind: 'project'; input: Rel; outputs: Output[]; columns: Column[] }
  | { kind: 'partial-aggregate'; input: Rel; keys: Output[]; aggregates: AggregatePart[]; columns: Column[] }
  | { kind: 'final-aggregate'; input: Rel; keys: Column[]; aggregates: AggregatePart[]; columns: Column[] }
  | { kind: 'sort'; input: Rel; keys: SortSpec[]; columns: Column[] }
  | { kind: 'limit'; input: Rel; count: bigint; columns: Column[] }
  | { kind: 'union'; inputs: { rel: Rel; map: (Column | null)[] }[]; columns: Column[] }
  /**
   * mv-expand: each row repeated once per element of the longest of `lists` (each a SQL list of
   * JSON values per row, already limited), the lists expanded in parallel (shorter ones give
   * null). `outputs` are the result columns: an `element` output takes the i-th expanded value
   * (cast by `cast`, a template over `?`-less SQL of the element), `index` the element's position,
   * others pass an input column through.
   */
  | {
      kind: 'mv-expand';
      input: Rel;
      lists: Sql[];
      outputs: ({ col: Column } & ({ pass: Column } | { element: number; cast?: (element: Sql) => Sql } | { index: true }))[];
      columns: Column[];
    }
  /**
   * Rows of two inputs matched on key equality (null keys match nothing). `semi`/`anti` keep the
   * `from` side's rows that have (no) match on the other side. `dedupeLeft` keeps one left row per
   * key first (Kusto's innerunique): the smallest by every visible column, so the choice does not
   * depend on how rows are spread over workers.
   */
  | {
      kind: 'join';
      left: Rel;
      right: Rel;
      how: 'inner' | 'left' | 'right' | 'full' | 'semi' | 'anti';
      /** For semi/anti: the side whose rows are kept. */
      from?: 'left' | 'right';
      dedupeLeft?: boolean;
      keys: { left: Sql; right: Sql }[];
      outputs: Output[];
      columns: Column[];
    }
  /** A fragment's rows in the merge database; `extra` are partial states or order keys it carries. */
  | { kind: 'fragment'; index: number; columns: Column[]; extra: { id: string; duckType: string }[] };

export function relColumns(rel: Rel): Column[] {
  return rel.kind === 'range' ? [rel.column] : rel.columns;
}

/** Allocates the engine's SQL column names. */
export class IdAllocator {
  private next = 0;
  column(): string {
    return `c${this.next++}`;
  }
}
