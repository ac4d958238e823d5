/**
 * Kusto's series functions over numeric arrays (issue 17, family 6), as plain functions of JSON
 * text so the engine's JS UDFs (series-udfs.ts) and tests call the same code. Semantics follow
 * Kusto's documentation (docs/decisions/0019-make-series.md lists what was checked against its
 * examples); where the documentation does not say what Kusto answers (a null inside a filtered
 * series, a fit over fewer than two points) the function throws a SeriesRefusal instead of
 * guessing, and the query fails with that message.
 */
import { numberJson, readSeries, readSeriesOrScalar, type SeriesValue, writeBag, writeSeries } from './series-json.js';

/** A series input whose Kusto answer is not documented: the query is refused with this message. */
export class SeriesRefusal extends Error {}

const num = (v: number, real: boolean): SeriesValue => ({ v, real });

/** Element-wise operators of two series (or a series and a number). */
export const ELEMENTWISE = {
  add: (x: SeriesValue, y: SeriesValue) => num((x.v as number) + (y.v as number), x.real || y.real),
  subtract: (x: SeriesValue, y: SeriesValue) => num((x.v as number) - (y.v as number), x.real || y.real),
  multiply: (x: SeriesValue, y: SeriesValue) => num((x.v as number) * (y.v as number), x.real || y.real),
  // Kusto: the quotient is a real even for longs; x/0 follows real division (±Infinity, NaN).
  divide: (x: SeriesValue, y: SeriesValue) => num((x.v as number) / (y.v as number), true),
  pow: (x: SeriesValue, y: SeriesValue) => num((x.v as number) ** (y.v as number), true),
  greater: (x: SeriesValue, y: SeriesValue) => (x.v as number) > (y.v as number),
  greater_equals: (x: SeriesValue, y: SeriesValue) => (x.v as number) >= (y.v as number),
  less: (x: SeriesValue, y: SeriesValue) => (x.v as number) < (y.v as number),
  less_equals: (x: SeriesValue, y: SeriesValue) => (x.v as number) <= (y.v as number),
  equals: (x: SeriesValue, y: SeriesValue) => x.v === y.v,
  not_equals: (x: SeriesValue, y: SeriesValue) => x.v !== y.v,
} as const;

export type ElementwiseOp = keyof typeof ELEMENTWISE;

/**
 * Kusto: the result is as long as the longer series; an element missing from the shorter one, or
 * not numeric in either, gives null. A number on one side applies to every element.
 */
export function seriesElementwise(op: ElementwiseOp, a: string | null, b: string | null): string | null {
  const f = ELEMENTWISE[op];
  const x = readSeriesOrScalar(a);
  const y = readSeriesOrScalar(b);
  if (!x || !y || (!Array.isArray(x) && !Array.isArray(y))) return null;
  const n = Math.max(Array.isArray(x) ? x.length : 0, Array.isArray(y) ? y.length : 0);
  const out: (SeriesValue | boolean | null)[] = [];
  for (let i = 0; i < n; i++) {
    const xi = Array.isArray(x) ? x[i] : x;
    const yi = Array.isArray(y) ? y[i] : y;
    out.push(xi && yi && xi.v !== null && yi.v !== null ? f(xi, yi) : null);
  }
  return writeSeries(out);
}

/** Element-wise math of one series; `keep` operators keep a long a long. */
export const UNARY = {
  abs: { f: Math.abs, keep: true },
  sign: { f: Math.sign, keep: true },
  ceiling: { f: Math.ceil, keep: true },
  floor: { f: Math.floor, keep: true },
  acos: { f: Math.acos, keep: false },
  asin: { f: Math.asin, keep: false },
  atan: { f: Math.atan, keep: false },
  cos: { f: Math.cos, keep: false },
  sin: { f: Math.sin, keep: false },
  tan: { f: Math.tan, keep: false },
  exp: { f: Math.exp, keep: false },
  log: { f: Math.log, keep: false },
} as const;

export type UnaryOp = keyof typeof UNARY;

export function seriesUnary(op: UnaryOp, a: string | null): string | null {
  const x = readSeries(a);
  if (!x) return null;
  const { f, keep } = UNARY[op];
  return writeSeries(x.map((e) => (e.v === null ? null : num(f(e.v), keep ? e.real : true))));
}

const finiteValues = (x: SeriesValue[]): number[] => x.filter((e) => e.v !== null).map((e) => e.v as number);

/** series_sum and series_magnitude: over the numeric elements (others are skipped). */
export function seriesReduce(op: 'sum' | 'magnitude', a: string | null): number | null {
  const x = readSeries(a);
  if (!x) return null;
  const values = finiteValues(x);
  if (op === 'sum') return values.reduce((s, v) => s + v, 0);
  return Math.sqrt(values.reduce((s, v) => s + v * v, 0));
}

/**
 * series_dot_product and series_cosine_similarity: the shorter series is padded with zeros and a
 * non-numeric element counts as zero; a number on one side applies to every element.
 * series_pearson_correlation needs two series of one length.
 */
export function seriesPair(
  op: 'dot_product' | 'cosine_similarity' | 'pearson_correlation',
  a: string | null,
  b: string | null,
): number | null {
  const x = readSeriesOrScalar(a);
  const y = readSeriesOrScalar(b);
  if (!x || !y || (!Array.isArray(x) && !Array.isArray(y))) return null;
  const n = Math.max(Array.isArray(x) ? x.length : 0, Array.isArray(y) ? y.length : 0);
  const at = (s: SeriesValue[] | SeriesValue, i: number): number => {
    const e = Array.isArray(s) ? s[i] : s;
    return e?.v ?? 0;
  };
  if (op === 'pearson_correlation') {
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length) return null;
    if (x.some((e) => e.v === null) || y.some((e) => e.v === null))
      throw new SeriesRefusal('series_pearson_correlation of a series with null or non-numeric elements is not supported.');
    let sx = 0;
    let sy = 0;
    for (let i = 0; i < n; i++) {
      sx += at(x, i);
      sy += at(y, i);
    }
    const mx = sx / n;
    const my = sy / n;
    let cov = 0;
    let vx = 0;
    let vy = 0;
    for (let i = 0; i < n; i++) {
      const dx = at(x, i) - mx;
      const dy = at(y, i) - my;
      cov += dx * dy;
      vx += dx * dx;
      vy += dy * dy;
    }
    return cov / Math.sqrt(vx * vy);
  }
  let dot = 0;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    dot += at(x, i) * at(y, i);
    mx += at(x, i) ** 2;
    my += at(y, i) ** 2;
  }
  return op === 'dot_product' ? dot : dot / Math.sqrt(mx * my);
}

/** Whether an element is "missing": null/non-numeric, or equal to the placeholder when there is one. */
function missingTest(placeholder: string | null): (e: SeriesValue) => boolean {
  const p = placeholder === null ? undefined : readSeriesOrScalar(placeholder);
  const pv = p && !Array.isArray(p) ? p.v : null;
  return (e) => e.v === null || (pv !== null && e.v === pv);
}

/** A constant fill value as an element (null stays null). */
function constantElement(text: string | null): SeriesValue | null {
  const c = text === null ? undefined : readSeriesOrScalar(text);
  return c && !Array.isArray(c) ? c : null;
}

export type FillKind = 'forward' | 'backward' | 'const' | 'linear';

/**
 * series_fill_forward / _backward (a missing value takes the last / next present one; missing
 * values at the start / end stay), series_fill_const (every missing value becomes the constant),
 * series_fill_linear (interpolated between present neighbours, the fraction dropped when every
 * present element is a long; the edges take the nearest present value unless fill_edges is false; a series with
 * no present value is filled with constant_value).
 */
export function seriesFill(
  kind: FillKind,
  series: string | null,
  placeholder: string | null,
  constant: string | null,
  fillEdges: boolean,
): string | null {
  const x = readSeries(series);
  if (!x) return null;
  const missing = missingTest(placeholder);
  const keep = (e: SeriesValue): SeriesValue | null => (e.v === null ? null : e);
  const out: (SeriesValue | null)[] = x.map(keep);
  const present = x.map((e) => !missing(e));
  if (kind === 'const') {
    const c = constantElement(constant);
    return writeSeries(x.map((e, i) => (present[i] ? keep(e) : c)));
  }
  if (kind === 'forward' || kind === 'backward') {
    const order = x.map((_, i) => (kind === 'forward' ? i : x.length - 1 - i));
    let last: SeriesValue | null | undefined;
    for (const i of order) {
      if (present[i]) last = x[i] as SeriesValue;
      else if (last !== undefined) out[i] = last;
    }
    return writeSeries(out);
  }
  const indexes = x.map((_, i) => i).filter((i) => present[i]);
  if (indexes.length === 0) {
    const c = constantElement(constant);
    return writeSeries(x.map(() => c));
  }
  const allLong = indexes.every((i) => !(x[i] as SeriesValue).real);
  const first = indexes[0] as number;
  const last = indexes[indexes.length - 1] as number;
  for (let k = 0; k + 1 < indexes.length; k++) {
    const i0 = indexes[k] as number;
    const i1 = indexes[k + 1] as number;
    const v0 = (x[i0] as SeriesValue).v as number;
    const v1 = (x[i1] as SeriesValue).v as number;
    for (let i = i0 + 1; i < i1; i++) {
      const v = v0 + ((v1 - v0) * (i - i0)) / (i1 - i0);
      // Between longs Kusto keeps longs: its documented example drops the fraction (73.5 → 73,
      // 32.67 → 32), as a cast to long does (toward zero).
      out[i] = allLong ? num(Math.trunc(v), false) : num(v, true);
    }
  }
  if (fillEdges) {
    for (let i = 0; i < first; i++) out[i] = x[first] as SeriesValue;
    for (let i = last + 1; i < x.length; i++) out[i] = x[last] as SeriesValue;
  }
  return writeSeries(out);
}

function numericOrRefuse(x: SeriesValue[], fn: string): number[] {
  if (x.some((e) => e.v === null))
    throw new SeriesRefusal(
      `${fn} of a series with null or non-numeric elements is not supported; fill it first (series_fill_*).`,
    );
  return x.map((e) => e.v as number);
}

/**
 * series_fir: y[i] = Σ f[j]·x[i−j] (values before the start count as 0); with center, the window
 * is shifted by (k−1)/2 so it is symmetric around i (odd k). normalize (by default: when no
 * coefficient is negative) divides the filter by its sum; with a negative coefficient it gives null.
 */
export function seriesFir(
  series: string | null,
  filter: string | null,
  normalize: boolean | null,
  center: boolean,
): string | null {
  const x = readSeries(series);
  const f = readSeries(filter);
  if (!x || !f || f.length === 0) return null;
  const xs = numericOrRefuse(x, 'series_fir');
  let fs = numericOrRefuse(f, 'series_fir');
  const negative = fs.some((v) => v < 0);
  const norm = normalize ?? !negative;
  if (norm) {
    if (negative) return null;
    const sum = fs.reduce((s, v) => s + v, 0);
    if (sum === 0) return null;
    fs = fs.map((v) => v / sum);
  }
  if (center && fs.length % 2 === 0)
    throw new SeriesRefusal('series_fir with center=true and an even number of coefficients is not supported.');
  const shift = center ? (fs.length - 1) / 2 : 0;
  const out = xs.map((_, i) => {
    let y = 0;
    fs.forEach((c, j) => {
      const k = i - j + shift;
      if (k >= 0 && k < xs.length) y += c * (xs[k] as number);
    });
    return num(y, true);
  });
  return writeSeries(out);
}

/** series_iir: a[0]·y[i] = Σ b[j]·x[i−j] − Σ_{j≥1} a[j]·y[i−j], values before the start 0. */
export function seriesIir(series: string | null, numerators: string | null, denominators: string | null): string | null {
  const x = readSeries(series);
  const b = readSeries(numerators);
  const a = readSeries(denominators);
  if (!x || !b || !a || a.length === 0 || b.length === 0) return null;
  const xs = numericOrRefuse(x, 'series_iir');
  const bs = numericOrRefuse(b, 'series_iir');
  const as = numericOrRefuse(a, 'series_iir');
  const a0 = as[0] as number;
  if (a0 === 0) return null;
  const ys: number[] = [];
  for (let i = 0; i < xs.length; i++) {
    let acc = 0;
    for (let j = 0; j < bs.length && j <= i; j++) acc += (bs[j] as number) * (xs[i - j] as number);
    for (let j = 1; j < as.length && j <= i; j++) acc -= (as[j] as number) * (ys[i - j] as number);
    ys.push(acc / a0);
  }
  return writeSeries(ys.map((v) => num(v, true)));
}

/** The fields of series_stats, in Kusto's order. */
export const STATS_FIELDS = ['min', 'min_idx', 'max', 'max_idx', 'avg', 'stdev', 'variance'] as const;

/**
 * series_stats_dynamic: min and max (first index of each), average, sample stdev and variance.
 * A null, NaN or infinite element makes every field null unless ignore_nonfinite is true, when
 * such elements are skipped.
 */
export function seriesStats(series: string | null, ignoreNonfinite: boolean): string | null {
  const x = readSeries(series);
  if (!x) return null;
  const finite = (e: SeriesValue) => e.v !== null && Number.isFinite(e.v);
  const nulls = (): string => writeBag(STATS_FIELDS.map((k) => [k, null]));
  if (!ignoreNonfinite && !x.every(finite)) return nulls();
  const items = x.map((e, i) => ({ v: e.v as number, i })).filter((_, i) => finite(x[i] as SeriesValue));
  if (items.length === 0) return nulls();
  let min = items[0] as { v: number; i: number };
  let max = min;
  let sum = 0;
  for (const it of items) {
    if (it.v < min.v) min = it;
    if (it.v > max.v) max = it;
    sum += it.v;
  }
  const avg = sum / items.length;
  const ss = items.reduce((s, it) => s + (it.v - avg) ** 2, 0);
  const variance = items.length > 1 ? ss / (items.length - 1) : 0;
  return writeBag([
    ['min', min.v, true],
    ['min_idx', min.i, false],
    ['max', max.v, true],
    ['max_idx', max.i, false],
    ['avg', avg, true],
    ['stdev', Math.sqrt(variance), true],
    ['variance', variance, true],
  ]);
}

/** The fields of series_fit_line, in Kusto's order. */
export const FIT_LINE_FIELDS = ['rsquare', 'slope', 'variance', 'rvariance', 'interception', 'line_fit'] as const;

/**
 * series_fit_line_dynamic: least squares over x = 1, 2, …, n (Kusto's documented example fits
 * with x starting at 1); variance is the sample variance of the series, rvariance that of the
 * residuals (both over n − 1), rsquare = 1 − residual/total sum of squares.
 */
export function seriesFitLine(series: string | null): string | null {
  const x = readSeries(series);
  if (!x) return null;
  const ys = numericOrRefuse(x, 'series_fit_line');
  const n = ys.length;
  if (n < 2) throw new SeriesRefusal('series_fit_line of fewer than two points is not supported.');
  const mx = (n + 1) / 2;
  const my = ys.reduce((s, v) => s + v, 0) / n;
  let sxy = 0;
  let sxx = 0;
  ys.forEach((y, i) => {
    sxy += (i + 1 - mx) * (y - my);
    sxx += (i + 1 - mx) ** 2;
  });
  const slope = sxy / sxx;
  const interception = my - slope * mx;
  const fit = ys.map((_, i) => interception + slope * (i + 1));
  const sst = ys.reduce((s, y) => s + (y - my) ** 2, 0);
  if (sst === 0) throw new SeriesRefusal('series_fit_line of a constant series is not supported (its rsquare is undefined).');
  const ssr = ys.reduce((s, y, i) => s + (y - (fit[i] as number)) ** 2, 0);
  return writeBag([
    ['rsquare', 1 - ssr / sst, true],
    ['slope', slope, true],
    ['variance', sst / (n - 1), true],
    ['rvariance', ssr / (n - 1), true],
    ['interception', interception, true],
    ['line_fit', `[${fit.map((v) => numberJson(v, true)).join(',')}]`],
  ]);
}
