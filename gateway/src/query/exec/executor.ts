/**
 * Runs a query plan: every fragment through the injected fragment runner (which fans it out to the
 * workers and streams their rows back), the rows into per-fragment temp tables of the merge
 * database, then the merge statement. A deadline or an abort interrupts the merge and aborts the
 * runners (so the workers cancel too).
 */

import { setMaxListeners } from 'node:events';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  bindValues,
  inlineParams,
  QUERY_FINISHED,
  queryFailure,
  queryTimeoutMessage,
  quoteIdentifier,
  StrataError,
  type WireValue,
} from '@strata/common';
import type { FragmentSpec, QueryPlan, SingleWorkerSpec } from '../plan/planner.js';
import { scalarValue } from '../semantic/scalar-query.js';
import type { ParamValue, RenderedSql } from '../sql/sql.js';
import { BatchAppender, type ColumnBatch } from './batches.js';
import type { MergeDatabase } from './merge-database.js';
import { formatValue, type QueryResult, type ResultValue, resultColumns } from './result-format.js';
import { summedCount } from './summed-count.js';

/**
 * Runs one fragment on every worker holding the table; yields all their rows. `single`, when
 * offered, runs a whole-query statement if exactly one worker would be asked (undefined
 * otherwise): that worker then answers the final rows and no merge is needed.
 */
export type FragmentRunner = ((fragment: FragmentSpec, signal: AbortSignal) => AsyncIterable<ColumnBatch>) & {
  single?: (statement: SingleWorkerSpec, signal: AbortSignal) => Promise<AsyncIterable<ColumnBatch> | undefined>;
};

export interface ExecuteOptions {
  mergeDatabase: MergeDatabase;
  /** Abandoned by the caller (client went away). */
  signal?: AbortSignal;
  /** Longest the query may run. */
  timeoutMs?: number;
}

/** A result before formatting: the plan's columns with their raw values (see result-format.ts). */
export interface ColumnarResult {
  columns: QueryPlan['columns'];
  /** One array per column; only the first `rowCount` values belong to the result. */
  values: unknown[][];
  rowCount: number;
  /** True when the row cap cut the result. */
  truncated: boolean;
  render?: QueryPlan['render'];
}

/** Runs a plan; the answer as row objects. */
export async function executePlan(plan: QueryPlan, runner: FragmentRunner, options: ExecuteOptions): Promise<QueryResult> {
  return resultRows(await executePlanColumnar(plan, runner, options));
}

/** Runs a plan; the answer as columns (for writing it out without row objects: result-json.ts). */
export async function executePlanColumnar(
  plan: QueryPlan,
  runner: FragmentRunner,
  options: ExecuteOptions,
): Promise<ColumnarResult> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(new StrataError('cancelled', 'The query was cancelled.'));
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  if (options.timeoutMs !== undefined) {
    const seconds = Math.round(options.timeoutMs / 1000);
    timer = setTimeout(() => controller.abort(new StrataError('timeout', queryTimeoutMessage(seconds))), options.timeoutMs);
  }
  try {
    let current = plan;
    for (;;) {
      // Every fragment's stream and the merge connection listen on this one signal: a query with
      // many fragments legitimately has more than Node's default of 10 listeners (which would log a
      // MaxListenersExceededWarning per query). Bounded by the plan, so a real leak still shows.
      setMaxListeners(signalListenerBound(current), controller.signal);
      for (const scalar of current.scalars) {
        // toscalar(): the subquery's first value fills the parameter the statements below reference.
        const answer = await runPlan(scalar.plan, runner, options, controller.signal);
        scalar.target.value = scalarValue(scalar.type, answer[0]?.[0]);
      }
      const result = columnarOf(current, await runPlan(current, runner, options, controller.signal));
      // A first phase (columns that depend on data): its answer plans the next step.
      if (!current.nextPhase) return result;
      current = current.nextPhase(result);
    }
  } catch (err) {
    if (controller.signal.aborted) {
      const reason = controller.signal.reason;
      throw reason instanceof StrataError ? reason : new StrataError('cancelled', 'The query was cancelled.');
    }
    throw err;
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (!controller.signal.aborted) controller.abort(QUERY_FINISHED);
  }
}

/**
 * Listeners one query's signal may carry: per fragment, its stream and (with in-process runners)
 * one per worker statement; the merge connection; slack for the caller.
 */
function signalListenerBound(plan: QueryPlan): number {
  const fragments = plan.fragments.length + plan.scalars.reduce((n, s) => n + s.plan.fragments.length, 0);
  return 8 * fragments + 10;
}

/** One plan's rows: on the single worker, passed through, summed in JS (a count), or merged at the gateway. */
async function runPlan(plan: QueryPlan, runner: FragmentRunner, options: ExecuteOptions, signal: AbortSignal) {
  return (
    (await singleWorker(plan, runner, signal)) ??
    (await passedThrough(plan, runner, signal)) ??
    (await summedCount(plan, runner, signal)) ??
    (await merged(plan, runner, options, signal))
  );
}

/** With exactly one worker, that worker runs the whole query: its rows are the result. */
async function singleWorker(plan: QueryPlan, runner: FragmentRunner, signal: AbortSignal): Promise<unknown[][] | undefined> {
  if (!plan.single || !runner.single) return undefined;
  const stream = await runner.single(plan.single, signal);
  if (!stream) return undefined;
  const columns: unknown[][] = plan.columns.map(() => []);
  for await (const batch of stream) {
    signal.throwIfAborted();
    // A top-N statement's order keys follow the result columns (planner.ts singleWorkerSpec).
    columns.forEach((target, i) => {
      for (const v of batch.columns[i] as unknown[]) target.push(v);
    });
  }
  return columns;
}

/** Filter-only plans: the first rows to arrive, up to the count; the other calls are cancelled. */
async function passedThrough(plan: QueryPlan, runner: FragmentRunner, signal: AbortSignal): Promise<unknown[][] | undefined> {
  const spec = plan.passthrough;
  if (!spec) return undefined;
  const fragment = plan.fragments[spec.fragment] as FragmentSpec;
  const want = Number(spec.count);
  const columns: unknown[][] = plan.columns.map(() => []);
  let rows = 0;
  for await (const batch of runner(fragment, signal)) {
    signal.throwIfAborted();
    const take = Math.min(batch.rowCount, want - rows);
    spec.columnIndexes.forEach((from, i) => {
      const source = batch.columns[from] as unknown[];
      const target = columns[i] as unknown[];
      for (let r = 0; r < take; r++) target.push(source[r]);
    });
    rows += take;
    if (rows >= want) break; // leaving the loop stops the workers' streams
  }
  return columns;
}

/**
 * Fragment answers up to this many values in all go into the merge statement itself, as VALUES
 * rows (typed literals, or bound parameters when a value has no literal): a count or a few partial
 * aggregates per worker are common, and creating, filling and closing a temp table per fragment
 * cost ~1 ms more than the merge itself. Larger answers stream into temp tables through appenders
 * (the limit was measured with bound parameters, which DuckDB binds slowly beyond ~60 values).
 */
const INLINE_MAX_VALUES = 64;

/** The distributed way: every fragment's rows into the merge database, then the merge statement. */
async function merged(
  plan: QueryPlan,
  runner: FragmentRunner,
  options: ExecuteOptions,
  signal: AbortSignal,
): Promise<unknown[][]> {
  const connection = await options.mergeDatabase.connect();
  const interrupt = () => connection.interrupt();
  signal.addEventListener('abort', interrupt, { once: true });
  // Kept for the next query only when this one left nothing on it (merge-database.ts).
  let clean = false;
  try {
    const inline = await loadFragments(plan, runner, connection, signal);
    signal.throwIfAborted();
    const statement = inline && plan.fragments.length > 0 ? withInlineFragments(plan, inline) : plan.merge;
    // Values as typed literals when each has one (param-literals.ts): DuckDB plans a statement
    // with parameters twice, and binds many of them slowly.
    const literal = inlineParams(statement.text, statement.params);
    try {
      let result: Awaited<ReturnType<typeof connection.runAndReadAll>>;
      if (literal !== undefined) result = await connection.runAndReadAll(literal);
      else {
        const { values, types } = bindValues(statement.params);
        result = await connection.runAndReadAll(statement.text, values, types);
      }
      const columns = result.getColumns() as unknown[][];
      clean = inline !== undefined && !signal.aborted;
      return columns;
    } catch (err) {
      signal.throwIfAborted();
      throw queryFailure(err);
    }
  } finally {
    signal.removeEventListener('abort', interrupt);
    options.mergeDatabase.release(connection, clean);
  }
}

/**
 * The merge statement reading each fragment's rows from a leading CTE of VALUES (named like the
 * temp table it replaces) instead of a temp table; the values are parameters until `merged`
 * renders them as literals.
 */
function withInlineFragments(plan: QueryPlan, batches: ColumnBatch[][]): RenderedSql {
  const params: ParamValue[] = [...plan.merge.params];
  const ctes = plan.fragments.map((f, i) => {
    const rows: string[] = [];
    for (const batch of batches[i] as ColumnBatch[]) {
      for (let r = 0; r < batch.rowCount; r++) {
        const cells = f.columns.map((c, k) => {
          params.push({ type: c.type, value: (batch.columns[k] as WireValue[])[r] as WireValue });
          return `$${params.length}`;
        });
        rows.push(`(${cells.join(', ')})`);
      }
    }
    const name = quoteIdentifier(`f${f.index}`);
    if (rows.length === 0) {
      const nulls = f.columns.map((c) => `CAST(NULL AS ${c.type}) AS ${quoteIdentifier(c.id)}`);
      return `${name} AS (SELECT ${nulls.join(', ')} WHERE false)`;
    }
    const cols = f.columns.map((c, k) => `CAST(${quoteIdentifier(`v${k}`)} AS ${c.type}) AS ${quoteIdentifier(c.id)}`);
    const aliases = f.columns.map((_, k) => quoteIdentifier(`v${k}`));
    return `${name} AS (SELECT ${cols.join(', ')} FROM (VALUES ${rows.join(', ')}) AS "v"(${aliases.join(', ')}))`;
  });
  if (!plan.merge.text.startsWith('WITH ')) throw new Error('merge statement without a WITH clause');
  return { text: `WITH ${ctes.join(', ')}, ${plan.merge.text.slice('WITH '.length)}`, params };
}

function columnarOf(plan: QueryPlan, values: unknown[][]): ColumnarResult {
  const rowCount = (values[0] ?? []).length;
  const result: ColumnarResult = {
    columns: plan.columns,
    values,
    rowCount: Math.min(rowCount, plan.maxRows),
    truncated: rowCount > plan.maxRows,
  };
  if (plan.render) result.render = plan.render;
  return result;
}

/** The answer as clients get it: one object per row, values formatted. */
export function resultRows(c: ColumnarResult): QueryResult {
  const results: Record<string, ResultValue>[] = new Array(c.rowCount);
  for (let r = 0; r < c.rowCount; r++) {
    const row: Record<string, ResultValue> = {};
    c.columns.forEach((col, i) => {
      row[col.name] = formatValue(col.type, (c.values[i] as unknown[])[r]);
    });
    results[r] = row;
  }
  const result: QueryResult = {
    header: c.columns.map((col) => col.name),
    columns: resultColumns(c.columns),
    results,
    truncated: c.truncated,
  };
  if (c.render) result.render = c.render;
  return result;
}

/** A join side past its bound: the query's problem (400), with what to do about it. */
function joinSideTooLarge(max: number): StrataError {
  return new StrataError(
    'invalid',
    `A side of a join sends more than ${max.toLocaleString('en-US')} rows to the gateway, which holds both sides in memory. Filter, project or summarize that side first.`,
  );
}

/**
 * Streams every fragment's rows. While all of them together stay within INLINE_MAX_VALUES they
 * are kept and returned (for withInlineFragments); past it, temp tables f0, f1 … are created,
 * what was kept is appended, and the rest streams in (undefined is returned).
 */
async function loadFragments(
  plan: QueryPlan,
  runner: FragmentRunner,
  connection: DuckDBConnection,
  signal: AbortSignal,
): Promise<ColumnBatch[][] | undefined> {
  const kept: ColumnBatch[][] = plan.fragments.map(() => []);
  let keptValues = 0;
  let tables: Promise<BatchAppender[]> | undefined;
  let appenders: BatchAppender[] | undefined;
  const openTables = async () => {
    const opened: BatchAppender[] = [];
    try {
      // Every table in one round trip (a connection serves one call at a time); appenders are
      // created synchronously.
      const creates = plan.fragments.map((f) => {
        const cols = f.columns.map((c) => `${quoteIdentifier(c.id)} ${c.type}`).join(', ');
        return `CREATE TEMP TABLE ${quoteIdentifier(`f${f.index}`)} (${cols})`;
      });
      await connection.run(creates.join('; '));
      for (const f of plan.fragments) {
        opened.push(
          await BatchAppender.open(
            connection,
            `f${f.index}`,
            f.columns.map((c) => c.type),
          ),
        );
      }
    } catch (err) {
      for (const a of opened) a.close();
      throw err;
    }
    appenders = opened;
    // What was kept goes first (appends are synchronous: nothing interleaves).
    kept.forEach((list, i) => {
      for (const b of list) (opened[i] as BatchAppender).append(b);
      list.length = 0;
    });
    return opened;
  };
  try {
    await Promise.all(
      plan.fragments.map(async (f, i) => {
        let received = 0;
        for await (const batch of runner(f, signal)) {
          signal.throwIfAborted();
          received += batch.rowCount;
          if (f.maxGatewayRows !== undefined && received > f.maxGatewayRows) throw joinSideTooLarge(f.maxGatewayRows);
          if (!tables) {
            (kept[i] as ColumnBatch[]).push(batch);
            keptValues += batch.rowCount * Math.max(1, f.columns.length);
            if (keptValues > INLINE_MAX_VALUES) tables = openTables();
            continue;
          }
          ((await tables)[i] as BatchAppender).append(batch);
        }
      }),
    );
    if (tables) await tables;
  } finally {
    if (tables) await tables.catch(() => undefined);
    for (const a of appenders ?? []) a.close();
  }
  return tables ? undefined : kept;
}
