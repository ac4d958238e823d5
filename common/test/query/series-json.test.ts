/**
 * The series JSON reader and writer: element types survive a round trip (a real stays a real),
 * anything that is not a number reads as null without breaking the element count, and DuckDB's
 * non-finite tokens read back as numbers.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { placeOnAxis, readSeries, readSeriesOrScalar, writeSeries } from '../../src/query/series-json.js';

describe('series JSON', () => {
  it('reads numbers with their type, other elements as null, and keeps the element count', () => {
    const got = readSeries('[1, 2.0, -3e2, "a,b", [4, 5], {"x": [6, "]"]}, null, true, NaN, -Infinity]');
    assert.deepEqual(
      got?.map((e) => [e.v, e.real]),
      [
        [1, false],
        [2, true],
        [-300, true],
        [null, false],
        [null, false],
        [null, false],
        [null, false],
        [null, false],
        [Number.NaN, true],
        [Number.NEGATIVE_INFINITY, true],
      ],
    );
    assert.deepEqual(readSeries('[]'), []);
    assert.deepEqual(readSeries(' [ 7 ] ')?.length, 1);
    assert.equal(readSeries('{"a": 1}'), undefined);
    assert.equal(readSeries(null), undefined);
    assert.deepEqual(readSeriesOrScalar('2.5'), { v: 2.5, real: true });
    assert.equal(readSeriesOrScalar('"x"'), undefined);
  });

  it('places values at their offsets, copied as written, the default elsewhere, and ignores offsets past the end', () => {
    assert.equal(placeOnAxis('[0,2,5]', '[1.50,{"a":1},7]', 4, '0'), '[1.50,0,{"a":1},0]');
    assert.equal(placeOnAxis('[1]', '[null]', 3, null), '[null,null,null]');
    assert.equal(placeOnAxis('[]', '[]', 0, '0'), '[]');
  });

  it('writes reals with a fraction and longs without, so a round trip keeps each type', () => {
    assert.equal(
      writeSeries([{ v: 2, real: true }, { v: 2, real: false }, null, true, { v: Number.POSITIVE_INFINITY, real: true }]),
      '[2.0,2,null,true,Infinity]',
    );
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer().map((v) => ({ v, real: false })),
            fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => ({ v, real: true })),
            fc.constant(null),
          ),
        ),
        (values) => {
          const text = writeSeries(values);
          const back = readSeries(text);
          assert.deepEqual(
            back?.map((e) => (e.v === null ? null : { v: Object.is(e.v, -0) ? 0 : e.v, real: e.real })),
            values.map((e) => (e === null ? null : { v: Object.is(e.v, -0) ? 0 : e.v, real: e.real })),
          );
          // Kusto's readers see valid JSON for finite values.
          JSON.parse(text);
        },
      ),
    );
  });
});
