/**
 * Chunk columns: the fast array path (BIGINT, TIMESTAMP, DOUBLE through the C API's vector data
 * and validity mask) must write and read exactly what node-api's per-value path does.
 */
import assert from 'node:assert/strict';
import { BIGINT, BOOLEAN, DOUBLE, DuckDBDataChunk, type DuckDBType, TIMESTAMP, VARCHAR } from '@duckdb/node-api';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { appendChunkColumn, setChunkColumn } from '../../src/query/chunk-columns.js';
import type { WireType, WireValue } from '../../src/query/column-batch.js';
import { memoryDuckDB } from '../../src/testing/index.js';

const TYPES: Record<WireType, DuckDBType> = { BIGINT, TIMESTAMP, DOUBLE, VARCHAR, BOOLEAN };
const ORDER: WireType[] = ['BIGINT', 'TIMESTAMP', 'DOUBLE', 'VARCHAR', 'BOOLEAN'];

const value = (t: WireType): fc.Arbitrary<WireValue> => {
  switch (t) {
    case 'BIGINT':
      return fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    case 'TIMESTAMP':
      // DuckDB's TIMESTAMP range (µs), without its infinity sentinels.
      return fc.bigInt({ min: -9223372022400000000n, max: 9223372036854775806n });
    case 'DOUBLE':
      return fc.double();
    case 'VARCHAR':
      // Short strings sit inline in DuckDB's string_t (up to 12 bytes), longer ones behind a pointer.
      return fc.oneof(fc.string(), fc.string({ minLength: 10, maxLength: 60, unit: 'grapheme' }));
    case 'BOOLEAN':
      return fc.boolean();
  }
};

describe('query chunk columns', () => {
  const db = memoryDuckDB();
  let table = 0;

  /** Appends the columns with setChunkColumn, reads them back with appendChunkColumn. */
  async function roundTrip(columns: WireValue[][]): Promise<WireValue[][]> {
    const name = `t${table++}`;
    await db.conn.run(`CREATE TABLE ${name} (${ORDER.map((t, i) => `c${i} ${t}`).join(', ')})`);
    const appender = await db.conn.createAppender(name);
    const rows = columns[0]?.length ?? 0;
    for (let start = 0; start < rows; start += 2048) {
      const end = Math.min(rows, start + 2048);
      const chunk = DuckDBDataChunk.create(
        ORDER.map((t) => TYPES[t]),
        end - start,
      );
      ORDER.forEach((t, i) => {
        setChunkColumn(chunk, i, TYPES[t].typeId, (columns[i] as WireValue[]).slice(start, end));
      });
      appender.appendDataChunk(chunk);
    }
    appender.flushSync();
    appender.closeSync();
    const result = await db.conn.run(`SELECT * FROM ${name}`);
    const out: WireValue[][] = ORDER.map(() => []);
    const typeIds = result.columnTypes().map((t) => t.typeId);
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      typeIds.forEach((id, i) => {
        appendChunkColumn(chunk, i, id, out[i] as WireValue[]);
      });
    }
    return out;
  }

  it('round-trips extremes and nulls of every wire type', async () => {
    const columns: WireValue[][] = [
      [0n, -(2n ** 63n), 2n ** 63n - 1n, null, 42n],
      [0n, 1_700_000_000_000_000n, null, -62135596800000000n, 253402300799999999n],
      [1.5, Number.NaN, Number.POSITIVE_INFINITY, null, -0],
      ['a', '', null, 'ünïcødé 💥', 'x'.repeat(100)],
      [true, false, null, true, false],
    ];
    assert.deepEqual(await roundTrip(columns), columns);
  });

  it('keeps every null in place across validity words and chunks (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 1, max: 5000 })
          .chain((rows) =>
            fc.tuple(
              ...ORDER.map((t) => fc.array(fc.option(value(t), { nil: null, freq: 3 }), { minLength: rows, maxLength: rows })),
            ),
          ),
        async (columns) => {
          assert.deepEqual(await roundTrip(columns), columns);
        },
      ),
      { numRuns: 15 },
    );
  });

  it('refuses integers outside int64', () => {
    const chunk = DuckDBDataChunk.create([BIGINT], 1);
    assert.throws(() => setChunkColumn(chunk, 0, BIGINT.typeId, [2n ** 63n]), /int64 range/);
  });
});
