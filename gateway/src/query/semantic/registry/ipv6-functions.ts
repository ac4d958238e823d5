/**
 * IPv6 functions and `ipv4_range_to_cidr_list` (issue 17, family 5, the rest after the SQL IPv4
 * functions in ip-functions.ts). A 128-bit address does not fit DuckDB's integer arithmetic as
 * comfortably as the IPv4 family's 32 bits, so these run as JS functions inside DuckDB
 * (common/src/query/udfs/ip-addresses.ts, with ipaddr.js parsing IPv6 text), registered on every
 * worker and on the gateway's merge database. IPv4 text counts as the IPv4-mapped IPv6 address,
 * so `ipv6_compare("192.168.1.1", "::ffff:c0a8:0101")` is 0, as Kusto documents.
 */
import { queryError } from '../../errors.js';
import { int, join, type Sql, sql } from '../../sql/sql.js';
import type { KqlType } from '../../types.js';
import { type Bound, strSql } from '../bound.js';
import { arity, type CallExpr } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { ScalarFunctionEntry } from './types.js';

const result = (type: KqlType, s: Sql, call: CallExpr, notNull = false): Bound => ({ type, sql: s, span: call.span, notNull });

function address(b: Bound, call: CallExpr, what = 'address'): Sql {
  if (b.type !== 'string') throw queryError(`The ${what} of '${call.name}' must be a string; this is a ${b.type}.`, b.span);
  return strSql(b);
}

function prefix(b: Bound | undefined, call: CallExpr): Sql {
  if (!b) return sql`${int(128)}`;
  if (b.type !== 'long') throw queryError(`The prefix of '${call.name}' must be long; this is a ${b.type}.`, b.span);
  return b.sql;
}

/** The ranges of `ipv6_is_in_any_range`: string arguments, or one dynamic array of strings. */
function ranges(args: Bound[], call: CallExpr): Sql {
  if (args.length === 1 && args[0]?.type === 'dynamic') return sql`CAST(${(args[0] as Bound).sql} AS VARCHAR[])`;
  return sql`[${join(
    args.map((a) => address(a, call, 'range')),
    ', ',
  )}]`;
}

const compare = (args: Bound[], call: CallExpr): Sql =>
  sql`kql_ipv6_compare(${address(args[0] as Bound, call)}, ${address(args[1] as Bound, call)}, ${prefix(args[2], call)})`;

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  parse_ipv6: (args, call) => {
    arity(call, args.length, 1);
    return result('string', sql`kql_parse_ipv6_mask(${address(args[0] as Bound, call)}, ${int(128)})`, call, true);
  },
  parse_ipv6_mask: (args, call) => {
    arity(call, args.length, 2);
    return result('string', sql`kql_parse_ipv6_mask(${address(args[0] as Bound, call)}, ${prefix(args[1], call)})`, call, true);
  },
  ipv6_compare: (args, call) => {
    arity(call, args.length, 2, 3);
    return result('long', compare(args, call), call);
  },
  ipv6_is_match: (args, call) => {
    arity(call, args.length, 2, 3);
    return result('bool', sql`(${compare(args, call)} = 0)`, call);
  },
  ipv6_is_in_range: (args, call) => {
    arity(call, args.length, 2);
    return result(
      'bool',
      sql`kql_ipv6_is_in_range(${address(args[0] as Bound, call)}, ${address(args[1] as Bound, call, 'range')})`,
      call,
    );
  },
  ipv6_is_in_any_range: (args, call) => {
    arity(call, args.length, 2, 64);
    const ip = address(args[0] as Bound, call);
    // As ipv4_is_in_any_range: a range that does not parse matches nothing.
    return result(
      'bool',
      sql`coalesce(list_bool_or(list_transform(${ranges(args.slice(1), call)}, r -> kql_ipv6_is_in_range(${ip}, r))), false)`,
      call,
      true,
    );
  },
  ipv4_range_to_cidr_list: (args, call) => {
    arity(call, args.length, 2);
    const [from, to] = [address(args[0] as Bound, call, 'start address'), address(args[1] as Bound, call, 'end address')];
    return result('dynamic', sql`CAST(kql_ipv4_range_to_cidr_list(${from}, ${to}) AS JSON)`, call);
  },
};

function fn(name: string, signatures: string[], returns: string): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the IP function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming: { kind: 'none' }, bind };
}

export const IPV6_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn(
    'parse_ipv6',
    ['parse_ipv6(ip: string): string'],
    'string: the canonical IPv6 text (8 groups of 4 hex digits), masked by its prefix; "" when invalid',
  ),
  fn(
    'parse_ipv6_mask',
    ['parse_ipv6_mask(ip: string, prefix: long): string'],
    'string: the canonical IPv6 text under the combined prefix (0..128); "" when invalid',
  ),
  fn(
    'ipv6_compare',
    ['ipv6_compare(ip1: string, ip2: string[, prefix: long]): long'],
    'long: -1, 0 or 1 under the combined prefix; null when invalid',
  ),
  fn(
    'ipv6_is_match',
    ['ipv6_is_match(ip1: string, ip2: string[, prefix: long]): bool'],
    'bool under the combined prefix; null when invalid',
  ),
  fn('ipv6_is_in_range', ['ipv6_is_in_range(ip: string, range: string): bool'], 'bool; null when invalid'),
  fn(
    'ipv6_is_in_any_range',
    ['ipv6_is_in_any_range(ip: string, range: string, ...): bool', 'ipv6_is_in_any_range(ip: string, ranges: dynamic): bool'],
    'bool (false when nothing matches or the address is invalid)',
  ),
  fn(
    'ipv4_range_to_cidr_list',
    ['ipv4_range_to_cidr_list(start: string, end: string): dynamic'],
    'dynamic: the fewest CIDR ranges covering start..end; null when invalid',
  ),
];
