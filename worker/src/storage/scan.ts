import type { DuckDBConnection } from '@duckdb/node-api';
import { StrataError } from '@strata/common';
import { hotTableName, selectTableSegments } from './catalog.js';
import type { ColumnSchema, ColumnTypeName } from './column-types.js';
import { segmentsSelectSql } from './compactor.js';
import { quoteIdent } from './sql.js';
import type { StorageContext } from './storage-context.js';

/** Time range of a scan in milliseconds since the epoch: from inclusive, to exclusive. */
export interface ScanRange {
  fromMs?: number;
  toMs?: number;
}

export interface ScanRelation {
  schema: string;
  /** A quoted temporary view name, usable as-is in SQL on the snapshot's connection. */
  relation: string;
  /** Columns of the view in table order: the stamped columns first, then data fields. */
  columns: { name: string; type: ColumnTypeName }[];
}

export interface ScanSnapshot {
  /** Connection holding the snapshot's open read transaction. Only this snapshot uses it. */
  connection: DuckDBConnection;
  /** One entry per requested schema that exists, in request order. */
  relations: ScanRelation[];
  /** Ends the transaction, closes the connection, lets compaction delete files it replaced. */
  release(): Promise<void>;
}

let viewSeq = 0;

function checkRange(range: ScanRange): { fromUs?: number; toUs?: number } {
  const out: { fromUs?: number; toUs?: number } = {};
  for (const k of ['fromMs', 'toMs'] as const) {
    const v = range[k];
    if (v === undefined) continue;
    if (!Number.isSafeInteger(v)) throw new StrataError('invalid', `Scan range ${k} must be an integer number of milliseconds.`);
    if (k === 'fromMs') out.fromUs = v * 1000;
    else out.toUs = v * 1000;
  }
  return out;
}

function rangeWhere(r: { fromUs?: number; toUs?: number }): string {
  // Numbers only (checked integers), so inlining them in the view text is safe.
  const conds: string[] = [];
  if (r.fromUs !== undefined) conds.push(`"timestamp" >= make_timestamp(${r.fromUs}::BIGINT)`);
  if (r.toUs !== undefined) conds.push(`"timestamp" < make_timestamp(${r.toUs}::BIGINT)`);
  return conds.length ? ` WHERE ${conds.join(' AND ')}` : '';
}

/**
 * Opens a consistent snapshot of some schemas of an account. See StorageEngine.openSnapshot for
 * the contract; this is its implementation.
 *
 * The snapshot is a DuckDB read transaction on a fresh connection. Within it, each schema's
 * columns, hot rows and listed segments are read at one point in time: a seal or compaction
 * committing meanwhile is invisible to it, so no row is seen twice or missed. The scan registers
 * with the reclaimer before the transaction starts, so segment files it lists are not deleted
 * until release.
 */
export async function openSnapshot(
  ctx: StorageContext,
  accountId: string,
  requests: readonly ({ schema: string } & ScanRange)[],
): Promise<ScanSnapshot> {
  const ranges = requests.map((r) => checkRange(r));
  const unregister = ctx.reclaimer.registerScan();
  const connection = await ctx.instance.connect();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    try {
      await connection.run('ROLLBACK');
    } catch {
      // no transaction left to end
    }
    connection.closeSync();
    unregister();
  };
  try {
    await connection.run('BEGIN TRANSACTION');
    const relations: ScanRelation[] = [];
    for (const [i, request] of requests.entries()) {
      const tableRow = (
        await connection.runAndReadAll('SELECT table_id FROM strata_tables WHERE account_id = $1 AND schema_name = $2', [
          accountId,
          request.schema,
        ])
      ).getRowObjectsJS()[0] as { table_id: number } | undefined;
      if (!tableRow) continue;
      const tableId = tableRow.table_id;
      const columns = (
        (
          await connection.runAndReadAll('SELECT name, type FROM strata_columns WHERE table_id = $1 ORDER BY position', [tableId])
        ).getRowObjectsJS() as { name: string; type: string }[]
      ).map((c): ColumnSchema => ({ name: c.name, type: c.type as ColumnTypeName }));
      const range = ranges[i]!;
      const segments = await selectTableSegments(connection, tableId, range);
      const where = rangeWhere(range);
      const hotTable = quoteIdent(hotTableName(tableId));
      const parts = [`SELECT ${columns.map((c) => quoteIdent(c.name)).join(', ')} FROM ${hotTable}${where}`];
      for (const select of segmentsSelectSql(ctx.paths.segments, segments, columns)) parts.push(`${select}${where}`);
      const view = `strata_scan_${++viewSeq}`;
      await connection.run(`CREATE TEMP VIEW ${quoteIdent(view)} AS ${parts.join(' UNION ALL ')}`);
      relations.push({ schema: request.schema, relation: quoteIdent(view), columns });
    }
    return { connection, relations, release };
  } catch (err) {
    await release();
    throw err;
  }
}
