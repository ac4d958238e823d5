import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type ColumnarResult, queryResultJson, resultRows } from '../../src/query/engine.js';
import { formatDateTime } from '../../src/query/exec/result-format.js';

/** The answer written from columns must be exactly what JSON.stringify makes of the row objects. */
describe('query result JSON', () => {
  const same = (c: ColumnarResult) => assert.equal(queryResultJson(c), JSON.stringify(resultRows(c)));

  it('writes every type, nulls, hostile strings and non-finite reals exactly as JSON.stringify of the rows', () => {
    same({
      columns: [
        { name: 's', type: 'string', id: 'c0' },
        { name: 'l', type: 'long', id: 'c1' },
        { name: 'r', type: 'real', id: 'c2' },
        { name: 'b', type: 'bool', id: 'c3' },
        { name: 'd', type: 'datetime', id: 'c4' },
        { name: 't', type: 'timespan', id: 'c5' },
        { name: 'g', type: 'guid', id: 'c6' },
        { name: 'j', type: 'dynamic', id: 'c7' },
        { name: 'quote"d \\ name\u2028', type: 'string', id: 'c8' },
      ],
      values: [
        ['plain', null, '"quoted" \\ \n\t\u0000 \u2028 ünïcødé 😀', ''],
        [1n, null, -9_007_199_254_740_993n, 0n],
        [1.5, null, Number.NaN, Number.NEGATIVE_INFINITY],
        [true, null, false, true],
        [1_700_000_000_123_456n, null, -1n, 253_402_300_800_000_000n],
        [10_000_000n, null, -864_000_000_001n, 0n],
        ['6f1c5c9e-0000-4000-8000-000000000001', null, 'x', ''],
        ['{"a":[1,{"b":null}],"__proto__":{"x":1}}', null, 'not json', '"str"'],
        ['a', 'b', 'c', 'd'],
      ],
      rowCount: 4,
      truncated: false,
    });
  });

  it('writes random columns of every type exactly as JSON.stringify of the rows (property)', () => {
    const types = ['string', 'long', 'real', 'bool', 'datetime', 'timespan', 'guid', 'dynamic'] as const;
    const arbitraryOf: Record<(typeof types)[number], fc.Arbitrary<unknown>> = {
      string: fc.string({ unit: 'binary' }),
      long: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
      real: fc.oneof(fc.double(), fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, 1e21, 5e-324)),
      bool: fc.boolean(),
      datetime: fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n }),
      timespan: fc.bigInt({ min: -(2n ** 62n), max: 2n ** 62n }),
      guid: fc.uuid(),
      dynamic: fc.oneof(fc.json(), fc.string()),
    };
    const column = fc
      .constantFrom(...types)
      .chain((type) =>
        fc.record({ type: fc.constant(type), values: fc.array(fc.option(arbitraryOf[type]), { minLength: 5, maxLength: 5 }) }),
      );
    fc.assert(
      fc.property(fc.array(column, { minLength: 1, maxLength: 6 }), fc.integer({ min: 0, max: 5 }), (cols, rowCount) => {
        same({
          columns: cols.map((col, i) => ({ name: `c${i}`, type: col.type, id: `c${i}` })),
          values: cols.map((col) => col.values),
          rowCount,
          truncated: false,
        });
      }),
      { numRuns: 300 },
    );
  });

  it('writes repeated and distinct strings and DateTimes exactly, whether their texts are reused or not', () => {
    // Repeats from the start (texts reused, past the memo's size cap), distinct values from the
    // start (reuse dropped after the sample) and then repeats, and nulls among repeats.
    const repeatsFirst = Array.from({ length: 6_000 }, (_, r) => (r < 300 ? r % 10 : r < 5_300 ? r : r % 17));
    const distinctFirst = Array.from({ length: 1_000 }, (_, r) => (r < 400 ? r : r % 3));
    for (const keys of [repeatsFirst, distinctFirst]) {
      same({
        columns: [
          { name: 'host', type: 'string', id: 'c0' },
          { name: 'bin', type: 'datetime', id: 'c1' },
          { name: 'n', type: 'long', id: 'c2' },
        ],
        values: [
          keys.map((k) => (k % 7 === 6 ? null : `host "${k}" ü`)),
          keys.map((k) => (k % 11 === 10 ? null : 1_700_000_000_000_000n + BigInt(k) * 300_000_000n)),
          keys.map((_, r) => BigInt(r)),
        ],
        rowCount: keys.length,
        truncated: false,
      });
    }
  });

  it('keeps only rowCount rows, the truncated flag and the render hint', () => {
    same({
      columns: [{ name: 'n', type: 'long', id: 'c0' }],
      values: [[1n, 2n, 3n]],
      rowCount: 2,
      truncated: true,
      render: { chartType: 'timechart', options: { title: 'x "y"' } },
    });
  });

  it('handles no columns, no rows, repeated and __proto__ column names', () => {
    same({ columns: [], values: [], rowCount: 0, truncated: false });
    same({ columns: [{ name: 'n', type: 'long', id: 'c0' }], values: [[]], rowCount: 0, truncated: false });
    same({
      columns: [
        { name: 'n', type: 'long', id: 'c0' },
        { name: 'n', type: 'string', id: 'c1' },
        { name: '__proto__', type: 'long', id: 'c2' },
      ],
      values: [[1n], ['x'], [2n]],
      rowCount: 1,
      truncated: false,
    });
  });

  it('formats DateTime the same on both sides of the safe-integer range and across day boundaries', () => {
    const day = 86_400_000_000n;
    const cases: [bigint, string][] = [
      [0n, '1970-01-01T00:00:00.0000000Z'],
      [-1n, '1969-12-31T23:59:59.9999990Z'],
      [day - 1n, '1970-01-01T23:59:59.9999990Z'],
      [19_000n * day, '2022-01-08T00:00:00.0000000Z'],
      [1_708_501_800_000_001n, '2024-02-21T07:50:00.0000010Z'],
      [9_007_199_254_740_991n, '2255-06-05T23:47:34.7409910Z'],
      [9_007_199_254_740_992n, '2255-06-05T23:47:34.7409920Z'],
      [-9_007_199_254_740_992n, '1684-07-28T00:12:25.2590080Z'],
    ];
    for (const [us, text] of cases) assert.equal(formatDateTime(us), text, String(us));
  });
});
