/**
 * Runs one fragment statement on a DuckDB connection over a given relation (a table, a view, or a
 * relation a storage engine exposes) and streams the rows as wire batches. The relation is bound
 * to the name the fragment reads (FRAGMENT_SOURCE) with a temporary view on the connection.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { FRAGMENT_SOURCE, type FragmentSpec } from '../plan/planner.js';
import { quoteIdent } from '../sql/sql.js';
import { bindValues, type ColumnBatch, resultBatches } from './batches.js';
import { duckdbError } from './executor.js';

/**
 * `relation` is SQL naming the rows (e.g. a quoted table name); it comes from the storage side,
 * never from the query.
 */
export async function* runFragmentOnConnection(
  connection: DuckDBConnection,
  relation: string,
  fragment: FragmentSpec,
  signal: AbortSignal,
): AsyncGenerator<ColumnBatch> {
  signal.throwIfAborted();
  const interrupt = () => connection.interrupt();
  signal.addEventListener('abort', interrupt, { once: true });
  try {
    await connection.run("SET TimeZone = 'UTC'");
    await connection.run(`CREATE OR REPLACE TEMP VIEW ${quoteIdent(FRAGMENT_SOURCE)} AS SELECT * FROM ${relation}`);
    const { values, types } = bindValues(fragment.params);
    let result: Awaited<ReturnType<DuckDBConnection['stream']>>;
    try {
      result = await connection.stream(fragment.sql, values, types);
    } catch (err) {
      signal.throwIfAborted();
      throw duckdbError(err);
    }
    try {
      yield* resultBatches(result, signal);
    } catch (err) {
      signal.throwIfAborted();
      throw duckdbError(err);
    }
  } finally {
    signal.removeEventListener('abort', interrupt);
  }
}
