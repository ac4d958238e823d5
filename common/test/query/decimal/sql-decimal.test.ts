/**
 * SqlDecimal's rules (decision 0031) on values, without DuckDB: what Parse and the double
 * conversion make of their input (precision and scale included), rounding and integer parts, and
 * the cell form whose string order must be the values' order. Expected values are hand-written
 * from SqlDecimal's source rules; the properties compare with BigInt on scaled integers.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { DECIMAL_KEY_LENGTH, decodeDecimal, encodeDecimal } from '../../../src/query/decimal/decimal-cell.js';
import * as D from '../../../src/query/decimal/sql-decimal.js';

/** [text, precision, scale] or undefined, as Parse reads `input`. */
function parsed(input: string): [string, number, number] | undefined {
  const v = D.parse(input);
  return v ? [D.toText(v), v.precision, v.scale] : undefined;
}

describe('SqlDecimal values (decision 0031)', () => {
  it('Parse: precision the digits written, scale the digits after the point, leading zeros dropped', () => {
    assert.deepEqual(parsed('1.50'), ['1.50', 3, 2]);
    assert.deepEqual(parsed('0.01'), ['0.01', 2, 2]);
    assert.deepEqual(parsed('00012'), ['12', 2, 0]);
    assert.deepEqual(parsed('0.'), ['0.0', 1, 1]);
    assert.deepEqual(parsed('5.'), ['5', 1, 0]);
    assert.deepEqual(parsed('.5'), ['0.5', 1, 1]);
    assert.deepEqual(parsed('  -0.00 '), ['0.00', 2, 2]);
    assert.deepEqual(parsed('+7'), ['7', 1, 0]);
    assert.deepEqual(parsed('9'.repeat(38)), ['9'.repeat(38), 38, 0]);
    for (const bad of ['', ' ', '.', '-', '1e5', '1.2.3', '\t1', 'abc', '9'.repeat(39), '--1', '1,5'])
      assert.equal(D.parse(bad), undefined, JSON.stringify(bad));
  });

  it('the literal form reads an exponent into the scale', () => {
    const lit = (t: string) => {
      const v = D.parseLiteral(t);
      return v ? [D.toText(v), v.precision, v.scale] : undefined;
    };
    assert.deepEqual(lit('1e5'), ['100000', 6, 0]);
    assert.deepEqual(lit('1.5e3'), ['1500', 4, 0]);
    assert.deepEqual(lit('1.5e-3'), ['0.0015', 4, 4]);
    assert.deepEqual(lit('-2E+2'), ['-200', 3, 0]);
    assert.equal(D.parseLiteral('1e40'), undefined);
  });

  it('SqlDecimal(double): 17 significant digits', () => {
    const d = (x: number) => {
      const v = D.fromDouble(x);
      return v ? [D.toText(v), v.precision, v.scale] : undefined;
    };
    assert.deepEqual(d(2.2), ['2.2000000000000002', 17, 16]);
    assert.deepEqual(d(0.5), ['0.50000000000000000', 17, 17]);
    assert.deepEqual(d(-1.25), ['-1.2500000000000000', 17, 16]);
    assert.deepEqual(d(0), ['0.00000000000000000', 17, 17]);
    // 1e20 + 12345 is the double 100000000000000016384: 21 digits rounded to 17.
    assert.deepEqual(d(1e20 + 12345), ['100000000000000020000', 21, 0]);
    for (const x of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1e38, -2e38])
      assert.equal(D.fromDouble(x), undefined);
  });

  it('Round keeps the scale; Floor and Ceiling give scale 0; ToDouble and the integer part', () => {
    const t = (v: D.SqlDecimal | undefined) => (v ? D.toText(v) : undefined);
    const p = (s: string) => D.parse(s) as D.SqlDecimal;
    assert.equal(t(D.round(p('1.2345'), 2)), '1.2300');
    assert.equal(t(D.round(p('1.2355'), 3)), '1.2360');
    assert.equal(t(D.round(p('-2.5'), 0)), '-3.0');
    assert.equal(t(D.round(p('1234.5'), -2)), '1200.0');
    assert.equal(t(D.round(p('1234.5'), -5)), '0.0');
    assert.equal(t(D.round(p('1.5'), 4)), '1.5');
    assert.equal(t(D.floor(p('-1.5'))), '-2');
    assert.equal(t(D.floor(p('-1.0'))), '-1');
    assert.equal(t(D.ceiling(p('-1.5'))), '-1');
    assert.equal(t(D.ceiling(p('0.001'))), '1');
    assert.equal(D.toDouble(p('0.1')), 0.1);
    assert.equal(D.toDouble(p('-1234.5678')), -1234.5678);
    assert.equal(D.toBigInt(p('-2.7')), -2n);
    assert.equal(D.toBigInt(p('99999999999999999999')), undefined);
    assert.equal(D.sign(p('-0.0')), 0);
  });

  it('cells: string order is value order, the key is equal exactly for equal values, and they decode back', () => {
    const value = fc
      .tuple(fc.bigInt({ min: -(10n ** 38n) + 1n, max: 10n ** 38n - 1n }), fc.integer({ min: 0, max: 38 }))
      .map(([m, s]) => D.make(m < 0n, m < 0n ? -m : m, 0, s) as D.SqlDecimal);
    fc.assert(
      fc.property(value, value, (a, b) => {
        const ca = encodeDecimal(a);
        const cb = encodeDecimal(b);
        const byValue = D.compare(a, b);
        const ka = ca.slice(0, DECIMAL_KEY_LENGTH);
        const kb = cb.slice(0, DECIMAL_KEY_LENGTH);
        assert.equal(Math.sign(ka < kb ? -1 : ka > kb ? 1 : 0), byValue);
        // Exact: a / 10^sa vs b / 10^sb with BigInt.
        const x = (a.negative ? -a.magnitude : a.magnitude) * 10n ** BigInt(b.scale);
        const y = (b.negative ? -b.magnitude : b.magnitude) * 10n ** BigInt(a.scale);
        assert.equal(byValue, x < y ? -1 : x > y ? 1 : 0);
        const back = decodeDecimal(ca) as D.SqlDecimal;
        assert.deepEqual(back, a);
      }),
      { numRuns: 1000 },
    );
    // Equal values of other scales share the key.
    const k = (s: string) => encodeDecimal(D.parse(s) as D.SqlDecimal).slice(0, DECIMAL_KEY_LENGTH);
    assert.equal(k('1.5'), k('1.50000'));
    assert.equal(k('-0.0'), k('0'));
    assert.ok(k('-2') < k('-1.99') && k('-1.99') < k('0') && k('0') < k('0.00000000000000000000000000000000000001'));
    assert.equal(decodeDecimal('not a cell'), undefined);
  });
});
