/**
 * Runs a query plan: every fragment through the injected fragment runner (which fans it out to the
 * workers and streams their rows back), the rows into per-fragment temp tables of the merge
 * database, then the merge statement. A deadline or an abort interrupts the merge and aborts the
 * runners (so the workers cancel too).
 */

import type { DuckDBConnection } from '@duckdb/node-api';
import { bindValues, queryFailure, StrataError } from '@strata/common';
import type { FragmentSpec, QueryPlan } from '../plan/planner.js';
import { quoteIdent } from '../sql/sql.js';
import { BatchAppender, type ColumnBatch } from './batches.js';
import type { MergeDatabase } from './merge-database.js';
import { formatValue, type QueryResult, type ResultValue, resultColumns } from './result-format.js';

/** Runs one fragment on every worker holding the table; yields all their rows. */
export type FragmentRunner = (fragment: FragmentSpec, signal: AbortSignal) => AsyncIterable<ColumnBatch>;

export interface ExecuteOptions {
  mergeDatabase: MergeDatabase;
  /** Abandoned by the caller (client went away). */
  signal?: AbortSignal;
  /** Longest the query may run. */
  timeoutMs?: number;
}

export async function executePlan(plan: QueryPlan, runner: FragmentRunner, options: ExecuteOptions): Promise<QueryResult> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(new StrataError('cancelled', 'The query was cancelled.'));
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  if (options.timeoutMs !== undefined) {
    timer = setTimeout(
      () =>
        controller.abort(
          new StrataError('timeout', `The query did not finish within ${Math.round(options.timeoutMs! / 1000)} seconds.`),
        ),
      options.timeoutMs,
    );
  }
  const connection = await options.mergeDatabase.connect();
  const interrupt = () => connection.interrupt();
  controller.signal.addEventListener('abort', interrupt, { once: true });
  try {
    await loadFragments(plan, runner, connection, controller.signal);
    controller.signal.throwIfAborted();
    const { values, types } = bindValues(plan.merge.params);
    let reader: Awaited<ReturnType<DuckDBConnection['runAndReadAll']>>;
    try {
      reader = await connection.runAndReadAll(plan.merge.text, values, types);
    } catch (err) {
      controller.signal.throwIfAborted();
      throw queryFailure(err);
    }
    const columns = reader.getColumns();
    const rowCount = reader.currentRowCount;
    const truncated = rowCount > plan.maxRows;
    const n = Math.min(rowCount, plan.maxRows);
    const results: Record<string, ResultValue>[] = new Array(n);
    for (let r = 0; r < n; r++) {
      const row: Record<string, ResultValue> = {};
      plan.columns.forEach((c, i) => {
        const raw = (columns[i] as unknown[])[r];
        row[c.name] = formatValue(c.type, raw);
      });
      results[r] = row;
    }
    const result: QueryResult = {
      header: plan.columns.map((c) => c.name),
      columns: resultColumns(plan.columns),
      results,
      truncated,
    };
    if (plan.render) result.render = plan.render;
    return result;
  } catch (err) {
    if (controller.signal.aborted) {
      const reason = controller.signal.reason;
      throw reason instanceof StrataError ? reason : new StrataError('cancelled', 'The query was cancelled.');
    }
    throw err;
  } finally {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    controller.signal.removeEventListener('abort', interrupt);
    if (!controller.signal.aborted) controller.abort(new StrataError('cancelled', 'The query finished.'));
    connection.closeSync();
  }
}

async function loadFragments(
  plan: QueryPlan,
  runner: FragmentRunner,
  connection: DuckDBConnection,
  signal: AbortSignal,
): Promise<void> {
  if (plan.fragments.length === 0) return;
  const appenders: BatchAppender[] = [];
  // Tables and appenders are created one at a time: a connection serves one call at a time.
  for (const f of plan.fragments) {
    const cols = f.columns.map((c) => `${quoteIdent(c.id)} ${c.type}`).join(', ');
    await connection.run(`CREATE TEMP TABLE ${quoteIdent(`f${f.index}`)} (${cols})`);
    appenders.push(
      await BatchAppender.open(
        connection,
        `f${f.index}`,
        f.columns.map((c) => c.type),
      ),
    );
  }
  try {
    await Promise.all(
      plan.fragments.map(async (f, i) => {
        const appender = appenders[i] as BatchAppender;
        for await (const batch of runner(f, signal)) {
          signal.throwIfAborted();
          appender.append(batch);
        }
      }),
    );
  } finally {
    for (const a of appenders) a.close();
  }
}
