/**
 * Byte buffers as 8-byte typed arrays, for the query paths that move whole columns (column-batch.ts
 * on the wire, chunk-columns.ts to and from DuckDB vectors). Typed arrays use the host's byte order;
 * the wire and DuckDB's validity mask are little-endian, so those fast paths are taken only on a
 * little-endian host (every platform Node supports today; the per-value paths remain otherwise).
 */
import { endianness } from 'node:os';

export const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** The first `n` 8-byte elements of `bytes`, viewed in place when aligned, else copied. */
export function eightByteView<T>(
  bytes: Uint8Array,
  n: number,
  make: (buffer: ArrayBufferLike, byteOffset: number, length: number) => T,
): T {
  if (bytes.byteOffset % 8 === 0) return make(bytes.buffer, bytes.byteOffset, n);
  const copy = new Uint8Array(n * 8);
  copy.set(bytes.subarray(0, n * 8));
  return make(copy.buffer, 0, n);
}
