/**
 * Hash functions and encodings (issue 17, family 4): MD5, SHA-1 and SHA-256 of a string's UTF-8
 * bytes as lower-case hex, as Kusto returns them (DuckDB SQL). `hash` and `hash_xxhash64` are XXH64
 * (seed 0), a JS function inside DuckDB (common/src/query/kusto-udfs.ts), of a string's UTF-8 bytes
 * or of a datetime's or timespan's 100 ns ticks as 8 little-endian bytes — the two forms Kusto's
 * documented values pin down (`"World"` and `datetime(2015-01-01)`). Other types (long, real,
 * bool…) are refused: their byte forms are not documented and a guess would give other hashes than
 * Kusto silently. `hash_combine` and `hash_many` are refused by name: their documented value
 * (-1440138333540407281 for "Hello", "World") matches none of the common combining steps tried
 * (decision 0023). zlib/gzip encode UTF-8 as base64 with Node's zlib. Every one of them answers
 * the same on a worker and in the gateway's merge: the JS functions are registered in both.
 */
import { queryError } from '../../errors.js';
import { type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, strSql } from '../bound.js';
import { ticksSql } from '../datetime-ticks.js';
import type { ScalarFn } from './scalar-impl.js';
import type { ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const digest =
  (f: (s: Sql) => Sql): ScalarFn =>
  (args, call: CallExpr) => {
    if (args.length !== 1) throw queryError(`The function '${call.name}' takes 1 argument, not ${args.length}.`, call.span);
    const b = args[0] as Bound;
    if (b.type !== 'string')
      throw queryError(`'${call.name}' hashes strings; this is a ${b.type} (convert it with tostring()).`, b.span);
    return { type: 'string', sql: f(strSql(b)), span: call.span, notNull: true };
  };

function fn(name: string, bind: ScalarFn, bits: number): ScalarFunctionEntry {
  return {
    kind: 'scalar',
    name,
    signatures: [`${name}(source: string): string`],
    returns: `string: the ${bits}-bit digest of the UTF-8 bytes as lower-case hex`,
    naming: { kind: 'none' },
    bind,
  };
}

/** XXH64 of the value's bytes as Kusto hashes them, or a refusal for a type whose form is unknown. */
function xxhashOf(b: Bound, call: CallExpr): Sql {
  if (b.type === 'string') return sql`kql_xxhash64(${strSql(b)})`;
  if (b.type === 'datetime') return sql`kql_xxhash64_int64(${ticksSql(b)})`;
  if (b.type === 'timespan') return sql`kql_xxhash64_int64(${b.sql})`;
  throw queryError(
    `'${call.name}' hashes strings, datetimes and timespans here; Kusto's byte form of a ${b.type} is not documented, so it is refused rather than hashed differently (convert it with tostring()).`,
    b.span,
  );
}

/**
 * hash / hash_xxhash64: XXH64 (seed 0) as a signed long; with a modulus, the unsigned hash modulo
 * it, so 0 to mod - 1 (the documented `hash("World", 100)` = 51).
 */
const xxhash64: ScalarFn = (args, call: CallExpr) => {
  if (args.length < 1 || args.length > 2)
    throw queryError(`The function '${call.name}' takes 1 to 2 arguments, not ${args.length}.`, call.span);
  const b = args[0] as Bound;
  const h = xxhashOf(b, call);
  const mod = args[1];
  if (!mod) return { type: 'long', sql: h, span: call.span, notNull: true };
  if (mod.type !== 'long') throw queryError(`The modulus of '${call.name}' must be long; this is a ${mod.type}.`, mod.span);
  const unsigned = sql`(CAST(${h} AS HUGEINT) + CASE WHEN ${h} < 0 THEN CAST('18446744073709551616' AS HUGEINT) ELSE 0 END)`;
  return {
    type: 'long',
    sql: sql`(CASE WHEN ${mod.sql} > 0 THEN CAST(${unsigned} % ${mod.sql} AS BIGINT) END)`,
    span: call.span,
  };
};

/** A string → string encoding run by a JS function inside DuckDB (a null string reads as ''). */
function encoding(name: string, udf: Sql, what: string): ScalarFunctionEntry {
  return {
    kind: 'scalar',
    name,
    signatures: [`${name}(text: string): string`],
    returns: `string: ${what}`,
    naming: { kind: 'none' },
    bind: (args, call: CallExpr) => {
      if (args.length !== 1) throw queryError(`The function '${call.name}' takes 1 argument, not ${args.length}.`, call.span);
      const b = args[0] as Bound;
      if (b.type !== 'string') throw queryError(`'${call.name}' takes a string; this is a ${b.type}.`, b.span);
      return { type: 'string', sql: sql`${udf}(${strSql(b)})`, notNull: true, span: call.span };
    },
  };
}

export const HASH_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'hash_md5',
    digest((s) => sql`md5(${s})`),
    128,
  ),
  fn(
    'hash_sha1',
    digest((s) => sql`sha1(${s})`),
    160,
  ),
  fn(
    'hash_sha256',
    digest((s) => sql`sha256(${s})`),
    256,
  ),
  ...['hash', 'hash_xxhash64'].map(
    (name): ScalarFunctionEntry => ({
      kind: 'scalar',
      name,
      signatures: [`${name}(source: string|datetime|timespan[, mod: long]): long`],
      returns:
        'long: XXH64 (seed 0) of the UTF-8 bytes, or of the 100 ns ticks as 8 little-endian bytes; with mod, the unsigned hash modulo mod (null for mod < 1)',
      naming: { kind: 'none' },
      bind: xxhash64,
    }),
  ),
  encoding('zlib_compress_to_base64_string', sql`kql_zlib_compress`, 'zlib (default level) of the UTF-8 bytes, as base64'),
  encoding(
    'zlib_decompress_from_base64_string',
    sql`kql_zlib_decompress`,
    'the UTF-8 text of a base64 zlib stream; empty when it does not decode',
  ),
  encoding('gzip_compress_to_base64_string', sql`kql_gzip_compress`, 'gzip (default level) of the UTF-8 bytes, as base64'),
  encoding(
    'gzip_decompress_from_base64_string',
    sql`kql_gzip_decompress`,
    'the UTF-8 text of a base64 gzip stream (no optional header fields); empty when it does not decode',
  ),
];
