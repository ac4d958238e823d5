/**
 * JS scalar functions the query engine calls where DuckDB has no exact equivalent (issue 17).
 * A function registered on one connection of a DuckDB instance is visible to all its connections
 * (it is a catalog entry), and results must not depend on where a function runs, so every
 * instance that runs engine SQL registers the same set once, when it opens, before its
 * configuration is locked: each worker's storage instance and the gateway's merge database.
 * (Registering per fragment connection, inside its snapshot transaction, is a catalog write that
 * conflicted with the other open snapshots.)
 * Names carry the `kql_` prefix so they cannot shadow a DuckDB function; none reads files,
 * settings or the environment.
 */

import zlib from 'node:zlib';
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  type DuckDBConnection,
  DuckDBScalarFunction,
  type DuckDBType,
  type DuckDBVector,
  VARCHAR,
} from '@duckdb/node-api';
import { xxh64 } from '@node-rs/xxhash';
import erf from '@stdlib/math-base-special-erf';
import erfc from '@stdlib/math-base-special-erfc';
import punycode from 'punycode/punycode.js';
import {
  arrayIff,
  arrayRotateLeft,
  arrayShiftLeft,
  arraySort,
  arraySortMany,
  arraySplit,
  bagMerge,
  dynamicEquals,
  treepath,
} from './dynamic-values.js';
import { type ParseKvOptions, parseKv } from './parse-kv.js';
import { parseRfcDateTime } from './rfc-datetime.js';
import { SERIES_FUNCTIONS } from './series-udfs.js';
import {
  base64FromArray,
  base64FromGuid,
  base64ToArray,
  base64ToGuid,
  formatBytes,
  parseCsv,
  parsePath,
  parseUrl,
  parseUrlQuery,
  urlEncodeForm,
} from './text-values.js';
import { parseTimespanText } from './timespan-text.js';
import { DECIMAL_UDFS } from './udfs/decimal-udfs.js';
import { GEO_CELL_UDFS } from './udfs/geo-cells.js';
import { GEO_MEASURE_UDFS } from './udfs/geo-measure.js';
import { IP_ADDRESS_UDFS } from './udfs/ip-addresses.js';
import { TERM_MATCH_UDFS } from './udfs/term-match.js';
import { compactWeighted, weightedPercentile } from './weighted-values.js';

/**
 * A one-argument function applied row by row: `f` gets each non-null value as @duckdb/node-api
 * reads it (string, bigint, number) and returns the result or null. Every one-argument JS function
 * of the engine is one of these, so the chunk loop is written once.
 */
function rowFunction(
  name: string,
  returnType: DuckDBType,
  parameterType: DuckDBType,
  f: (value: unknown) => unknown,
): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name,
    returnType,
    parameterTypes: [parameterType],
    mainFunction: (_info, input, output: DuckDBVector) => {
      const v = input.getColumnVector(0);
      for (let row = 0; row < input.rowCount; row++) {
        const value = v.getItem(row);
        output.setItem(row, (value === null ? null : f(value)) as never);
      }
      output.flush();
    },
  });
}

/** A VARCHAR → VARCHAR function; `f` returns null when the input does not convert. */
function textFunction(name: string, f: (s: string) => string | null): DuckDBScalarFunction {
  return rowFunction(name, VARCHAR, VARCHAR, (s) => (typeof s === 'string' ? f(s) : null));
}

/** XXH64 (seed 0) of a string's UTF-8 bytes as a signed long, as Kusto's hash_xxhash64 returns it. */
function xxhash64Function(): DuckDBScalarFunction {
  return rowFunction('kql_xxhash64', BIGINT, VARCHAR, (s) =>
    typeof s === 'string' ? BigInt.asIntN(64, xxh64(Buffer.from(s, 'utf8'))) : null,
  );
}

/**
 * XXH64 (seed 0) of a long's 8 bytes, little-endian, as a signed long: Kusto's `hash` of a
 * datetime or timespan hashes its 100 ns ticks this way (the documented `hash(datetime(2015-01-01))`
 * = 1380966698541616202 is exactly this over the ticks).
 */
function xxhash64Int64Function(): DuckDBScalarFunction {
  const bytes = Buffer.alloc(8);
  return rowFunction('kql_xxhash64_int64', BIGINT, BIGINT, (n) => {
    if (typeof n !== 'bigint') return null;
    bytes.writeBigInt64LE(n);
    return BigInt.asIntN(64, xxh64(bytes));
  });
}

/**
 * zlib and gzip of a string's UTF-8 bytes as base64, and back. Compression uses zlib's default
 * level: the bytes can differ from Kusto's encoder (its documented example is a stored block), but
 * each decoder, Kusto's included, reads the other's output. Decoding answers '' when the text is
 * not base64 of a valid stream or the bytes are not UTF-8, as Kusto answers an empty result.
 */
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const decodeOrEmpty =
  (inflate: (b: Buffer) => Buffer) =>
  (s: string): string => {
    try {
      const bytes = Buffer.from(s, 'base64');
      if (bytes.length === 0 || bytes.toString('base64').replace(/=+$/, '') !== s.trim().replace(/=+$/, '')) return '';
      return UTF8.decode(inflate(bytes));
    } catch {
      return '';
    }
  };
/** Kusto's gzip reader wants ID1, ID2, CM = deflate and a zero FLG byte (no optional fields). */
const gunzipStrict = (b: Buffer): Buffer => {
  if (b.length < 18 || b[0] !== 0x1f || b[1] !== 0x8b || b[2] !== 8 || b[3] !== 0) throw new Error('gzip header');
  return zlib.gunzipSync(b);
};

/**
 * A real as Kusto prints it (.NET's shortest round-trip form): the same significant digits as
 * JavaScript's, written positionally while the decimal exponent is between -5 and 14, and as
 * `d.dddE±XX` (upper-case E, sign, at least two exponent digits) outside it — `1E+15`, `1E-05`,
 * `1.5E-07`; `NaN`, `Infinity`, `-Infinity`. JavaScript switches at other exponents (1e21, 1e-7),
 * which is why this is not `String(x)`.
 */
export function kustoRealText(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return '0';
  const [mantissa, exp] = x.toExponential().split('e') as [string, string];
  const e = Number(exp);
  if (e >= 15 || e <= -5) return `${mantissa}E${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`;
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/^-/, '').replace('.', '');
  let text: string;
  if (e < 0) text = `0.${'0'.repeat(-e - 1)}${digits}`;
  else if (digits.length <= e + 1) text = digits + '0'.repeat(e + 1 - digits.length);
  else text = `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`;
  return negative ? `-${text}` : text;
}

function realTextFunction(): DuckDBScalarFunction {
  return rowFunction('kql_real_tostring', VARCHAR, DOUBLE, (x) => (typeof x === 'number' ? kustoRealText(x) : null));
}

/** RFC 822/850 datetime text → µs since the epoch (rfc-datetime.ts); null when it is not one. */
function rfcDatetimeFunction(): DuckDBScalarFunction {
  return rowFunction('kql_rfc_datetime_us', BIGINT, VARCHAR, (s) =>
    typeof s === 'string' ? (parseRfcDateTime(s) ?? null) : null,
  );
}

/** Timespan text (`1.02:03:04.5`, `90m`) → ticks (timespan-text.ts); null when it is neither form. */
function timespanTicksFunction(): DuckDBScalarFunction {
  return rowFunction('kql_timespan_ticks', BIGINT, VARCHAR, (s) =>
    typeof s === 'string' ? (parseTimespanText(s) ?? null) : null,
  );
}

/** A DOUBLE → DOUBLE function; null in, null out. */
function realFunction(name: string, f: (x: number) => number): DuckDBScalarFunction {
  return rowFunction(name, DOUBLE, DOUBLE, (x) => (typeof x === 'number' ? f(x) : null));
}

/**
 * The weighted-values state of percentilew and tdigest (weighted-values.ts): `kql_weighted_compact`
 * sorts and merges a JSON list of [value, weight] pairs; `kql_weighted_percentile` reads the
 * nearest-rank weighted percentile from one (null when it holds no weight).
 */
function weightedCompactFunction(): DuckDBScalarFunction {
  return textFunction('kql_weighted_compact', (s) => JSON.stringify(compactWeighted(s)));
}

function weightedPercentileFunction(): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name: 'kql_weighted_percentile',
    returnType: DOUBLE,
    parameterTypes: [VARCHAR, DOUBLE],
    mainFunction: (_info, input, output: DuckDBVector) => {
      const states = input.getColumnVector(0);
      const ps = input.getColumnVector(1);
      for (let row = 0; row < input.rowCount; row++) {
        const s = states.getItem(row);
        const p = ps.getItem(row);
        output.setItem(row, typeof s === 'string' && typeof p === 'number' ? weightedPercentile(compactWeighted(s), p) : null);
      }
      output.flush();
    },
  });
}

/** An argument of a dynamic-value function: JSON text (parsed), a long or a bool. */
type ArgKind = 'json' | 'text' | 'long' | 'real' | 'bool';
const DUCK_TYPE: Record<ArgKind, DuckDBType> = { json: VARCHAR, text: VARCHAR, long: BIGINT, real: DOUBLE, bool: BOOLEAN };

/**
 * A function over dynamic values or text (dynamic-values.ts, text-values.ts): JSON arguments are
 * parsed (text that does not parse reads as null); a null argument of another kind, or `undefined`
 * from `f`, gives null. The result is JSON text, or with `returns: 'text'` the string itself.
 */
function jsonFunction(
  name: string,
  kinds: ArgKind[],
  f: (args: unknown[]) => unknown,
  returns: 'json' | 'text' = 'json',
): () => DuckDBScalarFunction {
  return () =>
    DuckDBScalarFunction.create({
      name,
      returnType: VARCHAR,
      parameterTypes: kinds.map((k) => DUCK_TYPE[k]),
      mainFunction: (_info, input, output: DuckDBVector) => {
        const vectors = kinds.map((_, i) => input.getColumnVector(i));
        for (let row = 0; row < input.rowCount; row++) {
          const values: unknown[] = [];
          let missing = false;
          kinds.forEach((k, i) => {
            const v = (vectors[i] as DuckDBVector).getItem(row);
            if (k === 'json') values.push(parseOrNull(v));
            else if (v === null || v === undefined) missing = true;
            else values.push(k === 'long' || k === 'real' ? Number(v) : v);
          });
          const out = missing ? undefined : f(values);
          output.setItem(row, out === undefined ? null : returns === 'text' ? String(out) : JSON.stringify(out));
        }
        output.flush();
      },
    });
}

function parseOrNull(v: unknown): unknown {
  if (typeof v !== 'string') return null;
  try {
    return JSON.parse(v);
  } catch {
    return null;
  }
}

/** `kql_dynamic_equals(a, b)`: dynamic equality over JSON text (dynamic-values.ts); null when either is null. */
function dynamicEqualsFunction(): DuckDBScalarFunction {
  return DuckDBScalarFunction.create({
    name: 'kql_dynamic_equals',
    returnType: BOOLEAN,
    parameterTypes: [VARCHAR, VARCHAR],
    mainFunction: (_info, input, output: DuckDBVector) => {
      const [a, b] = [input.getColumnVector(0), input.getColumnVector(1)];
      for (let row = 0; row < input.rowCount; row++)
        output.setItem(row, dynamicEquals(parseOrNull(a.getItem(row)), parseOrNull(b.getItem(row))));
      output.flush();
    },
  });
}

/** Runs a conversion that throws on bad input (punycode's decoders) as one giving null. */
const orNull =
  (f: (s: string) => string) =>
  (s: string): string | null => {
    try {
      return f(s);
    } catch {
      return null;
    }
  };

/** The functions, by their SQL names. The engine's bindings (gateway registry) call these names. */
const FUNCTIONS: readonly (() => DuckDBScalarFunction)[] = [
  // RFC 3492 on one label; the domain forms apply IDNA's xn-- labels (punycode.toASCII/toUnicode).
  () => textFunction('kql_punycode_encode', orNull(punycode.encode)),
  () => textFunction('kql_punycode_decode', orNull(punycode.decode)),
  () => textFunction('kql_punycode_domain_encode', orNull(punycode.toASCII)),
  () => textFunction('kql_punycode_domain_decode', orNull(punycode.toUnicode)),
  xxhash64Function,
  weightedCompactFunction,
  weightedPercentileFunction,
  dynamicEqualsFunction,
  jsonFunction('kql_array_sort', ['json', 'bool', 'bool'], ([a, desc, nullsLast]) =>
    arraySort(a, desc === true, nullsLast === true),
  ),
  // The several-array form: the arrays come as one JSON array, the result is one array of arrays.
  jsonFunction('kql_array_sort_many', ['json', 'bool', 'bool'], ([arrays, desc, nullsLast]) =>
    Array.isArray(arrays) ? arraySortMany(arrays, desc === true, nullsLast === true) : undefined,
  ),
  jsonFunction('kql_array_split', ['json', 'json'], ([a, i]) => arraySplit(a, i)),
  jsonFunction('kql_array_rotate_left', ['json', 'long'], ([a, n]) => arrayRotateLeft(a, n as number)),
  jsonFunction('kql_array_shift_left', ['json', 'long', 'json'], ([a, n, fill]) => arrayShiftLeft(a, n as number, fill as never)),
  jsonFunction('kql_array_iff', ['json', 'json', 'json'], ([c, t, f]) => arrayIff(c, t, f)),
  // The bags come as one JSON array (json_array(b1, b2, …)): the function takes 2 to 64 of them.
  jsonFunction('kql_bag_merge', ['json'], ([bags]) => (Array.isArray(bags) ? bagMerge(bags) : undefined)),
  jsonFunction('kql_treepath', ['json'], ([v]) => treepath(v)),
  // The options carry the wanted keys too: {…ParseKvOptions, keys: [...]}.
  jsonFunction('kql_parse_kv', ['text', 'json'], ([t, o]) => {
    const options = o as ParseKvOptions & { keys: string[] };
    return parseKv(t as string, options, options.keys);
  }),
  jsonFunction('kql_parse_url', ['text'], ([u]) => parseUrl(u as string)),
  jsonFunction('kql_parse_urlquery', ['text'], ([q]) => parseUrlQuery(q as string)),
  jsonFunction('kql_parse_path', ['text'], ([p]) => parsePath(p as string)),
  jsonFunction('kql_parse_csv', ['text'], ([t]) => parseCsv(t as string)),
  jsonFunction(
    'kql_format_bytes',
    ['real', 'long', 'text'],
    ([n, p, u]) => formatBytes(n as number, p as number, u as string),
    'text',
  ),
  jsonFunction('kql_url_encode', ['text'], ([t]) => urlEncodeForm(t as string), 'text'),
  jsonFunction('kql_base64_from_array', ['json'], ([a]) => base64FromArray(a), 'text'),
  jsonFunction('kql_base64_to_array', ['text'], ([t]) => base64ToArray(t as string)),
  jsonFunction('kql_base64_from_guid', ['text'], ([g]) => base64FromGuid(g as string), 'text'),
  jsonFunction('kql_base64_to_guid', ['text'], ([t]) => base64ToGuid(t as string), 'text'),
  xxhash64Int64Function,
  realTextFunction,
  rfcDatetimeFunction,
  timespanTicksFunction,
  () => realFunction('kql_erf', erf),
  () => realFunction('kql_erfc', erfc),
  () => textFunction('kql_zlib_compress', (s) => zlib.deflateSync(Buffer.from(s, 'utf8')).toString('base64')),
  () => textFunction('kql_zlib_decompress', decodeOrEmpty(zlib.inflateSync)),
  () => textFunction('kql_gzip_compress', (s) => zlib.gzipSync(Buffer.from(s, 'utf8')).toString('base64')),
  () => textFunction('kql_gzip_decompress', decodeOrEmpty(gunzipStrict)),
  ...IP_ADDRESS_UDFS,
  // Kusto's decimal (SqlDecimal) over its DuckDB cells (decision 0031).
  ...DECIMAL_UDFS,
  ...GEO_CELL_UDFS,
  ...GEO_MEASURE_UDFS,
  // The exact `has` check of texts a cheap regex cannot decide (term-check.ts in the gateway).
  ...TERM_MATCH_UDFS,
  // Kusto's series functions over make-series arrays (series-udfs.ts).
  ...SERIES_FUNCTIONS,
];

/** Registers the engine's JS functions for the whole instance of `connection` (call once, at open). */
export function registerKustoFunctions(connection: DuckDBConnection): void {
  for (const make of FUNCTIONS) connection.registerScalarFunction(make());
}
