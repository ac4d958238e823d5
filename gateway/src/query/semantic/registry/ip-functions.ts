/**
 * IPv4 functions (issue 17, family 5), declared with their implementations. An address is the
 * dotted quad with an optional IP-prefix (`10.1.2.3/24`); it parses in SQL to its 32-bit value as
 * a long and its prefix (32 without one), so every function is DuckDB SQL and answers the same on
 * a worker and in the gateway's merge. Comparisons use the combined prefix: the smallest of the
 * addresses' own prefixes and the prefix argument, as Kusto documents. Text that is not an
 * address gives null (false for the `has_*` and `is_*` tests that Kusto documents so).
 */
import { queryError } from '../../errors.js';
import { int, join, type Sql, sql, str, trusted } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { KqlType } from '../../types.js';
import { type Bound, convert, strSql } from '../bound.js';
import { arity } from './arguments.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const result = (type: KqlType, s: Sql, call: CallExpr, notNull = false): Bound => ({ type, sql: s, span: call.span, notNull });

function text(b: Bound, call: CallExpr): Sql {
  if (b.type !== 'string' && b.type !== 'dynamic')
    throw queryError(`The address of '${call.name}' must be a string; this is a ${b.type}.`, b.span);
  return strSql(b.type === 'string' ? b : convert(b, 'string', call.name));
}

function prefixArg(b: Bound, call: CallExpr): Sql {
  if (b.type !== 'long') throw queryError(`The prefix of '${call.name}' must be long; this is a ${b.type}.`, b.span);
  return b.sql;
}

/** The smaller of a parsed prefix and a prefix argument; null when the argument is outside 0..32
 * (least() alone would skip a null). */
const combined = (own: Sql, arg: Sql): Sql => sql`(CASE WHEN ${arg} BETWEEN 0 AND 32 THEN least(${own}, ${arg}) END)`;

const IPV4_RE = '^(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})\\.(\\d{1,3})(?:/(\\d{1,2}))?$';

let names = 0;

/**
 * Evaluates the values once and hands the body references to them (a one-element list_transform
 * binds them as a lambda parameter), so a parsed address is not re-parsed at every use.
 */
function bind(values: Record<string, Sql>, body: (refs: Record<string, Sql>) => Sql): Sql {
  const name = `ip_${++names % 1000}`;
  const keys = Object.keys(values);
  const packed = join(
    keys.map((k) => sql`${trusted(k)} := ${values[k] as Sql}`),
    ', ',
  );
  const refs = Object.fromEntries(keys.map((k) => [k, trusted(`${name}.${k}`)]));
  return sql`list_transform([struct_pack(${packed})], ${trusted(name)} -> ${body(refs)})[1]`;
}

/** An address string parsed to STRUCT(v: the 32-bit value unmasked, p: the prefix); null when invalid. */
function parsed(s: Sql): Sql {
  const g = sql`regexp_extract(${s}, ${str(IPV4_RE)}, ['a', 'b', 'c', 'd', 'p'])`;
  return bind({ g }, ({ g: r }) => {
    const o = (k: string) => sql`CAST(nullif(struct_extract(${r}, ${str(k)}), '') AS BIGINT)`;
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(o) as [Sql, Sql, Sql, Sql];
    const p = sql`coalesce(${o('p')}, 32)`;
    // The pattern is anchored, so an empty first group means no match.
    const valid = sql`(${a} IS NOT NULL AND greatest(${a}, ${b}, ${c}, ${d}) <= 255 AND ${p} <= 32)`;
    return sql`(CASE WHEN ${valid} THEN struct_pack(v := ${a} * 16777216 + ${b} * 65536 + ${c} * 256 + ${d}, p := ${p}) END)`;
  });
}

/** Field access on a parsed address. */
const V = (ip: Sql): Sql => sql`struct_extract(${ip}, 'v')`;
const P = (ip: Sql): Sql => sql`struct_extract(${ip}, 'p')`;

/** The value with all but the first p bits cleared (p in 0..32; null outside). */
const masked = (v: Sql, p: Sql): Sql =>
  sql`(CASE WHEN ${p} BETWEEN 0 AND 32 THEN (${v} >> CAST(32 - ${p} AS INTEGER)) << CAST(32 - ${p} AS INTEGER) END)`;

/** A 32-bit value as a dotted quad. */
const dotted = (v: Sql): Sql => sql`concat_ws('.', (${v} >> 24) & 255, (${v} >> 16) & 255, (${v} >> 8) & 255, ${v} & 255)`;

/** -1, 0, 1 comparing two addresses under the combined prefix. */
function compareSql(args: Bound[], call: CallExpr): Sql {
  const values: Record<string, Sql> = {
    a: parsed(text(args[0] as Bound, call)),
    b: parsed(text(args[1] as Bound, call)),
  };
  if (args[2]) values.q = prefixArg(args[2], call);
  return bind(values, ({ a, b, q }) => {
    const own = sql`least(${P(a as Sql)}, ${P(b as Sql)})`;
    const p = q ? combined(own, q) : own;
    return bind({ x: masked(V(a as Sql), p), y: masked(V(b as Sql), p) }, ({ x, y }) => {
      return sql`(CASE WHEN ${x} < ${y} THEN -1 WHEN ${x} > ${y} THEN 1 WHEN ${x} = ${y} THEN 0 END)`;
    });
  });
}

/** An address inside a range (a CIDR, or one address). */
function inRange(ip: Sql, range: Sql): Sql {
  return bind({ a: parsed(ip), r: parsed(range) }, ({ a, r }) => {
    const p = P(r as Sql);
    return sql`(${masked(V(a as Sql), p)} = ${masked(V(r as Sql), p)})`;
  });
}

/** The ranges of `*_in_any_range`: string arguments, or one dynamic array of strings. */
function rangeList(args: Bound[], call: CallExpr): Sql {
  if (args.length === 1 && args[0]?.type === 'dynamic') return sql`CAST(${(args[0] as Bound).sql} AS VARCHAR[])`;
  return sql`[${join(
    args.map((a) => text(a, call)),
    ', ',
  )}]`;
}

/** One octet 0..255 in text (no leading zeros but 0 itself). */
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
/** An address in text stands alone: no letter, digit or dot-and-digit runs on into it. */
const BEFORE = '(?:^|[^\\p{L}\\p{N}.]|(?:^|[^\\p{N}])\\.)';
const AFTER = '(?:$|[^\\p{L}\\p{N}.]|\\.(?:$|[^\\p{N}]))';
const regexEscape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The constant addresses (or prefixes) to look for: strings, or dynamic arrays of strings. */
function constantTexts(args: Bound[], call: CallExpr, what: string): string[] {
  const out: string[] = [];
  for (const a of args) {
    if (a.value?.type === 'string') out.push(a.value.value);
    else if (a.value?.type === 'dynamic' && a.value.value !== null) {
      const v = JSON.parse(a.value.value) as unknown;
      if (!Array.isArray(v)) throw queryError(`The ${what} of '${call.name}' must be strings or an array of strings.`, a.span);
      for (const x of v) if (typeof x === 'string') out.push(x);
    } else throw queryError(`The ${what} of '${call.name}' must be constant strings or a constant array.`, a.span);
  }
  return out;
}

const validAddress = (s: string): boolean => new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`).test(s);

/** A prefix as has_ipv4_prefix takes it: 1 to 3 octets each followed by a dot, or a whole address. */
function prefixPattern(p: string): string | undefined {
  if (validAddress(p)) return regexEscape(p);
  const m = /^((?:\d{1,3}\.){1,3})$/.exec(p);
  if (!m) return undefined;
  const octets = p.split('.').filter((x) => x !== '');
  if (!octets.every((o) => new RegExp(`^${OCTET}$`).test(o))) return undefined;
  const rest = 4 - octets.length;
  return `${regexEscape(p)}${OCTET}(?:\\.${OCTET}){${rest - 1}}`;
}

function hasAny(source: Sql, patterns: string[]): Sql {
  if (patterns.length === 0) return sql`false`;
  return sql`regexp_matches(${source}, ${str(`${BEFORE}(?:${patterns.join('|')})${AFTER}`)})`;
}

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  parse_ipv4: (args, call) => {
    arity(call, args.length, 1);
    return result(
      'long',
      bind({ a: parsed(text(args[0] as Bound, call)) }, ({ a }) => masked(V(a as Sql), P(a as Sql))),
      call,
    );
  },
  parse_ipv4_mask: (args, call) => {
    arity(call, args.length, 2);
    const values = { a: parsed(text(args[0] as Bound, call)), q: prefixArg(args[1] as Bound, call) };
    return result(
      'long',
      bind(values, ({ a, q }) => masked(V(a as Sql), combined(P(a as Sql), q as Sql))),
      call,
    );
  },
  ipv4_compare: (args, call) => {
    arity(call, args.length, 2, 3);
    return result('long', compareSql(args, call), call);
  },
  ipv4_is_match: (args, call) => {
    arity(call, args.length, 2, 3);
    return result('bool', sql`(${compareSql(args, call)} = 0)`, call);
  },
  ipv4_is_in_range: (args, call) => {
    arity(call, args.length, 2);
    return result('bool', inRange(text(args[0] as Bound, call), text(args[1] as Bound, call)), call);
  },
  ipv4_is_in_any_range: (args, call) => {
    arity(call, args.length, 2, 64);
    const ip = text(args[0] as Bound, call);
    const ranges = rangeList(args.slice(1), call);
    return result('bool', sql`coalesce(list_bool_or(list_transform(${ranges}, r -> ${inRange(ip, sql`r`)})), false)`, call);
  },
  ipv4_is_private: (args, call) => {
    arity(call, args.length, 1);
    // RFC 1918: 10/8, 172.16/12, 192.168/16; an address with a wider prefix is not inside them.
    const body = ({ a }: Record<string, Sql>) => {
      const inside = (base: number, p: number) =>
        sql`(${P(a as Sql)} >= ${int(p)} AND ${masked(V(a as Sql), sql`${int(p)}`)} = ${int(base)})`;
      return sql`(${inside(167772160, 8)} OR ${inside(2886729728, 12)} OR ${inside(3232235520, 16)})`;
    };
    return result('bool', bind({ a: parsed(text(args[0] as Bound, call)) }, body), call);
  },
  ipv4_netmask_suffix: (args, call) => {
    arity(call, args.length, 1);
    return result('long', P(parsed(text(args[0] as Bound, call))), call);
  },
  format_ipv4: (args, call) => formatIpv4(args, call, false),
  format_ipv4_mask: (args, call) => formatIpv4(args, call, true),
  has_ipv4: (args, call) => {
    arity(call, args.length, 2);
    const source = text(args[0] as Bound, call);
    const ips = constantTexts([args[1] as Bound], call, 'address')
      .filter(validAddress)
      .map(regexEscape);
    return result('bool', hasAny(source, ips), call, true);
  },
  has_any_ipv4: (args, call) => {
    arity(call, args.length, 2, 64);
    const source = text(args[0] as Bound, call);
    const ips = constantTexts(args.slice(1), call, 'addresses').filter(validAddress).map(regexEscape);
    return result('bool', hasAny(source, ips), call, true);
  },
  has_ipv4_prefix: (args, call) => {
    arity(call, args.length, 2);
    const source = text(args[0] as Bound, call);
    const ps = constantTexts([args[1] as Bound], call, 'prefix')
      .map(prefixPattern)
      .filter((p) => p !== undefined);
    return result('bool', hasAny(source, ps), call, true);
  },
  has_any_ipv4_prefix: (args, call) => {
    arity(call, args.length, 2, 64);
    const source = text(args[0] as Bound, call);
    const ps = constantTexts(args.slice(1), call, 'prefixes')
      .map(prefixPattern)
      .filter((p) => p !== undefined);
    return result('bool', hasAny(source, ps), call, true);
  },
};

/** format_ipv4 / format_ipv4_mask: from a string address or a long value; "" when invalid. */
function formatIpv4(args: Bound[], call: CallExpr, withMask: boolean): Bound {
  arity(call, args.length, 1, 2);
  const ip = args[0] as Bound;
  const a =
    ip.type === 'long'
      ? sql`(CASE WHEN ${ip.sql} BETWEEN 0 AND 4294967295 THEN struct_pack(v := ${ip.sql}, p := 32) END)`
      : parsed(text(ip, call));
  const values: Record<string, Sql> = { a };
  if (args[1]) values.q = prefixArg(args[1], call);
  const s = bind(values, ({ a: x, q }) => {
    const p = q ? combined(P(x as Sql), q) : P(x as Sql);
    return bind({ m: masked(V(x as Sql), p), p }, ({ m, p: bits }) => {
      const out = withMask ? sql`(${dotted(m as Sql)} || '/' || CAST(${bits as Sql} AS VARCHAR))` : dotted(m as Sql);
      return sql`(CASE WHEN ${m as Sql} IS NOT NULL THEN ${out} END)`;
    });
  });
  return result('string', sql`coalesce(${s}, '')`, call, true);
}

const NONE: NamingRule = { kind: 'none' };

function fn(name: string, signatures: string[], returns: string): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the IP function ${name}`);
  return { kind: 'scalar', name, signatures, returns, naming: NONE, bind };
}

export const IP_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  fn('parse_ipv4', ['parse_ipv4(ip: string): long'], 'long: the address masked by its prefix; null when invalid'),
  fn('parse_ipv4_mask', ['parse_ipv4_mask(ip: string, prefix: long): long'], 'long: the address masked; null when invalid'),
  fn(
    'ipv4_compare',
    ['ipv4_compare(ip1: string, ip2: string[, prefix: long]): long'],
    'long: -1, 0 or 1 under the combined prefix; null when invalid',
  ),
  fn(
    'ipv4_is_match',
    ['ipv4_is_match(ip1: string, ip2: string[, prefix: long]): bool'],
    'bool under the combined prefix; null when invalid',
  ),
  fn('ipv4_is_in_range', ['ipv4_is_in_range(ip: string, range: string): bool'], 'bool; null when invalid'),
  fn(
    'ipv4_is_in_any_range',
    ['ipv4_is_in_any_range(ip: string, range: string, ...): bool', 'ipv4_is_in_any_range(ip: string, ranges: dynamic): bool'],
    'bool',
  ),
  fn('ipv4_is_private', ['ipv4_is_private(ip: string): bool'], 'bool: inside 10/8, 172.16/12 or 192.168/16; null when invalid'),
  fn('ipv4_netmask_suffix', ['ipv4_netmask_suffix(ip: string): long'], 'long: the prefix (32 without one); null when invalid'),
  fn('format_ipv4', ['format_ipv4(ip: string|long[, prefix: long]): string'], 'string: the masked address; "" when invalid'),
  fn(
    'format_ipv4_mask',
    ['format_ipv4_mask(ip: string|long[, prefix: long]): string'],
    'string: address/prefix; "" when invalid',
  ),
  fn('has_ipv4', ['has_ipv4(source: string, ip: string): bool'], 'bool: the valid address stands alone in the text'),
  fn('has_any_ipv4', ['has_any_ipv4(source: string, ip: string|dynamic, ...): bool'], 'bool'),
  fn(
    'has_ipv4_prefix',
    ['has_ipv4_prefix(source: string, prefix: string): bool'],
    'bool: an address starting with the prefix stands in the text',
  ),
  fn('has_any_ipv4_prefix', ['has_any_ipv4_prefix(source: string, prefix: string|dynamic, ...): bool'], 'bool'),
];
