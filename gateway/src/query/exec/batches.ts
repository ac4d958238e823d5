/**
 * Loading fragment rows into the merge database: wire batches (see @strata/common
 * column-batch.ts) appended to a temp table through DuckDB data chunks.
 */

import {
  type DuckDBConnection,
  DuckDBDataChunk,
  DuckDBTimestampValue,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { type ColumnBatch, type WireType, wireDuckType } from '@strata/common';

export type { ColumnBatch } from '@strata/common';

const CHUNK_ROWS = 2048;

/** Appends wire batches to a table whose columns have the given wire types. */
export class BatchAppender {
  private constructor(
    private readonly appender: Awaited<ReturnType<DuckDBConnection['createAppender']>>,
    private readonly types: DuckDBType[],
    private readonly timestampColumns: boolean[],
  ) {}

  static async open(connection: DuckDBConnection, table: string, wireTypes: readonly WireType[]): Promise<BatchAppender> {
    const appender = await connection.createAppender(table);
    return new BatchAppender(
      appender,
      wireTypes.map((t) => wireDuckType(t)),
      wireTypes.map((t) => t === 'TIMESTAMP'),
    );
  }

  append(batch: ColumnBatch): void {
    if (batch.columns.length !== this.types.length) throw new Error('batch column count does not match the table');
    for (let start = 0; start < batch.rowCount; start += CHUNK_ROWS) {
      const end = Math.min(batch.rowCount, start + CHUNK_ROWS);
      const chunk = DuckDBDataChunk.create(this.types, end - start);
      batch.columns.forEach((col, i) => {
        const slice = start === 0 && end === col.length ? col : col.slice(start, end);
        const values = this.timestampColumns[i]
          ? slice.map((v) => (v === null ? null : new DuckDBTimestampValue(v as bigint)))
          : (slice as DuckDBValue[]);
        chunk.setColumnValues(i, values);
      });
      this.appender.appendDataChunk(chunk);
    }
  }

  close(): void {
    this.appender.flushSync();
    this.appender.closeSync();
  }
}
