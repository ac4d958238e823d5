/**
 * Kusto's decimal (SqlDecimal; decision 0031). Expected values are written by hand from SqlDecimal's
 * rules (the precision and scale of each result, truncated quotients, rounding half away from zero)
 * or, for the long products, from Python's decimal module — never by the implementation. `print`
 * runs in the gateway's merge database; queries over Logs run on one worker and on three
 * (fixture.run checks they agree digit for digit).
 */
import assert from 'node:assert/strict';
import { sqlDecimal } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

const one = async (q: string) => {
  const r = await run(q);
  assert.equal(r.results.length, 1);
  return r.results[0] as Record<string, unknown>;
};

const NINES38 = '9'.repeat(38);

describe('decimal (SqlDecimal)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('literals keep their digits and scale; the result type is Decimal with text values', async () => {
    const r = await run(
      `print a = decimal(1.50), b = decimal(1e5), c = decimal(null), d = decimal(-0.0), e = decimal(1.5e-3), f = decimal(0.01), g = decimal(${NINES38})`,
    );
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['Decimal', 'Decimal', 'Decimal', 'Decimal', 'Decimal', 'Decimal', 'Decimal'],
    );
    assert.deepEqual(r.results[0], { a: '1.50', b: '100000', c: null, d: '0.0', e: '0.0015', f: '0.01', g: NINES38 });
  });

  it('refuses a literal of more than 38 digits', async () => {
    await assert.rejects(run(`print decimal(${NINES38}9)`), /decimal literal/);
  });

  it('0.1 + 0.2 is 0.3 exactly; 1/3 is 0.333333; sums, products and quotients by SqlDecimal', async () => {
    const r = await one(`print s = decimal(0.1) + decimal(0.2), q = decimal(1) / decimal(3), q2 = decimal(2.00000) / decimal(3),
      p = decimal(1.5) * decimal(1.25), d = decimal(1.50) - decimal(2), n = -decimal(1.50), z = decimal(1) / decimal(0),
      t = decimal(1.5) + decimal(1.5), neg = decimal(-2) / decimal(3), nz = -decimal(0), eq = decimal(0.1) + decimal(0.2) == decimal(0.3)`);
    assert.deepEqual(r, {
      s: '0.3',
      q: '0.333333',
      q2: '0.6666666',
      p: '1.875',
      d: '-0.50',
      n: '-1.50',
      z: null,
      t: '3.0',
      neg: '-0.666666',
      nz: '0',
      eq: true,
    });
  });

  it('38-digit boundaries: overflow is null; the scale is cut past 38 digits, not below 6', async () => {
    const r = await one(`print
      over = decimal(${NINES38}) + decimal(1),
      fits = decimal(${NINES38}) - decimal(1),
      pcut = decimal(1234567890.1234567890) * decimal(1234567890.1234567890),
      pmin = decimal(1234567890123456.123456) * decimal(12345678901234567.12),
      pover = decimal(12345678901234567890.123456) * decimal(12345678901234567890.123456),
      qcut = decimal(100000000000000000000000000000) / decimal(3000000000),
      qover = decimal(100000000000000000000000000000000000) / decimal(3000000000)`);
    assert.deepEqual(r, {
      over: null,
      fits: `${'9'.repeat(37)}8`,
      // scale 20 → 17 (38 digits hold 21 integer digits), rounded half away from zero
      pcut: '1524157875323883675.01905199875019052',
      // scale 8 would leave 4; kept at 6
      pmin: '15241578753238827582980725949181.438367',
      // 39 integer digits
      pover: null,
      // scale max(0 + 10 + 1, 6) = 11, cut to 8 for the 30 integer digits
      qcut: '33333333333333333333.33333333',
      // scale 6 kept for 36 integer digits: the dividend needs 42 digits
      qover: null,
    });
  });

  it('mixes with long and real: the other operand converts as todecimal does', async () => {
    const r = await one(
      'print a = decimal(1.5) + 2, b = 2 * decimal(1.5), c = decimal(1.5) * 2.2, d = decimal(1.5) == 1.5, e = decimal(7) / 2, f = 1 - decimal(0.25)',
    );
    // 2.2 as SqlDecimal(double) is 2.2000000000000002 (17 digits); 1.5 × that has scale 17.
    assert.deepEqual(r, { a: '3.5', b: '3.0', c: '3.30000000000000030', d: true, e: '3.500000', f: '0.75' });
  });

  it('todecimal: SqlDecimal.Parse for text, scale 0 for longs, 17 digits for reals, null when it does not convert', async () => {
    const r = await one(`print
      s = todecimal("1.50"), e = todecimal(""), bad = todecimal("abc"), sp = todecimal(" 12 "), ex = todecimal("1e5"), two = todecimal("1.2.3"),
      l = todecimal(-5), r = todecimal(2.2), h = todecimal(0.5), t = todecimal(true), f = todecimal(false),
      nan = todecimal(real(nan)), inf = todecimal(real(+inf)), big = todecimal(1e40), n = todecimal(long(null)), z = todecimal("-0.00"),
      d = todecimal(dynamic(12.25)), same = todecimal(decimal(3.10))`);
    assert.deepEqual(r, {
      s: '1.50',
      e: null,
      bad: null,
      sp: '12',
      ex: null,
      two: null,
      l: '-5',
      r: '2.2000000000000002',
      h: '0.50000000000000000',
      t: '1',
      f: '0',
      nan: null,
      inf: null,
      big: null,
      n: null,
      z: '0.00',
      d: '12.25',
      same: '3.10',
    });
  });

  it('comparisons by value: ==, <, in, between, iff and coalesce', async () => {
    const r = await one(`print
      eq = decimal(1.5) == decimal(1.50), ne = decimal(1.5) != decimal(1.50), lt = decimal(1.5) < 2, gt = decimal(-1) > decimal(-1.01),
      inl = decimal(1.50) in (decimal(1.5), decimal(2)), notin = decimal(3) !in (decimal(3.000)), btw = decimal(2.5) between (2 .. 3),
      nul = decimal(null) == decimal(1), i = iff(true, decimal(1.50), 2), c = coalesce(decimal(null), decimal(4.0)), cs = case(false, 1, decimal(2.25))`);
    assert.deepEqual(r, {
      eq: true,
      ne: false,
      lt: true,
      gt: true,
      inl: true,
      notin: false,
      btw: true,
      nul: false,
      i: '1.50',
      c: '4.0',
      cs: '2.25',
    });
  });

  it('round, abs, floor, ceiling, bin, sign, tostring and the to* conversions', async () => {
    const r = await one(`print
      r2 = round(decimal(1.2345), 2), r0 = round(decimal(-2.5)), rn = round(decimal(1234.5), -2), a = abs(decimal(-1.50)),
      fl = floor(decimal(-1.5)), ce = ceiling(decimal(1.2)), fi = floor(decimal(2.0)), b = bin(decimal(7.5), decimal(2.0)), bn = bin(decimal(-0.5), 1),
      sg = sign(decimal(-3.2)), s = tostring(decimal(1.50)), l = tolong(decimal(-2.7)), i = toint(decimal(3.9)), d = todouble(decimal(0.1)),
      re = toreal(decimal(-1.25)), ty = gettype(decimal(1)), bo = tobool(decimal(0.0))`);
    assert.deepEqual(r, {
      r2: '1.2300',
      r0: '-3.0',
      rn: '1200.0',
      a: '1.50',
      fl: '-2',
      ce: '2',
      fi: '2',
      b: '6.0',
      bn: '-1',
      sg: -1,
      s: '1.50',
      l: -2,
      i: 3,
      d: 0.1,
      re: -1.25,
      ty: 'decimal',
      bo: false,
    });
  });

  it('toscalar of a decimal, and strings of decimals', async () => {
    const r = await one(
      'let m = toscalar(datatable(d: decimal) [decimal(2.50), decimal(-1)] | summarize max(d)); print t = m * 2, s = strcat("x=", m), h = m has "2.50"',
    );
    // 2.50 (p3 s2) × 2 (p1 s0): scale 2.
    assert.deepEqual(r, { t: '5.00', s: 'x=2.50', h: true });
  });

  it('refuses % on decimals, saying why', async () => {
    await assert.rejects(run('print decimal(5) % 2'), /no remainder operator/);
  });

  it('datatable, parse and query parameters take the type decimal', async () => {
    const dt = await run('datatable(d: decimal, n: long) [decimal(1.50), 1, decimal(2), 2] | extend t = d * 2 | order by n asc', {
      ordered: true,
    });
    assert.deepEqual(dt.columns[0], { name: 'd', type: 'Decimal' });
    assert.deepEqual(dt.results, [
      { d: '1.50', n: 1, t: '3.00' },
      { d: '2', n: 2, t: '4' },
    ]);
    const parsed = await one('print s = "price=12.340;" | parse s with "price=" p: decimal ";" | project p');
    assert.deepEqual(parsed, { p: '12.340' });
    const params = await one('declare query_parameters(a: decimal, b: decimal); print s = a + b').catch(() => undefined);
    assert.equal(params, undefined, 'parameters without values must not run');
    const withValues = await run('declare query_parameters(a: decimal, b: decimal); print s = a + b', {
      parameters: new Map<string, unknown>([
        ['a', '0.10'],
        ['b', 0.2],
      ]),
    });
    assert.deepEqual(withValues.results, [{ s: '0.30' }]);
  });

  it('decimals in dynamic values are JSON strings of their text, read back exactly', async () => {
    const big = '12345678901234567890.123456789';
    const r = await one(
      `print p = bag_pack("a", decimal(1.50)), l = pack_array(decimal(2.25), decimal(-1)), back = todecimal(bag_pack("b", decimal(${big})).b)`,
    );
    assert.deepEqual(r, { p: { a: '1.50' }, l: ['2.25', '-1'], back: big });
    const listed = await run(
      'datatable(d: decimal, g: long) [decimal(1.5), 1, decimal(1.50), 1, decimal(3), 1] | summarize l = make_list(d), s = make_set(d) by g | project l, s',
      { unorderedLists: true },
    );
    assert.deepEqual(
      listed.results.map((x) => [[...(x.l as string[])].sort(), [...(x.s as string[])].sort()]),
      [
        [
          ['1.5', '1.50', '3'],
          ['1.5', '3'],
        ],
      ],
    );
    const expanded = await run(`print d = dynamic(["1.50", 2]) | mv-expand d to typeof(decimal) | extend t = d * 2`, {
      ordered: true,
    });
    assert.deepEqual(expanded.results, [
      { d: '1.50', t: '3.00' },
      { d: '2', t: '4' },
    ]);
  });

  it('over Logs: where, sort, top, min, max, sum and avg agree on one worker and three', async () => {
    // latencyMs / 7 as decimals: scale 6 quotients, computed on the workers.
    const base = 'Logs | where isnotnull(latencyMs) | extend d = todecimal(latencyMs) / decimal(7)';
    const sorted = await run(`${base} | sort by d desc, id asc | take 5 | project d`, { ordered: true });
    const expected = LOGS.filter((l) => l.latencyMs !== null)
      .map((l) => l.latencyMs as number)
      .sort((a, b) => b - a)
      .slice(0, 5);
    // Quotient scale max(0 + 1 + 1, 6) = 6, truncated: an independent BigInt division.
    const sixPlaces = (n: number) => scaledText((BigInt(n) * 1_000_000n) / 7n, 6);
    assert.deepEqual(
      sorted.results.map((x) => x.d),
      expected.map(sixPlaces),
    );
    const values = LOGS.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs as number);
    const agg = await one(`${base} | summarize s = sum(d), a = avg(d), lo = min(d), hi = max(d), n = count()`);
    // sum: exact sum of the 6-place quotients, scale 6.
    const total = values.reduce((acc, v) => acc + (BigInt(v) * 1_000_000n) / 7n, 0n);
    const asText = (q: bigint) => scaledText(q, 6);
    assert.equal(agg.s, asText(total));
    // avg: that sum over the count, scale max(6, 6), truncated.
    assert.equal(agg.a, asText(total / BigInt(values.length)));
    assert.equal(agg.lo, sixPlaces(Math.min(...values)));
    assert.equal(agg.hi, sixPlaces(Math.max(...values)));
    // Comparisons on the workers (the fragment check lets the key through): d > 100 and d != 200.
    const filtered = await one(`${base} | where d > decimal(100) and d != decimal(200.000000) | summarize n = count()`);
    const q = (v: number) => (BigInt(v) * 1_000_000n) / 7n;
    assert.equal(filtered.n, values.filter((v) => q(v) > 100_000_000n && q(v) !== 200_000_000n).length);
    const top = await run(`${base} | top 3 by d asc | project d`, { ordered: true });
    assert.deepEqual(
      top.results.map((x) => x.d),
      [...values]
        .sort((a, b) => a - b)
        .slice(0, 3)
        .map(sixPlaces),
    );
  });

  it('over Logs: groups, joins and dcount by value whatever the scale, on one worker and three', async () => {
    // Even latencies give scale 0, odd ones scale 2: the same three values 0, 1 and 2 either way.
    const keyed =
      'Logs | where isnotnull(latencyMs) | extend k = iff(latencyMs % 2 == 0, todecimal(latencyMs % 3), todecimal(latencyMs % 3) * decimal(1.00))';
    const g = await run(`${keyed} | summarize n = count(), dk = dcount(k) by k | order by k asc`, { ordered: true });
    const values = LOGS.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs as number);
    const mod3 = (v: number) => ((v % 3) + 3) % 3;
    assert.deepEqual(
      g.results,
      [0, 1, 2].map((k) => ({ k: String(k), n: values.filter((v) => mod3(v) === k).length, dk: 1 })),
    );
    const j = await run(
      `${keyed} | join kind=inner (datatable(k: decimal, name: string) [decimal(1.0), "one"]) on k | summarize n = count() by name`,
    );
    assert.deepEqual(j.results, [{ name: 'one', n: values.filter((v) => mod3(v) === 1).length }]);
  });

  it("the forms Kusto's decimal pages show: literals and todecimal of text", async () => {
    const r = await one(
      'print a = decimal(1.0), b = decimal(0.1), c = decimal(1e5), n = decimal(null), t = todecimal("123.45678"), same = todecimal("123.45678") == decimal(123.45678)',
    );
    assert.deepEqual(r, { a: '1.0', b: '0.1', c: '100000', n: null, t: '123.45678', same: true });
  });

  it('groups, joins and counts distinct by value: 1.5 and 1.50 are one key', async () => {
    const g = await run(
      'datatable(d: decimal) [decimal(1.5), decimal(1.50), decimal(2), decimal(2.000), decimal(null)] | summarize n = count() by d | order by d asc',
      { ordered: true },
    );
    assert.deepEqual(g.results, [
      { d: null, n: 1 },
      { d: '1.5', n: 2 },
      { d: '2', n: 2 },
    ]);
    const dc = await one('datatable(d: decimal) [decimal(1.5), decimal(1.50), decimal(2)] | summarize n = dcount(d)');
    assert.deepEqual(dc, { n: 2 });
    const j = await run(
      'datatable(k: decimal, a: string) [decimal(1.5), "x"] | join kind=inner (datatable(k: decimal, b: string) [decimal(1.50), "y"]) on k | project a, b',
    );
    assert.deepEqual(j.results, [{ a: 'x', b: 'y' }]);
  });

  it('aggregates: sum and avg at the largest scale, exact; sumif; empty and overflowing sums are null; arg_max, stdev, percentile', async () => {
    const t = 'datatable(d: decimal, s: string) [decimal(1.5), "a", decimal(-3), "b", decimal(2.25), "c", decimal(4), "d"]';
    const r = await one(
      `${t} | summarize sm = sum(d), av = avg(d), si = sumif(d, d > 0), mx = arg_max(d, s), sd = stdev(d), p = percentile(d, 50), v = variance(d)`,
    );
    // 1.5 - 3 + 2.25 + 4 = 4.75 at scale 2; avg 4.75 / 4 = 1.1875 at scale 6.
    assert.equal(r.sm, '4.75');
    assert.equal(r.av, '1.187500');
    assert.equal(r.si, '7.75');
    assert.equal(r.mx, '4');
    assert.equal(r.s, 'd');
    const reals = [1.5, -3, 2.25, 4];
    const mean = reals.reduce((a, b) => a + b, 0) / reals.length;
    const variance = reals.reduce((a, b) => a + (b - mean) ** 2, 0) / (reals.length - 1);
    assert.ok(Math.abs((r.v as number) - variance) < 1e-12, String(r.v));
    assert.ok(Math.abs((r.sd as number) - Math.sqrt(variance)) < 1e-12, String(r.sd));
    // Nearest rank of 4 values at 50: the 2nd smallest.
    assert.equal(r.p, 1.5);
    const empty = await one(`${t} | where d > 100 | summarize sm = sum(d), av = avg(d), mn = min(d)`);
    assert.deepEqual(empty, { sm: null, av: null, mn: null });
    const over = await one(`datatable(d: decimal) [decimal(${NINES38}), decimal(${NINES38})] | summarize sm = sum(d)`);
    assert.deepEqual(over, { sm: null });
    const arg = await one(`${t} | summarize arg_min(d, s)`);
    assert.deepEqual(arg, { d: '-3', s: 'b' });
  });

  it('the real-valued functions read a decimal as its real; max_of/min_of and extract with typeof(decimal)', async () => {
    const r =
      await one(`print sq = sqrt(decimal(2.25)), pw = pow(decimal(1.5), 2), ex = exp(decimal(0)), mx = max_of(decimal(1.5), 2, decimal(-1)),
      mn = min_of(decimal(1.5), 2, decimal(-1)), e = extract("([0-9.]+)", 1, "price 12.50 usd", typeof(decimal))`);
    assert.deepEqual(r, { sq: 1.5, pw: 2.25, ex: 1, mx: '2', mn: '-1', e: '12.50' });
  });

  it('property: + - * / agree with exact BigInt arithmetic on scaled integers', () => {
    // Operands of at most 18 digits so no result needs scale cutting: the rules then reduce to
    // sum at max scale, product at s1 + s2, quotient truncated at max(s1 + p2 + 1, 6).
    const operand = fc
      .tuple(fc.bigInt({ min: -(10n ** 18n) + 1n, max: 10n ** 18n - 1n }), fc.integer({ min: 0, max: 9 }))
      .map(([m, s]) => ({ m, s, text: scaledText(m, s) }));
    fc.assert(
      fc.property(operand, operand, (x, y) => {
        const a = sqlDecimal.parse(x.text);
        const b = sqlDecimal.parse(y.text);
        assert.ok(a && b);
        const s = Math.max(x.s, y.s);
        const sum = x.m * 10n ** BigInt(s - x.s) + y.m * 10n ** BigInt(s - y.s);
        assert.equal(sqlDecimal.toText(sqlDecimal.add(a, b) as sqlDecimal.SqlDecimal), scaledText(sum, s));
        const diff = x.m * 10n ** BigInt(s - x.s) - y.m * 10n ** BigInt(s - y.s);
        assert.equal(sqlDecimal.toText(sqlDecimal.subtract(a, b) as sqlDecimal.SqlDecimal), scaledText(diff, s));
        assert.equal(sqlDecimal.toText(sqlDecimal.multiply(a, b) as sqlDecimal.SqlDecimal), scaledText(x.m * y.m, x.s + y.s));
        if (y.m !== 0n) {
          // The scale max(s1 + p2 + 1, 6), cut where the integer part p1 − s1 + s2 needs the room.
          const wanted = Math.max(x.s + b.precision + 1, 6);
          const integer = Math.min(a.precision - x.s + y.s, 38);
          const qs = Math.max(Math.min(Math.min(integer + wanted, 38) - integer, wanted), Math.min(wanted, 6));
          // BigInt division truncates toward zero, as SqlDecimal's quotient does.
          const q = (x.m * 10n ** BigInt(qs + y.s - x.s)) / y.m;
          const got = sqlDecimal.divide(a, b);
          if (got) assert.equal(sqlDecimal.toText(got), scaledText(q, qs));
          else assert.ok(q >= 10n ** 38n || qs + y.s > 38 || x.m * 10n ** BigInt(qs + y.s - x.s) >= 10n ** 38n);
        }
        assert.equal(
          sqlDecimal.compare(a, b),
          x.m * 10n ** BigInt(s - x.s) < y.m * 10n ** BigInt(s - y.s) ? -1 : sum === 2n * y.m * 10n ** BigInt(s - y.s) ? 0 : 1,
        );
      }),
      { numRuns: 500 },
    );
  });
});

/** A scaled integer as SqlDecimal writes it: the digits with `scale` after the point. */
function scaledText(m: bigint, scale: number): string {
  const neg = m < 0n;
  let digits = (neg ? -m : m).toString();
  if (scale > 0) {
    digits = digits.padStart(scale + 1, '0');
    digits = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  }
  return neg && m !== 0n ? `-${digits}` : digits;
}
