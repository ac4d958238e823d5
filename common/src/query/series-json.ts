/**
 * Reading and writing the numeric arrays that Kusto's series functions work on (dynamic values
 * are JSON text in the engine). Kusto keeps each element's type (long or real) and several series
 * functions depend on it (series_fill_linear rounds between longs), so the reader keeps whether a
 * number was written as a real (`2.0`, `1e3`) and the writer writes reals with a fraction.
 * Non-finite reals travel as DuckDB's JSON writes them: NaN, Infinity, -Infinity.
 */

/** One element: a number (`real` when written as one), or null for null and non-numbers. */
export interface SeriesValue {
  v: number | null;
  real: boolean;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function element(raw: string): SeriesValue {
  if (NUMBER.test(raw)) return { v: Number(raw), real: /[.eE]/.test(raw) };
  if (raw === 'NaN') return { v: Number.NaN, real: true };
  if (raw === 'Infinity') return { v: Number.POSITIVE_INFINITY, real: true };
  if (raw === '-Infinity') return { v: Number.NEGATIVE_INFINITY, real: true };
  return { v: null, real: false };
}

/** The elements of a JSON array as their own (trimmed) texts, or undefined when it is not an array. */
export function jsonArrayElements(text: string | null | undefined): string[] | undefined {
  if (typeof text !== 'string') return undefined;
  const s = text.trim();
  if (!s.startsWith('[') || !s.endsWith(']')) return undefined;
  const out: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 1;
  for (let i = 1; i < s.length - 1; i++) {
    const ch = s[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '[' || ch === '{') depth++;
    else if (ch === ']' || ch === '}') depth--;
    else if (ch === ',' && depth === 0) {
      out.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  const last = s.slice(start, s.length - 1).trim();
  if (last !== '' || out.length > 0) out.push(last);
  return out;
}

/**
 * The elements of a JSON array (strings, bools, bags and nested arrays read as null), or
 * undefined when the text is not an array.
 */
export function readSeries(text: string | null | undefined): SeriesValue[] | undefined {
  return jsonArrayElements(text)?.map(element);
}

/**
 * make-series' array for one aggregate: `length` positions, each the value whose offset (a JSON
 * array of whole numbers, in the order of `values`) names it, else the default (JSON text, or
 * null). Values are copied as written. Linear in the positions and values.
 */
export function placeOnAxis(offsets: string, values: string, length: number, dflt: string | null): string {
  const at = jsonArrayElements(offsets) ?? [];
  const vs = jsonArrayElements(values) ?? [];
  const out: string[] = new Array(Math.max(0, length)).fill(dflt ?? 'null');
  at.forEach((o, i) => {
    const k = Number(o);
    if (Number.isInteger(k) && k >= 0 && k < out.length) out[k] = vs[i] ?? 'null';
  });
  return `[${out.join(',')}]`;
}

/** A series argument that may also be a single number (broadcast over the other series). */
export function readSeriesOrScalar(text: string | null | undefined): SeriesValue[] | SeriesValue | undefined {
  const series = readSeries(text);
  if (series) return series;
  if (typeof text !== 'string') return undefined;
  const one = element(text.trim());
  return one.v === null ? undefined : one;
}

/** A number as JSON text: reals keep a fraction (`2.0`), non-finite as DuckDB writes them. */
export function numberJson(v: number, real: boolean): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return 'Infinity';
  if (v === Number.NEGATIVE_INFINITY) return '-Infinity';
  const text = String(v);
  return real && !/[.e]/.test(text) ? `${text}.0` : text;
}

/** An array of numbers, booleans or nulls as JSON text. */
export function writeSeries(values: readonly (SeriesValue | boolean | null)[]): string {
  const parts = values.map((x) => {
    if (x === null) return 'null';
    if (typeof x === 'boolean') return x ? 'true' : 'false';
    return x.v === null ? 'null' : numberJson(x.v, x.real);
  });
  return `[${parts.join(',')}]`;
}

/** A property bag of numbers (and nested JSON) as JSON text, keys in the given order. */
export function writeBag(entries: readonly [string, number | null | string, boolean?][]): string {
  const parts = entries.map(([k, v, real]) => {
    const value = v === null ? 'null' : typeof v === 'string' ? v : numberJson(v, real ?? true);
    return `${JSON.stringify(k)}:${value}`;
  });
  return `{${parts.join(',')}}`;
}
