import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { type ColumnBatch, decodeBatch, encodeBatch, type WireType } from '../../src/query/column-batch.js';

describe('query column batches', () => {
  it('round-trips every wire type with nulls', () => {
    const types: WireType[] = ['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'TIMESTAMP'];
    const batch: ColumnBatch = {
      rowCount: 5,
      columns: [
        ['a', '', null, 'ünïcødé 💥', 'x'.repeat(1000)],
        [0n, -(2n ** 63n), 2n ** 63n - 1n, null, 42n],
        [1.5, Number.NaN, Number.POSITIVE_INFINITY, null, -0.1],
        [true, false, null, true, false],
        [0n, 1_700_000_000_000_000n, null, -62135596800000000n, 253402300799999999n],
      ],
    };
    const decoded = decodeBatch(encodeBatch(batch, types), types);
    assert.deepEqual(decoded, batch);
  });

  it('sends no null bitmap when nothing is null', () => {
    const enc = encodeBatch({ rowCount: 2, columns: [[1n, 2n]] }, ['BIGINT']);
    assert.equal(enc.columns[0]?.nulls.length, 0);
    assert.equal(enc.columns[0]?.int64Values.length, 16);
  });

  it('refuses malformed batches', () => {
    const enc = encodeBatch({ rowCount: 2, columns: [[1n, 2n]] }, ['BIGINT']);
    assert.throws(() => decodeBatch({ rowCount: 3, columns: enc.columns }, ['BIGINT']), /int64 values/);
    assert.throws(() => decodeBatch(enc, ['BIGINT', 'BIGINT']), /columns received/);
    const s = encodeBatch({ rowCount: 1, columns: [['abc']] }, ['VARCHAR']);
    (s.columns[0] as { stringOffsets: Buffer }).stringOffsets.writeUInt32LE(99, 4);
    assert.throws(() => decodeBatch(s, ['VARCHAR']), /out of range/);
  });
});
