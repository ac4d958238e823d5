import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, StrataError } from '@strata/common';
import { insertSegment, type SegmentInfo, selectTableColumns, type TableInfo } from './catalog.js';
import { publishFile } from './durable-file.js';
import { discardSegmentFile } from './segment-discard.js';
import { attachSegmentFiles, segmentFileName, WRITTEN_FORMAT, writeSegmentFile } from './segment-format.js';
import type { StorageContext } from './storage-context.js';
import { chooseFoldColumns, foldSelectItems } from './term-folds.js';
import { buildTermIndex, insertTermIndex } from './term-index.js';

/**
 * Seals a table's hot rows into one segment sorted by timestamp (segment-format.ts).
 *
 * The catalog side runs in one DuckDB transaction on `conn`: the same transaction deletes the
 * rows it counted and lists the segment, so a row is always either hot or in a listed segment,
 * never both and never neither. The file is written on a connection of its own (DuckDB lets one
 * transaction write to one database file only), from the same rows: the caller holds the write
 * gate, so no group commit, purge or deletion changes the hot rows between the two reads, and
 * the file's row count is checked against the transaction's before anything commits. The file is
 * made durable (and attached) before the commit; a crash before the commit leaves an unlisted
 * file that start-up deletes.
 *
 * Holds the table's lock (no schema change of the table may commit in between; DuckDB would fail
 * the seal's commit). The caller holds the account's write gate.
 */
export async function sealTable(ctx: StorageContext, conn: DuckDBConnection, table: TableInfo): Promise<SegmentInfo | undefined> {
  const release = await ctx.tableLocks.lock(table.tableId);
  const segmentId = randomUUID();
  const fileName = segmentFileName(table.tableId, segmentId, WRITTEN_FORMAT);
  const finalPath = path.join(ctx.paths.segments, fileName);
  const tmpPath = `${finalPath}.tmp`;
  let published = false;
  const fileConn = await ctx.instance.connect();
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
      // The term folds of the long-text columns go into the file with them (decision 0045).
      const folds = await chooseFoldColumns(fileConn, [hot], columns);
      const written = await writeSegmentFile(
        fileConn,
        `SELECT *${foldSelectItems(folds)} FROM ${hot} ORDER BY "timestamp"`,
        tmpPath,
        WRITTEN_FORMAT,
      );
      if (written.rows !== rowCount)
        throw new StrataError('internal', `A seal wrote ${written.rows} rows instead of the ${rowCount} hot rows it deletes.`);
      await publishFile(tmpPath, finalPath);
      published = true;
      await attachSegmentFiles(fileConn, [finalPath]);
      // Built through fileConn: the attachment is not visible to `conn`, whose transaction began
      // before it (decision 0025); the filters are listed in that transaction (decision 0026).
      const terms = await buildTermIndex(fileConn, finalPath, WRITTEN_FORMAT, columns);
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
        format: WRITTEN_FORMAT,
      };
      await insertSegment(conn, segment);
      await insertTermIndex(conn, segmentId, terms);
      await ctx.catalogChanges.commit(conn);
      return segment;
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      await discardSegmentFile(fileConn, published ? finalPath : tmpPath);
      throw err;
    }
  } finally {
    fileConn.closeSync();
    release();
  }
}
