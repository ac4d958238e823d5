/**
 * Hash functions (issue 17, family 4, the part DuckDB computes exactly): MD5, SHA-1 and SHA-256 of
 * a string's UTF-8 bytes as lower-case hex, as Kusto returns them. They are DuckDB SQL, so they
 * answer the same on a worker and in the gateway's merge. Kusto hashes other types by their own
 * binary forms, which are not documented: only strings are accepted here. `hash`, `hash_xxhash64`,
 * `hash_crc32`, `hash_combine`, `hash_many` and the zlib/gzip encodings need JS functions inside
 * DuckDB and are refused by name until those exist.
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
];
