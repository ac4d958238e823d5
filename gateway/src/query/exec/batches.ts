/**
 * Loading fragment rows into the merge database: wire batches (see @strata/common
 * column-batch.ts) appended to a temp table through DuckDB data chunks.
 */

import { type DuckDBConnection, DuckDBDataChunk, type DuckDBType } from '@duckdb/node-api';
import { type ColumnBatch, setChunkColumn, type WireType, wireDuckType } from '@strata/common';

export type { ColumnBatch } from '@strata/common';

const CHUNK_ROWS = 2048;

/** Appends wire batches to a table whose columns have the given wire types. */
export class BatchAppender {
  private constructor(
    private readonly appender: Awaited<ReturnType<DuckDBConnection['createAppender']>>,
    private readonly types: DuckDBType[],
  ) {}

  static async open(connection: DuckDBConnection, table: string, wireTypes: readonly WireType[]): Promise<BatchAppender> {
    const appender = await connection.createAppender(table);
    return new BatchAppender(
      appender,
      wireTypes.map((t) => wireDuckType(t)),
    );
  }

  append(batch: ColumnBatch): void {
    if (batch.columns.length !== this.types.length) throw new Error('batch column count does not match the table');
    for (let start = 0; start < batch.rowCount; start += CHUNK_ROWS) {
      const end = Math.min(batch.rowCount, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(this.types, end - start);
      batch.columns.forEach((col, i) => {
        const slice = start === 0 && end === col.length ? col : col.slice(start, end);
        setChunkColumn(chunk, i, (this.types[i] as DuckDBType).typeId, slice);
      });
      this.appender.appendDataChunk(chunk);
    }
  }

  close(): void {
    this.appender.flushSync();
    this.appender.closeSync();
  }
}
