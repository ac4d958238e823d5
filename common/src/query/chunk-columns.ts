/**
 * Reading and writing DuckDB data chunk columns as wire values (column-batch.ts), with a fast path
 * for the fixed-width wire types.
 *
 * @duckdb/node-api reads a chunk value by value: each value checks its validity bit with BigInt
 * arithmetic, TIMESTAMP values become DuckDBTimestampValue objects, and writes go through the
 * same per-value setters. Measured on the query bench (2,880-row answers), that was ~0.7 ms to read
 * a worker's result and ~2.5 ms to append two fragments' rows on the gateway. Here BIGINT,
 * TIMESTAMP and DOUBLE columns are read and written as whole arrays through @duckdb/node-bindings
 * (the C API's vector data and validity mask, public functions of the package node-api is built
 * on), with validity bits tested as bytes; VARCHAR columns are read the same way (decoded with
 * Buffer, not one TextDecoder call per value). Other types, and writing strings, keep node-api's
 * path. The fast paths need a little-endian host (typed-bytes.ts).
 */

import { type DuckDBDataChunk, DuckDBTimestampValue, DuckDBTypeId, type DuckDBValue } from '@duckdb/node-api';
import duckdb from '@duckdb/node-bindings';
import type { WireValue } from './column-batch.js';
import { eightByteView, LITTLE_ENDIAN_HOST } from './typed-bytes.js';

function fixedWidth(typeId: DuckDBTypeId): 'int64' | 'double' | undefined {
  if (!LITTLE_ENDIAN_HOST) return undefined;
  if (typeId === DuckDBTypeId.BIGINT || typeId === DuckDBTypeId.TIMESTAMP) return 'int64';
  if (typeId === DuckDBTypeId.DOUBLE) return 'double';
  return undefined;
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

/** A vector's validity mask (null: every value is valid), as bytes of little-endian 64-bit words. */
function validityMask(vector: duckdb.Vector, n: number): Uint8Array | null {
  return duckdb.vector_get_validity(vector, Math.ceil(n / 64) * 8) as Uint8Array | null;
}

/** A set bit marks a valid value. */
const isValid = (mask: Uint8Array, r: number) => (((mask[r >> 3] as number) >> (r & 7)) & 1) === 1;

/**
 * VARCHAR values of a vector: DuckDB's string_t is 16 bytes, a uint32 length then either the
 * bytes inline (up to 12) or a 4-byte prefix and a pointer to them.
 */
function appendStrings(vector: duckdb.Vector, n: number, mask: Uint8Array | null, target: WireValue[]): void {
  const data = duckdb.vector_get_data(vector, n * 16);
  const bytes = Buffer.from(data.buffer, data.byteOffset, n * 16);
  for (let r = 0; r < n; r++) {
    if (mask && !isValid(mask, r)) {
      target.push(null);
      continue;
    }
    const at = r * 16;
    const length = bytes.readUInt32LE(at);
    if (length <= 12) {
      target.push(length === 0 ? '' : bytes.toString('utf8', at + 4, at + 4 + length));
    } else {
      const outside = duckdb.get_data_from_pointer(data.buffer as ArrayBuffer, data.byteOffset + at + 8, length);
      target.push(Buffer.from(outside.buffer, outside.byteOffset, length).toString('utf8'));
    }
  }
}

/**
 * Calls `visit` with the UTF-8 bytes of each non-null VARCHAR value of column `i` of a result
 * chunk, as `bytes[start, end)`, and its row in the chunk: no JS string is made (a reader that only scans the bytes, like
 * the term index's key cut, skips ~0.1 µs of decoding and the garbage of a string per value).
 * The bytes are DuckDB's own memory: valid only during the call, never to be kept or written.
 * (On a big-endian host the values are decoded and encoded again: the layout below is read
 * little-endian.)
 */
export function visitChunkStrings(
  chunk: DuckDBDataChunk,
  i: number,
  visit: (bytes: Uint8Array, start: number, end: number, row: number) => void,
): void {
  const n = chunk.rowCount;
  if (n === 0) return;
  if (!LITTLE_ENDIAN_HOST) {
    chunk.getColumnValues(i).forEach((v, r) => {
      if (typeof v !== 'string') return;
      const bytes = Buffer.from(v, 'utf8');
      visit(bytes, 0, bytes.length, r);
    });
    return;
  }
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, i);
  const mask = validityMask(vector, n);
  const data = duckdb.vector_get_data(vector, n * 16);
  const view = new DataView(data.buffer, data.byteOffset, n * 16);
  for (let r = 0; r < n; r++) {
    if (mask && !isValid(mask, r)) continue;
    const at = r * 16;
    const length = view.getUint32(at, true);
    if (length <= 12) {
      visit(data, at + 4, at + 4 + length, r);
    } else {
      const outside = duckdb.get_data_from_pointer(data.buffer as ArrayBuffer, data.byteOffset + at + 8, length);
      visit(outside, 0, length, r);
    }
  }
}

/** Appends column `i` of a result chunk to `target` as wire values (TIMESTAMP as µs bigint). */
export function appendChunkColumn(chunk: DuckDBDataChunk, i: number, typeId: DuckDBTypeId, target: WireValue[]): void {
  if (LITTLE_ENDIAN_HOST && typeId === DuckDBTypeId.VARCHAR) {
    const n = chunk.rowCount;
    if (n === 0) return;
    const vector = duckdb.data_chunk_get_vector(chunk.chunk, i);
    appendStrings(vector, n, validityMask(vector, n), target);
    return;
  }
  const kind = fixedWidth(typeId);
  if (kind === undefined) {
    for (const v of chunk.getColumnValues(i)) target.push(toWire(v, typeId));
    return;
  }
  const n = chunk.rowCount;
  if (n === 0) return;
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, i);
  const data = duckdb.vector_get_data(vector, n * 8);
  const values: ArrayLike<bigint | number> =
    kind === 'int64'
      ? eightByteView(data, n, (b, o, l) => new BigInt64Array(b, o, l))
      : eightByteView(data, n, (b, o, l) => new Float64Array(b, o, l));
  const mask = validityMask(vector, n);
  if (!mask) {
    for (let r = 0; r < n; r++) target.push(values[r] as bigint | number);
    return;
  }
  for (let r = 0; r < n; r++) target.push(isValid(mask, r) ? (values[r] as bigint | number) : null);
}

/**
 * Writes wire values into column `i` of a chunk created for appending (its row count set to
 * values.length). Types without a fast path go through node-api's setColumnValues.
 */
export function setChunkColumn(chunk: DuckDBDataChunk, i: number, typeId: DuckDBTypeId, values: readonly WireValue[]): void {
  const kind = fixedWidth(typeId);
  const n = values.length;
  if (kind === undefined) {
    chunk.setColumnValues(
      i,
      typeId === DuckDBTypeId.TIMESTAMP
        ? values.map((v) => (v === null ? null : new DuckDBTimestampValue(v as bigint)))
        : (values as DuckDBValue[]),
    );
    return;
  }
  if (n === 0) return;
  const buffer = new ArrayBuffer(n * 8);
  const items = kind === 'int64' ? new BigInt64Array(buffer) : new Float64Array(buffer);
  let maskBuffer: ArrayBuffer | undefined;
  let mask: Uint8Array | undefined;
  for (let r = 0; r < n; r++) {
    const v = values[r];
    if (v === null || v === undefined) {
      if (!mask) {
        maskBuffer = new ArrayBuffer(Math.ceil(n / 64) * 8);
        mask = new Uint8Array(maskBuffer).fill(0xff);
      }
      mask[r >> 3] = (mask[r >> 3] as number) & ~(1 << (r & 7));
    } else if (kind === 'int64') {
      const big = typeof v === 'bigint' ? v : BigInt(v as number);
      if (BigInt.asIntN(64, big) !== big) throw new RangeError('bigint out of int64 range');
      (items as BigInt64Array)[r] = big;
    } else {
      (items as Float64Array)[r] = Number(v);
    }
  }
  const vector = duckdb.data_chunk_get_vector(chunk.chunk, i);
  duckdb.copy_data_to_vector(vector, 0, buffer, 0, n * 8);
  if (maskBuffer) {
    duckdb.vector_ensure_validity_writable(vector);
    duckdb.copy_data_to_vector_validity(vector, 0, maskBuffer, 0, maskBuffer.byteLength);
  }
}
