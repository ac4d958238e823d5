import assert from 'node:assert/strict';
import fc from 'fast-check';
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

  it('round-trips random columns of every type (property)', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const column = (type: WireType): fc.Arbitrary<ColumnBatch['columns'][number]> => {
      const value: fc.Arbitrary<ColumnBatch['columns'][number][number]> =
        type === 'VARCHAR'
          ? fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('web-01', 'GET', ''))
          : type === 'DOUBLE'
            ? fc.double()
            : type === 'BOOLEAN'
              ? fc.boolean()
              : int64;
      return fc.array(fc.option(value, { nil: null }), { minLength: 40, maxLength: 40 });
    };
    const types: WireType[] = ['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'TIMESTAMP'];
    fc.assert(
      fc.property(fc.tuple(...types.map(column)), (columns) => {
        const batch: ColumnBatch = { rowCount: 40, columns };
        // Lone surrogates cannot be UTF-8: they travel as U+FFFD, as Buffer.from would make them.
        const expected = columns.map((c, i) =>
          types[i] === 'VARCHAR' ? c.map((v) => (v === null ? null : Buffer.from(v as string).toString())) : c,
        );
        assert.deepEqual(decodeBatch(encodeBatch(batch, types), types).columns, expected);
      }),
      { numRuns: 200 },
    );
  });

  it('keeps byte offsets right for non-ASCII and split surrogate pairs', () => {
    const values = ['Ł', 'a', '\ud83d', '\udca5', 'ünï', 'x'];
    const decoded = decodeBatch(encodeBatch({ rowCount: 6, columns: [values] }, ['VARCHAR']), ['VARCHAR']);
    assert.deepEqual(decoded.columns[0], ['Ł', 'a', '\ufffd', '\ufffd', 'ünï', 'x']);
  });

  it('decodes numbers from buffers at any byte offset (protobuf slices)', () => {
    const enc = encodeBatch(
      {
        rowCount: 3,
        columns: [
          [1n, null, -7n],
          [0.5, -0, null],
        ],
      },
      ['BIGINT', 'DOUBLE'],
    );
    const shifted = (b: Buffer) => {
      const backing = Buffer.alloc(b.length + 3);
      b.copy(backing, 3);
      return backing.subarray(3);
    };
    const columns = enc.columns.map((c) => ({
      ...c,
      int64Values: shifted(c.int64Values),
      doubleValues: shifted(c.doubleValues),
    }));
    assert.deepEqual(decodeBatch({ rowCount: 3, columns }, ['BIGINT', 'DOUBLE']).columns, [
      [1n, null, -7n],
      [0.5, -0, null],
    ]);
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
