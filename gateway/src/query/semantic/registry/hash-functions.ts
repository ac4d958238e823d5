/**
 * Hash functions (issue 17, family 4, the part DuckDB computes exactly): MD5, SHA-1 and SHA-256 of
 * a string's UTF-8 bytes as lower-case hex, as Kusto returns them. They are DuckDB SQL, so they
 * answer the same on a worker and in the gateway's merge. Kusto hashes other types by their own
 * binary forms, which are not documented: only strings are accepted here. `hash_xxhash64` runs as
 * a JS function inside DuckDB (common/src/query/kusto-udfs.ts). `hash` (its own seed handling),
 * `hash_crc32`, `hash_combine`, `hash_many` and the zlib/gzip encodings are refused by name.
 */
import { queryError } from '../../errors.js';
import { type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, strSql } from '../bound.js';
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

/**
 * hash_xxhash64: XXH64 (seed 0) of the UTF-8 bytes, a signed long (a JS function inside DuckDB,
 * common/src/query/kusto-udfs.ts); with a modulus, the unsigned hash modulo it, so 0 to mod - 1.
 */
const xxhash64: ScalarFn = (args, call: CallExpr) => {
  if (args.length < 1 || args.length > 2)
    throw queryError(`The function '${call.name}' takes 1 to 2 arguments, not ${args.length}.`, call.span);
  const b = args[0] as Bound;
  if (b.type !== 'string')
    throw queryError(`'${call.name}' hashes strings; this is a ${b.type} (convert it with tostring()).`, b.span);
  const h = sql`kql_xxhash64(${strSql(b)})`;
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
  {
    kind: 'scalar',
    name: 'hash_xxhash64',
    signatures: ['hash_xxhash64(source: string[, mod: long]): long'],
    returns: 'long: XXH64 (seed 0) of the UTF-8 bytes; with mod, the unsigned hash modulo mod (null for mod < 1)',
    naming: { kind: 'none' },
    bind: xxhash64,
  },
];
