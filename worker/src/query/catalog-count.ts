import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnBatch, type FragmentStatement, runFragment, StrataError } from '@strata/common';
import type { CountedRelation } from '../storage/scan.js';

/**
 * Runs a bare count fragment (isBareCount) over the parts of a scan that need counting (hot rows,
 * edge segments) and adds the catalog's row counts of the segments read whole
 * (CountedRelation): the same one row a run over the whole relation answers, without visiting
 * those segments.
 */
export async function* countWithCatalog(
  connection: DuckDBConnection,
  counted: CountedRelation,
  available: readonly string[],
  statement: FragmentStatement,
  signal: AbortSignal,
): AsyncGenerator<ColumnBatch> {
  let rows = 0;
  for await (const batch of runFragment(connection, counted.rest, available, statement, signal)) {
    rows += batch.rowCount;
    if (batch.rowCount === 0) continue;
    const value = batch.columns[0]![0];
    if (batch.rowCount !== 1 || typeof value !== 'bigint')
      throw new StrataError('internal', 'A count fragment answered something other than one count.');
    batch.columns[0]![0] = value + BigInt(counted.catalogRows);
    yield batch;
  }
  if (rows !== 1) throw new StrataError('internal', 'A count fragment answered something other than one count.');
}
