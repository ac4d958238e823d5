/**
 * Column batches: how fragment rows travel from a worker to the gateway. Columns only carry the
 * plain wire types (VARCHAR, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP as µs), so a batch maps directly
 * onto protobuf packed arrays and onto DuckDB vectors.
 */
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  DuckDBDataChunk,
  type DuckDBResult,
  DuckDBTimestampValue,
  type DuckDBType,
  DuckDBTypeId,
  type DuckDBValue,
  TIMESTAMP,
  VARCHAR,
} from '@duckdb/node-api';
import type { ParamValue } from '../sql/sql.js';

export type WireValue = string | bigint | number | boolean | null;

export interface ColumnBatch {
  rowCount: number;
  /** One array per output column, in the fragment's column order. */
  columns: WireValue[][];
}

const TYPE_BY_NAME: Record<string, DuckDBType> = { VARCHAR, BIGINT, DOUBLE, BOOLEAN, TIMESTAMP };

export function duckType(wireType: string): DuckDBType {
  const t = Object.hasOwn(TYPE_BY_NAME, wireType) ? TYPE_BY_NAME[wireType] : undefined;
  if (!t) throw new Error(`unsupported wire type ${wireType}`);
  return t;
}

/** Parameter values and types for DuckDB binding. */
export function bindValues(params: readonly ParamValue[]): { values: DuckDBValue[]; types: DuckDBType[] } {
  const values: DuckDBValue[] = [];
  const types: DuckDBType[] = [];
  for (const p of params) {
    types.push(duckType(p.type));
    if (p.value === null) values.push(null);
    else if (p.type === 'TIMESTAMP') values.push(new DuckDBTimestampValue(p.value as bigint));
    else values.push(p.value as DuckDBValue);
  }
  return { values, types };
}

function toWire(value: DuckDBValue, typeId: DuckDBTypeId): WireValue {
  if (value === null) return null;
  switch (typeId) {
    case DuckDBTypeId.TIMESTAMP:
      return (value as DuckDBTimestampValue).micros;
    case DuckDBTypeId.BIGINT:
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.BOOLEAN:
    case DuckDBTypeId.VARCHAR:
      return value as WireValue;
    default:
      return String(value);
  }
}

/** Reads a result chunk by chunk as wire batches. */
export async function* resultBatches(result: DuckDBResult, signal?: AbortSignal): AsyncGenerator<ColumnBatch> {
  const typeIds = result.columnTypes().map((t) => t.typeId);
  for (;;) {
    signal?.throwIfAborted();
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return;
    const columns = typeIds.map((typeId, i) => chunk.getColumnValues(i).map((v) => toWire(v, typeId)));
    yield { rowCount: chunk.rowCount, columns };
  }
}

const CHUNK_ROWS = 2048;

/** Appends wire batches to a table whose columns have the given wire types. */
export class BatchAppender {
  private constructor(
    private readonly appender: Awaited<ReturnType<DuckDBConnection['createAppender']>>,
    private readonly types: DuckDBType[],
    private readonly timestampColumns: boolean[],
  ) {}

  static async open(connection: DuckDBConnection, table: string, wireTypes: string[]): Promise<BatchAppender> {
    const appender = await connection.createAppender(table);
    return new BatchAppender(
      appender,
      wireTypes.map((t) => duckType(t)),
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
