/**
 * Runs a query fragment — a statement the gateway's planner wrote — over a relation of rows on a
 * DuckDB connection, streaming the result as column batches. Used by workers over their storage
 * scans and by in-process tests. The statement reads the relation named FRAGMENT_SOURCE; here
 * that name becomes a leading CTE over the given relation, with the columns the fragment reads
 * (a column this relation lacks reads as null). Values are bound parameters, or, for small
 * results run at once, typed literals rendered by param-literals.ts; never query text.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  type DuckDBDataChunk,
  DuckDBMaterializedResult,
  type DuckDBResult,
  DuckDBTimestampValue,
  type DuckDBType,
  type DuckDBValue,
  TIMESTAMP,
  VARCHAR,
} from '@duckdb/node-api';
import { StrataError } from '../errors.js';
import { quoteIdentifier } from '../sql/quoting.js';
import { appendChunkColumn } from './chunk-columns.js';
import type { ColumnBatch, WireType, WireValue } from './column-batch.js';
import { inlineParams } from './param-literals.js';
import { foldedColumn, termFoldSql } from './term-fold.js';
import { runWithThreshold, thresholdPlan } from './top-n-threshold.js';
import { QUERY_VALUE_DUCKDB_TYPE, type QueryValueType } from './value-types.js';

/** The relation name fragment statements read. */
export const FRAGMENT_SOURCE = '__strata_source__';

/** A bound parameter; TIMESTAMP values are µs since the Unix epoch. */
export interface ParamValue {
  readonly type: WireType;
  readonly value: string | bigint | number | boolean | null;
}

export interface FragmentStatement {
  /** Starts with `WITH ` (the planner always writes a CTE chain). */
  sql: string;
  params: readonly ParamValue[];
  sourceColumns: readonly { name: string; type: QueryValueType }[];
  columns: readonly { id: string; type: WireType }[];
  /**
   * At most this many rows come out (the statement ends in a LIMIT): set by the planner when it
   * knows. A small bound lets the statement run materialized with its values as literals.
   */
  maxRows?: bigint;
  /**
   * The statement is a top-N (ExecuteFragmentRequest.branch_top_n): over parts of the rows, its
   * answers' union ordered by `keys` (output column positions) and limited to `limit` is its
   * answer over all of them. Lets runFragment run it per scan branch (see there).
   */
  branchTopN?: BranchTopN;
  /**
   * Any this many of the statement's rows are its answer (ExecuteFragmentRequest.branch_limit: a
   * take without an order). Lets runFragment run it over scan branches, a few at a time, and stop
   * once it has them (see there).
   */
  branchLimit?: bigint;
}

export interface BranchTopN {
  keys: readonly { column: number; descending: boolean; nullsFirst: boolean }[];
  limit: bigint;
  /**
   * The source column (FragmentStatement.sourceColumns) whose value the first key is, unchanged,
   * when the planner knows it: a worker may then leave out rows that cannot be among the first
   * `limit` by that column (top-n-threshold.ts, decision 0038).
   */
  source?: string;
}

/**
 * Statements bounded to at most this many rows run at once (materialized), with their parameter
 * values as literals (param-literals.ts), instead of streaming with bound parameters. Measured on
 * the query bench: DuckDB plans a parameterized statement twice and a streamed result costs more
 * round trips; together ~1 ms of a 3 ms fragment. Larger or unbounded results stream, so a worker
 * never holds a big answer in memory at once.
 */
const MATERIALIZE_MAX_ROWS = 100_001n;

const DUCK_TYPES: Record<WireType, DuckDBType> = { VARCHAR, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP };

export function wireDuckType(type: WireType): DuckDBType {
  return DUCK_TYPES[type];
}

/** Parameter values and their types for DuckDB binding. */
export function bindValues(params: readonly ParamValue[]): { values: DuckDBValue[]; types: DuckDBType[] } {
  const values: DuckDBValue[] = [];
  const types: DuckDBType[] = [];
  for (const p of params) {
    const type = Object.hasOwn(DUCK_TYPES, p.type) ? DUCK_TYPES[p.type] : undefined;
    if (!type) throw new StrataError('invalid', `Unsupported parameter type ${String(p.type)}.`);
    types.push(type);
    if (p.value === null) values.push(null);
    else if (p.type === 'TIMESTAMP') values.push(new DuckDBTimestampValue(BigInt(p.value as bigint)));
    else if (p.type === 'BIGINT') values.push(BigInt(p.value as bigint));
    else values.push(p.value as DuckDBValue);
  }
  return { values, types };
}

/** DuckDB errors caused by the data or by the query's own values: the query's problem (400). */
const USER_ERROR = /^(Invalid Input Error|Conversion Error|Out of Range Error|Overflow|Invalid Error)/;

/** A DuckDB failure as a StrataError: data errors are 'invalid', an interrupt 'cancelled'. */
export function queryFailure(err: unknown): StrataError {
  if (err instanceof StrataError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const first = message.split('\n')[0] ?? message;
  if (USER_ERROR.test(first)) return new StrataError('invalid', `The query failed: ${first}`, { cause: err });
  if (/INTERRUPT/i.test(first)) return new StrataError('cancelled', 'The query was cancelled.', { cause: err });
  return new StrataError('internal', 'The query failed.', { cause: err });
}

/**
 * The chunks of a result. A materialized one is already in memory: its chunks are taken as they
 * are, without `fetchChunk`, which is a round trip through DuckDB's worker threads per chunk and
 * one more to learn that none is left (~0.1 ms each on a small query's path, decision 0032).
 */
async function* resultChunks(result: DuckDBResult): AsyncGenerator<DuckDBDataChunk> {
  if (result instanceof DuckDBMaterializedResult) {
    const count = result.chunkCount;
    for (let i = 0; i < count; i++) yield result.getChunk(i);
    return;
  }
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    yield chunk;
  }
}

/** Reads a result as batches of about `batchRows` rows. */
async function* resultBatches(result: DuckDBResult, signal?: AbortSignal, batchRows = 8192): AsyncGenerator<ColumnBatch> {
  const typeIds = result.columnTypes().map((t) => t.typeId);
  let pending: WireValue[][] = typeIds.map(() => []);
  let rows = 0;
  for await (const chunk of resultChunks(result)) {
    signal?.throwIfAborted();
    if (chunk.rowCount === 0) continue;
    typeIds.forEach((typeId, i) => {
      appendChunkColumn(chunk, i, typeId, pending[i] as WireValue[]);
    });
    rows += chunk.rowCount;
    if (rows >= batchRows) {
      yield { rowCount: rows, columns: pending };
      pending = typeIds.map(() => []);
      rows = 0;
    }
  }
  if (rows > 0) yield { rowCount: rows, columns: pending };
}

/**
 * The statement with its source bound: `WITH "__strata_source__" AS (SELECT … FROM relation), …`.
 * `available` are the relation's column names; `relation` is SQL from the storage side.
 */
export function boundStatement(statement: FragmentStatement, relation: string, available: readonly string[]): string {
  if (!statement.sql.startsWith('WITH ')) throw new StrataError('invalid', 'A fragment statement must start with a WITH clause.');
  const byLower = new Map(available.map((n) => [n.toLowerCase(), n] as const));
  const cols = statement.sourceColumns.map((c) => {
    const actual = byLower.get(c.name.toLowerCase());
    if (actual !== undefined) return `${quoteIdentifier(actual)} AS ${quoteIdentifier(c.name)}`;
    // A term fold the relation does not carry is computed from its column (term-fold.ts): the
    // same value a stored fold holds, so the answer never depends on where the rows are.
    const folded = foldedColumn(c.name);
    const base = folded === undefined ? undefined : byLower.get(folded.toLowerCase());
    if (base !== undefined) return `${termFoldSql(`CAST(${quoteIdentifier(base)} AS VARCHAR)`)} AS ${quoteIdentifier(c.name)}`;
    const type = Object.hasOwn(QUERY_VALUE_DUCKDB_TYPE, c.type) ? QUERY_VALUE_DUCKDB_TYPE[c.type] : undefined;
    if (!type) throw new StrataError('invalid', `Unsupported column type ${String(c.type)}.`);
    return `CAST(NULL AS ${type}) AS ${quoteIdentifier(c.name)}`;
  });
  const source = `${quoteIdentifier(FRAGMENT_SOURCE)} AS (SELECT ${cols.length > 0 ? cols.join(', ') : 'NULL AS "__none"'} FROM ${relation})`;
  return `WITH ${source}, ${statement.sql.slice('WITH '.length)}`;
}

/**
 * The statement over `relation`, or, for a top-N statement over a relation made of several
 * `branches` (each a parenthesised SELECT of the same columns whose union is the relation), the
 * statement over each branch and the first rows of their union. Why: over a UNION ALL, DuckDB's
 * top-N decodes every column of every row; over one scan it reads the key column and fetches the
 * winning rows only (late materialization): ~3–5× faster on the query bench's top 10 (decision 0018).
 */
export function fragmentSql(
  statement: FragmentStatement,
  relation: string,
  available: readonly string[],
  branches?: readonly string[],
): string {
  const topN = statement.branchTopN;
  if (!topN || !branches || branches.length < 2) return boundStatement(statement, relation, available);
  const order = topN.keys.map((k) => {
    const column = statement.columns[k.column];
    if (!column) throw new StrataError('invalid', 'A top-N key names no output column of the fragment.');
    return `${quoteIdentifier(column.id)}${k.descending ? ' DESC' : ' ASC'}${k.nullsFirst ? ' NULLS FIRST' : ' NULLS LAST'}`;
  });
  if (order.length === 0) throw new StrataError('invalid', 'A top-N fragment needs at least one key.');
  const parts = branches.map((b) => `(${boundStatement(statement, b, available)})`);
  return `SELECT * FROM (${parts.join(' UNION ALL ')}) ORDER BY ${order.join(', ')} LIMIT ${BigInt(topN.limit).toString()}`;
}

/**
 * Groups of scan branches a take without an order runs over, one group after another: the first
 * two branches (the hot rows and the oldest segment), then two more, then groups twice as large as
 * the one before, each as a relation (their UNION ALL). Why groups: over the UNION ALL of all
 * segments, DuckDB's LIMIT does not stop the other segments' scans once it has its rows, so
 * `where … | take 100` read a share of every segment and took longer with every segment the range
 * held (decision 0033). Why not the hot rows alone first: often a statement for few or no rows,
 * measured 1.5–3 ms more than one statement at 1 M rows. Doubling keeps the number of statements
 * logarithmic where few rows pass the filter.
 */
export function branchGroups(branches: readonly string[]): string[] {
  const out: string[] = [];
  for (let at = 0, size = 2, next = 2; at < branches.length; at += size, size = next, next *= 2) {
    const group = branches.slice(at, at + size);
    out.push(group.length === 1 ? (group[0] as string) : `(${group.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`);
  }
  return out;
}

/**
 * Runs a fragment over `relation` (made of `branches`, when given: see fragmentSql) on
 * `connection`; an abort interrupts the statement. A take without an order (branchLimit) runs
 * over groups of branches (branchGroups) until it has its rows. A top-N whose first key is a
 * source column runs through a threshold on that column when some branches are `whole` segment
 * files (top-n-threshold.ts), else per branch.
 */
export async function* runFragment(
  connection: DuckDBConnection,
  relation: string,
  available: readonly string[],
  statement: FragmentStatement,
  signal: AbortSignal,
  batchRows = 8192,
  branches?: readonly string[],
  whole?: readonly string[],
): AsyncGenerator<ColumnBatch> {
  const threshold = branches && whole ? thresholdPlan(statement, available, { branches, whole }) : undefined;
  if (threshold && branches && whole) {
    let answer: ColumnBatch[] | undefined;
    signal.throwIfAborted();
    const interrupt = () => connection.interrupt();
    signal.addEventListener('abort', interrupt, { once: true });
    try {
      answer = await runWithThreshold(connection, threshold, { branches, whole }, (r) =>
        runStatement(connection, r, available, statement, signal, batchRows),
      );
    } catch (err) {
      signal.throwIfAborted();
      throw queryFailure(err);
    } finally {
      signal.removeEventListener('abort', interrupt);
    }
    if (answer) {
      yield* answer;
      return;
    }
  }
  const limit = statement.branchLimit;
  if (limit === undefined || statement.branchTopN || !branches || branches.length < 2) {
    yield* runStatement(connection, relation, available, statement, signal, batchRows, branches);
    return;
  }
  let need = limit;
  for (const group of branchGroups(branches)) {
    if (need <= 0n) return;
    for await (const batch of runStatement(connection, group, available, statement, signal, batchRows)) {
      if (need <= 0n) break;
      const rows = BigInt(batch.rowCount) > need ? Number(need) : batch.rowCount;
      yield rows === batch.rowCount ? batch : { rowCount: rows, columns: batch.columns.map((c) => c.slice(0, rows)) };
      need -= BigInt(rows);
    }
  }
}

/** Runs the statement once over `relation` (per branch for a top-N: fragmentSql). */
async function* runStatement(
  connection: DuckDBConnection,
  relation: string,
  available: readonly string[],
  statement: FragmentStatement,
  signal: AbortSignal,
  batchRows: number,
  branches?: readonly string[],
): AsyncGenerator<ColumnBatch> {
  signal.throwIfAborted();
  const interrupt = () => connection.interrupt();
  signal.addEventListener('abort', interrupt, { once: true });
  try {
    const bounded = statement.maxRows !== undefined && statement.maxRows <= MATERIALIZE_MAX_ROWS;
    const inlined = bounded ? inlineParams(statement.sql, statement.params) : undefined;
    let result: DuckDBResult;
    try {
      if (inlined !== undefined) {
        result = await connection.run(fragmentSql({ ...statement, sql: inlined }, relation, available, branches));
      } else {
        const { values, types } = bindValues(statement.params);
        const sql = fragmentSql(statement, relation, available, branches);
        result = bounded ? await connection.run(sql, values, types) : await connection.stream(sql, values, types);
      }
    } catch (err) {
      signal.throwIfAborted();
      throw queryFailure(err);
    }
    const expected = statement.columns.map((c) => c.type);
    const actual = result.columnTypes().map((t) => t.toString());
    if (actual.length !== expected.length || actual.some((t, i) => t !== expected[i])) {
      throw new StrataError('internal', `Fragment columns are ${actual.join(', ')}, expected ${expected.join(', ')}.`);
    }
    try {
      yield* resultBatches(result, signal, batchRows);
    } catch (err) {
      signal.throwIfAborted();
      throw queryFailure(err);
    }
  } finally {
    signal.removeEventListener('abort', interrupt);
  }
}
