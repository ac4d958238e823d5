/**
 * The series functions (issue 17, family 6). Expected values come from the plain loops below,
 * written from Kusto's documented definitions, not from the engine's code (series-math.ts). The
 * `print` and datatable queries run in the gateway's merge database; the make-series queries over
 * Logs run on one worker and on three (fixture.run insists on the same answer). A fast-check
 * property compares random series against the loops, and series_sum against the SQL array_sum.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { before, describe, it } from 'mocha';
import { bindQuery } from '../../src/query/engine.js';
import { warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';
import { getCluster, LOGS, run } from './fixture.js';
import { kustoColumns } from './kusto-analyzer.js';

type N = number | null;

/** Deep equality with reals compared to 1e-9 (relative). */
function close(actual: unknown, expected: unknown, path = '$'): void {
  if (typeof expected === 'number' && typeof actual === 'number') {
    if (Number.isNaN(expected)) assert.ok(Number.isNaN(actual), `${path}: ${actual} is not NaN`);
    else {
      const ok = actual === expected || Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected));
      assert.ok(ok, `${path}: ${actual} ≠ ${expected}`);
    }
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: ${JSON.stringify(actual)} is not an array`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    for (let i = 0; i < expected.length; i++) close((actual as unknown[])[i], expected[i], `${path}[${i}]`);
  } else if (expected !== null && typeof expected === 'object') {
    assert.deepEqual(Object.keys(actual as object), Object.keys(expected), `${path}: keys`);
    for (const [k, v] of Object.entries(expected)) close((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else assert.deepEqual(actual, expected, path);
}

const lit = (xs: N[]) => `dynamic(${JSON.stringify(xs)})`;

/** The single row of a query. */
async function row(query: string): Promise<Record<string, unknown>> {
  const r = await run(query);
  assert.equal(r.results.length, 1, query);
  return r.results[0] as Record<string, unknown>;
}

// ---------------------------------------------------------------- reference loops

function pairwise(a: N[], b: N[] | number, f: (x: number, y: number) => number | boolean): (number | boolean | null)[] {
  const n = Array.isArray(b) ? Math.max(a.length, b.length) : a.length;
  const out: (number | boolean | null)[] = [];
  for (let i = 0; i < n; i++) {
    const x = a[i];
    const y = Array.isArray(b) ? b[i] : b;
    out.push(x === null || x === undefined || y === null || y === undefined ? null : f(x, y));
  }
  return out;
}

function fillForward(a: N[]): N[] {
  const out: N[] = [];
  let last: N = null;
  for (const x of a) {
    if (x !== null) last = x;
    out.push(x ?? last);
  }
  return out;
}

function fir(x: number[], f: number[], normalize: boolean, center: boolean): number[] {
  const sum = f.reduce((a, b) => a + b, 0);
  const g = normalize ? f.map((c) => c / sum) : f;
  const half = center ? (f.length - 1) / 2 : 0;
  return x.map((_, i) => {
    let y = 0;
    for (let j = 0; j < g.length; j++) {
      const k = i - j + half;
      y += (g[j] as number) * (k >= 0 && k < x.length ? (x[k] as number) : 0);
    }
    return y;
  });
}

function iir(x: number[], b: number[], a: number[]): number[] {
  const y: number[] = [];
  for (let i = 0; i < x.length; i++) {
    let v = 0;
    for (let j = 0; j < b.length; j++) v += (b[j] as number) * (i - j >= 0 ? (x[i - j] as number) : 0);
    for (let j = 1; j < a.length; j++) v -= (a[j] as number) * (i - j >= 0 ? (y[i - j] as number) : 0);
    y.push(v / (a[0] as number));
  }
  return y;
}

function stats(xs: number[]) {
  const n = xs.length;
  const avg = xs.reduce((a, b) => a + b, 0) / n;
  const variance = xs.reduce((a, b) => a + (b - avg) ** 2, 0) / (n - 1);
  const min = Math.min(...xs);
  const max = Math.max(...xs);
  return { min, min_idx: xs.indexOf(min), max, max_idx: xs.indexOf(max), avg, stdev: Math.sqrt(variance), variance };
}

function fitLine(ys: number[]) {
  // Normal equations for y = slope·x + interception over x = 1..n.
  const n = ys.length;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let sxy = 0;
  ys.forEach((y, i) => {
    const x = i + 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  });
  const slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const interception = (sy - slope * sx) / n;
  const line = ys.map((_, i) => slope * (i + 1) + interception);
  const mean = sy / n;
  const sst = ys.reduce((a, y) => a + (y - mean) ** 2, 0);
  const ssr = ys.reduce((a, y, i) => a + (y - (line[i] as number)) ** 2, 0);
  return { rsquare: 1 - ssr / sst, slope, variance: sst / (n - 1), rvariance: ssr / (n - 1), interception, line_fit: line };
}

// ---------------------------------------------------------------- tests

describe('series functions', () => {
  before(async function () {
    this.timeout(60_000);
    await warmKustoParser();
    await getCluster();
  });

  const A: N[] = [3, -1, null, 7.5, 0];
  const B: N[] = [1, 2, 3];

  it('element-wise arithmetic and comparison: the longer length, null where missing; a number applies to every element', async () => {
    const r = await row(
      `print add = series_add(${lit(A)}, ${lit(B)}), sub = series_subtract(${lit(A)}, 2), mul = series_multiply(${lit(B)}, ${lit(A)}),
         div = series_divide(${lit(A)}, 4), pw = series_pow(${lit(B)}, 2), gt = series_greater(${lit(A)}, ${lit(B)}),
         ge = series_greater_equals(${lit(A)}, 0), lt = series_less(${lit(A)}, 3), le = series_less_equals(${lit(B)}, 2),
         eq = series_equals(${lit(A)}, 3), ne = series_not_equals(${lit(B)}, ${lit(B)}), bad = series_add(dynamic(["a", true, 2]), 1)`,
    );
    close(r, {
      add: pairwise(A, B, (x, y) => x + y),
      sub: pairwise(A, 2, (x, y) => x - y),
      mul: pairwise(B, A, (x, y) => x * y),
      div: pairwise(A, 4, (x, y) => x / y),
      pw: pairwise(B, 2, (x, y) => x ** y),
      gt: pairwise(A, B, (x, y) => x > y),
      ge: pairwise(A, 0, (x, y) => x >= y),
      lt: pairwise(A, 3, (x, y) => x < y),
      le: pairwise(B, 2, (x, y) => x <= y),
      eq: pairwise(A, 3, (x, y) => x === y),
      ne: pairwise(B, B, (x, y) => x !== y),
      bad: [null, null, 3],
    });
    // Division by zero follows real division: Kusto's double(+inf) and NaN.
    const z = await row('print z = tostring(series_divide(dynamic([1, -2, 0]), 0))');
    assert.equal(z.z, '[Infinity,-Infinity,NaN]');
  });

  it('element-wise math: null for non-numeric elements', async () => {
    const xs: N[] = [0.5, -2, null, 4];
    const ops: [string, (x: number) => number][] = [
      ['abs', Math.abs],
      ['sign', Math.sign],
      ['ceiling', Math.ceil],
      ['floor', Math.floor],
      ['acos', Math.acos],
      ['asin', Math.asin],
      ['atan', Math.atan],
      ['cos', Math.cos],
      ['sin', Math.sin],
      ['tan', Math.tan],
      ['exp', Math.exp],
      ['log', Math.log],
    ];
    const q = `print ${ops.map(([op]) => `${op} = tostring(series_${op}(${lit(xs)}))`).join(', ')}`;
    const r = await row(q);
    for (const [op, f] of ops) {
      // Through tostring: NaN (acos(-2), log(-2)) is not JSON, so compare the text's numbers.
      const text = String(r[op]).replace(/\bNaN\b/g, '"NaN"');
      const got = (JSON.parse(text) as (number | string | null)[]).map((v) => (v === 'NaN' ? Number.NaN : v));
      close(
        got,
        xs.map((x) => (x === null ? null : f(x))),
        op,
      );
    }
  });

  it('reductions: sum, magnitude, dot product, cosine similarity, Pearson correlation', async () => {
    const x = [1, 2, 3, 4];
    const y = [2, 4, 5, 9];
    const r = await row(
      `print s = series_sum(${lit(A)}), m = series_magnitude(${lit(x)}), d = series_dot_product(${lit(x)}, ${lit(B)}),
         d2 = series_dot_product(${lit(x)}, 2), c = series_cosine_similarity(${lit(x)}, ${lit(y)}), p = series_pearson_correlation(${lit(x)}, ${lit(y)}),
         p2 = series_pearson_correlation(${lit(x)}, ${lit(B)})`,
    );
    const dot = (a: number[], b: number[]) => a.reduce((acc, v, i) => acc + v * (b[i] ?? 0), 0);
    const mean = (a: number[]) => a.reduce((s, v) => s + v, 0) / a.length;
    const [mx, my] = [mean(x), mean(y)];
    const cov = x.reduce((s, v, i) => s + (v - mx) * ((y[i] as number) - my), 0);
    const sd = (a: number[], m: number) => Math.sqrt(a.reduce((s, v) => s + (v - m) ** 2, 0));
    close(r, {
      s: 3 - 1 + 7.5 + 0,
      m: Math.sqrt(dot(x, x)),
      d: dot(x, B as number[]),
      d2: dot(x, [2, 2, 2, 2]),
      c: dot(x, y) / Math.sqrt(dot(x, x) * dot(y, y)),
      p: cov / (sd(x, mx) * sd(y, my)),
      p2: null,
    });
  });

  it('fill_forward, fill_backward, fill_const and fill_linear (edges, placeholder, all-missing, longs stay longs)', async () => {
    const s: N[] = [null, 10, null, null, 40, null];
    const reals = '[null,1.0,null,null,2.5,null]';
    const r = await row(
      `print fw = series_fill_forward(${lit(s)}), bw = series_fill_backward(${lit(s)}), c = series_fill_const(${lit(s)}, -1),
         lin = series_fill_linear(${lit(s)}), noedge = series_fill_linear(${lit(s)}, real(null), false),
         lr = series_fill_linear(dynamic(${reals})), ph = series_fill_linear(dynamic([5, 0, 0, 11]), 0),
         none = series_fill_linear(dynamic([null, null]), real(null), true, 7), none0 = series_fill_linear(dynamic([null, null])),
         fph = series_fill_forward(dynamic([1, -1, -1, 4]), -1), cph = series_fill_const(dynamic([1, 0, 3]), 9, 0)`,
    );
    const back = fillForward([...s].reverse()).reverse();
    close(r, {
      fw: fillForward(s),
      bw: back,
      c: s.map((x) => x ?? -1),
      // Longs: 10 → 40 over three steps gives 20 and 30 exactly.
      lin: [10, 10, 20, 30, 40, 40],
      noedge: [null, 10, 20, 30, 40, null],
      lr: [1, 1, 1.5, 2, 2.5, 2.5],
      ph: [5, 7, 9, 11],
      none: [7, 7],
      none0: [0, 0],
      fph: [1, 1, 1, 4],
      cph: [1, 9, 3],
    });
    // Between longs the fraction is dropped, as Kusto's documented example shows (73.5 → 73, 32.67 → 32).
    close(
      await row('print r = series_fill_linear(dynamic([1, null, null, 2])), n = series_fill_linear(dynamic([-1, null, -2]))'),
      {
        r: [1, 1, 1, 2],
        n: [-1, -1, -2],
      },
    );
  });

  it('series_fir: moving sums and averages, centered, normalization rules', async () => {
    const x = [0, 0, 10, 20, 40, 100, 40, 20, 10, 0, 0];
    const r = await row(
      `print sum3 = series_fir(${lit(x)}, dynamic([1, 1, 1]), false), avg5 = series_fir(${lit(x)}, dynamic([1, 1, 1, 1, 1])),
         c5 = series_fir(${lit(x)}, dynamic([1, 1, 1, 1, 1]), true, true), diff = series_fir(${lit(x)}, dynamic([1, -1])),
         neg = series_fir(${lit(x)}, dynamic([1, -1]), true)`,
    );
    close(r, {
      sum3: fir(x, [1, 1, 1], false, false),
      avg5: fir(x, [1, 1, 1, 1, 1], true, false),
      c5: fir(x, [1, 1, 1, 1, 1], true, true),
      diff: fir(x, [1, -1], false, false),
      neg: null,
    });
    await assert.rejects(run(`print series_fir(${lit(x)}, dynamic([1, 1]), true, true)`), /even number of coefficients/);
    await assert.rejects(run('print series_fir(dynamic([1, null, 3]), dynamic([1, 1]))'), /null or non-numeric/);
  });

  it('series_iir: running sums and a first-order low-pass filter', async () => {
    const x = [1, 3, 2, 8, 5];
    const r = await row(
      `print cum = series_iir(${lit(x)}, dynamic([1]), dynamic([1, -1])), lp = series_iir(${lit(x)}, dynamic([0.5]), dynamic([2, -1]))`,
    );
    close(r, { cum: iir(x, [1], [1, -1]), lp: iir(x, [0.5], [2, -1]) });
  });

  it('series_stats_dynamic and series_fit_line_dynamic', async () => {
    const x = [4, 9, 1, 9, 6, 1];
    const y = [3, 4, 8, 9, 15, 14];
    const r = await row(
      `print st = series_stats_dynamic(${lit(x)}), nf = series_stats_dynamic(dynamic([2, null, 5])),
         nfi = series_stats_dynamic(dynamic([2, null, 5, 2]), true), fit = series_fit_line_dynamic(${lit(y)})`,
    );
    const nulls = { min: null, min_idx: null, max: null, max_idx: null, avg: null, stdev: null, variance: null };
    const nfi = { ...stats([2, 5, 2]), max_idx: 2 };
    close(r, { st: stats(x), nf: nulls, nfi, fit: fitLine(y) });
  });

  it('series_stats and series_fit_line spread into columns named as Microsoft’s analyzer names them', async () => {
    const catalog: SchemaCatalog = {
      tables: [
        {
          name: 'T',
          columns: [
            { name: 'd', type: 'dynamic' },
            { name: 'b', type: 'bool' },
          ],
        },
      ],
    };
    for (const q of [
      'T | project series_stats(d)',
      'T | extend st = series_stats(d, true), b',
      'T | extend (r, s, v) = series_fit_line(d)',
      'T | project series_fit_line(series_add(d, d)), d',
      'T | extend (b, x) = series_stats(d)',
    ]) {
      const engine = bindQuery(q, catalog).bound.columns.map((c) => `${c.name}:${c.type}`);
      assert.deepEqual(engine, kustoColumns(q, 'd:dynamic, b:bool'), q);
    }
    const y = [3, 4, 8, 9, 15, 14];
    const r = await row(
      `print y = ${lit(y)} | extend (RSquare, Slope) = series_fit_line(y), st = series_stats(y) | project-away y`,
    );
    const fit = fitLine(y);
    const st = stats(y);
    close(r, {
      RSquare: fit.rsquare,
      Slope: fit.slope,
      series_fit_line_y_variance: fit.variance,
      series_fit_line_y_rvariance: fit.rvariance,
      series_fit_line_y_interception: fit.interception,
      series_fit_line_y_line_fit: fit.line_fit,
      st: st.min,
      series_stats_y_min_idx: st.min_idx,
      series_stats_y_max: st.max,
      series_stats_y_max_idx: st.max_idx,
      series_stats_y_avg: st.avg,
      series_stats_y_stdev: st.stdev,
      series_stats_y_variance: st.variance,
    });
    await assert.rejects(run(`print y = ${lit(y)} | extend a = series_stats(y) + 1`), /gives several columns/);
    await assert.rejects(run('print y = 1 | extend (a, b) = strlen("x")'), /several result columns/);
    await assert.rejects(
      run(`print y = ${lit(y)} | extend (a, b, c, d, e, f, g) = series_fit_line(y)`),
      /gives 6 columns; 7 names/,
    );
  });

  it('run on make-series output over one worker and three', async () => {
    const r = await run(
      `Logs | make-series c = count() default = long(null), avg(latencyMs) on timestamp
         from datetime(2024-03-09) to datetime(2024-03-09 12:00) step 30m by level
       | extend filled = series_fill_forward(c), zero = series_fill_const(c, 0), total = series_sum(c),
         st = series_stats_dynamic(c, true), ma = series_fir(series_fill_const(c, 0), dynamic([1, 1, 1]))
       | project level, c, filled, zero, total, st, ma`,
    );
    const start = Date.UTC(2024, 2, 9);
    const bins = 24;
    for (const level of ['Info', 'Warning', 'Error']) {
      const counts: N[] = Array.from({ length: bins }, (_, k) => {
        const n = LOGS.filter((l) => {
          const t = l.timestamp.getTime() - start;
          return l.level === level && t >= k * 1_800_000 && t < (k + 1) * 1_800_000;
        }).length;
        return n === 0 ? null : n;
      });
      const got = r.results.find((x) => x.level === level) as Record<string, unknown>;
      const present = counts.filter((v): v is number => v !== null);
      const zero = counts.map((v) => v ?? 0);
      close(got.c, counts, `${level}.c`);
      close(got.filled, fillForward(counts), `${level}.filled`);
      close(got.zero, zero, `${level}.zero`);
      close(
        got.total,
        present.reduce((a, b) => a + b, 0),
        `${level}.total`,
      );
      const st = stats(present);
      // Indexes count positions in the whole series, nulls included.
      st.min_idx = counts.indexOf(st.min);
      st.max_idx = counts.indexOf(st.max);
      close(got.st, st, `${level}.st`);
      close(got.ma, fir(zero, [1, 1, 1], true, false), `${level}.ma`);
    }
  });

  it('property: random series agree with the loops (element-wise) and with the SQL path (array_sum)', async function () {
    this.timeout(120_000);
    const element = fc.oneof(
      fc.integer({ min: -1000, max: 1000 }),
      fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
      fc.constant(null),
    );
    const series = fc.array(element, { minLength: 0, maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(series, series, async (a, b) => {
        const numeric = a.filter((v): v is number => v !== null);
        const r = await row(
          `print add = series_add(${lit(a)}, ${lit(b)}), gt = series_greater(${lit(a)}, ${lit(b)}), s = series_sum(${lit(a)}),
             sq = array_sum(${lit(numeric)}), f = series_fill_forward(${lit(a)}), m = series_magnitude(${lit(numeric)})`,
        );
        close(
          r.add,
          pairwise(a, b, (x, y) => x + y),
        );
        close(
          r.gt,
          pairwise(a, b, (x, y) => x > y),
        );
        close(
          r.s,
          numeric.reduce((acc, v) => acc + v, 0),
        );
        // The JS function and DuckDB's SQL sum agree (array_sum of an empty array is null in SQL).
        if (numeric.length > 0) close(r.s, r.sq);
        close(r.f, fillForward(a));
        close(r.m, Math.sqrt(numeric.reduce((acc, v) => acc + v * v, 0)));
      }),
      { numRuns: 40 },
    );
  });
});
