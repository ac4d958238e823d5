import { randomUUID } from 'node:crypto';
import { mkdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '@strata/common';
import { insertSegment, type SegmentInfo, selectTableColumns, type TableInfo } from './catalog.js';
import { publishFile } from './durable-file.js';
import type { StorageContext } from './storage-context.js';
import { buildTermIndex, insertTermIndex } from './term-index.js';

/** Parquet options of every segment: ZSTD, row groups with min/max statistics (DuckDB writes them). */
export const PARQUET_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880';

export function segmentFileName(tableId: number, segmentId: string): string {
  return path.join(String(tableId), `${segmentId}.parquet`);
}

/**
 * Seals a table's hot rows into one Parquet segment sorted by timestamp.
 *
 * Runs in one DuckDB transaction on `conn`: the rows copied to the file are exactly the rows the
 * transaction's snapshot sees, and the same transaction deletes those rows and lists the segment,
 * so a row is always either hot or in a listed segment, never both and never neither. Appends
 * committed meanwhile are not in the snapshot and stay hot. The file is made durable before the
 * commit; a crash before the commit leaves an unlisted file that start-up deletes.
 *
 * Holds the table's lock (no schema change of the table may commit in between; DuckDB would fail
 * the seal's commit).
 */
export async function sealTable(ctx: StorageContext, conn: DuckDBConnection, table: TableInfo): Promise<SegmentInfo | undefined> {
  const release = await ctx.tableLocks.lock(table.tableId);
  const segmentId = randomUUID();
  const fileName = segmentFileName(table.tableId, segmentId);
  const finalPath = path.join(ctx.paths.segments, fileName);
  const tmpPath = `${finalPath}.tmp`;
  let published = false;
  try {
    await conn.run('BEGIN TRANSACTION');
    try {
      const hot = quoteIdentifier(table.hotTable);
      const summary = (
        await conn.runAndReadAll(
          `SELECT count(*) AS n, epoch_us(min("timestamp")) AS min_us, epoch_us(max("timestamp")) AS max_us FROM ${hot}`,
        )
      ).getRowObjectsJS()[0] as { n: bigint; min_us: bigint | null; max_us: bigint | null };
      const rowCount = Number(summary.n);
      if (rowCount === 0) {
        await conn.run('COMMIT');
        return undefined;
      }
      const columns = await selectTableColumns(conn, table.tableId);
      await mkdir(path.dirname(finalPath), { recursive: true });
      await conn.run(`COPY (SELECT * FROM ${hot} ORDER BY "timestamp") TO ${quoteLiteral(tmpPath)} (${PARQUET_OPTIONS})`);
      await publishFile(tmpPath, finalPath);
      published = true;
      const byteSize = (await stat(finalPath)).size;
      ctx.guard.noteWritten(byteSize);
      await conn.run(`DELETE FROM ${hot}`);
      const segment: SegmentInfo = {
        segmentId,
        tableId: table.tableId,
        accountId: table.accountId,
        schema: table.schema,
        fileName,
        minTsUs: summary.min_us === null ? null : Number(summary.min_us),
        maxTsUs: summary.max_us === null ? null : Number(summary.max_us),
        rowCount,
        byteSize,
        columns,
        createdAtMs: Date.now(),
      };
      await insertSegment(conn, segment);
      await insertTermIndex(conn, segmentId, await buildTermIndex(conn, finalPath, columns));
      await ctx.catalogChanges.commit(conn);
      return segment;
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      await unlink(published ? finalPath : tmpPath).catch(() => undefined);
      throw err;
    }
  } finally {
    release();
  }
}
