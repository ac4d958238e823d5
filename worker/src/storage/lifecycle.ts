import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier } from '@strata/common';
import { deleteSegments, deleteTable, selectTableSegments, type TableInfo } from './catalog.js';
import type { StorageContext } from './storage-context.js';

/**
 * Deleting data a user asked to delete: a dropped schema, and rows past retention. Both change
 * the catalog in one transaction with the hot rows they delete (so a scan sees all or nothing of
 * it) and hand segment files to the reclaimer, which deletes them once no scan that may read them
 * is open. The caller holds the table's compaction lock and the write gate (no seal, compaction
 * or group commit of the table in between).
 */

export interface Deleted {
  rows: number;
  segments: number;
  bytes: number;
}

async function count(conn: DuckDBConnection, sql: string): Promise<number> {
  const row = (await conn.runAndReadAll(sql)).getRowObjectsJS()[0] as { n: bigint };
  return Number(row.n);
}

/** Drops a table: every hot row, every segment, its columns. A new append creates it afresh. */
export async function dropTable(ctx: StorageContext, conn: DuckDBConnection, table: TableInfo): Promise<Deleted> {
  const releaseTable = await ctx.tableLocks.lock(table.tableId);
  let segments: Awaited<ReturnType<typeof selectTableSegments>> = [];
  let hotRows = 0;
  try {
    await conn.run('BEGIN TRANSACTION');
    try {
      segments = await selectTableSegments(conn, table.tableId);
      hotRows = await count(conn, `SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`);
      await deleteTable(conn, table.tableId);
      await conn.run(`DROP TABLE ${quoteIdentifier(table.hotTable)}`);
      await ctx.catalogChanges.commit(conn);
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
    ctx.tables.remove(table.tableId);
  } finally {
    releaseTable();
  }
  ctx.reclaimer.retire(segments.map((s) => path.join(ctx.paths.segments, s.fileName)));
  return {
    rows: hotRows + segments.reduce((n, s) => n + s.rowCount, 0),
    segments: segments.length,
    bytes: segments.reduce((n, s) => n + s.byteSize, 0),
  };
}

/**
 * Deletes what of a table is older than `cutoffUs`: hot rows, and whole segments whose newest row
 * is older. A segment straddling the cut stays on disk until it is wholly past it or compaction
 * rewrites it without those rows (compactor.ts); scans never return them either way (scan.ts).
 */
export async function expireTable(
  ctx: StorageContext,
  conn: DuckDBConnection,
  table: TableInfo,
  cutoffUs: number,
): Promise<Deleted> {
  const releaseTable = await ctx.tableLocks.lock(table.tableId);
  let expired: Awaited<ReturnType<typeof selectTableSegments>> = [];
  let hotRows = 0;
  try {
    await conn.run('BEGIN TRANSACTION');
    try {
      expired = (await selectTableSegments(conn, table.tableId)).filter((s) => s.maxTsUs !== null && s.maxTsUs < cutoffUs);
      // Checked integer microseconds, so inlining the bound is safe.
      const older = `"timestamp" < make_timestamp(${Math.trunc(cutoffUs)}::BIGINT)`;
      hotRows = await count(conn, `SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)} WHERE ${older}`);
      if (hotRows === 0 && expired.length === 0) {
        await conn.run('ROLLBACK');
        return { rows: 0, segments: 0, bytes: 0 };
      }
      if (hotRows > 0) await conn.run(`DELETE FROM ${quoteIdentifier(table.hotTable)} WHERE ${older}`);
      if (expired.length > 0)
        await deleteSegments(
          conn,
          expired.map((s) => s.segmentId),
        );
      await ctx.catalogChanges.commit(conn);
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    releaseTable();
  }
  ctx.reclaimer.retire(expired.map((s) => path.join(ctx.paths.segments, s.fileName)));
  return {
    rows: hotRows + expired.reduce((n, s) => n + s.rowCount, 0),
    segments: expired.length,
    bytes: expired.reduce((n, s) => n + s.byteSize, 0),
  };
}
