/**
 * IPv6 (and IPv4 as IPv6) addresses as Kusto's `ipv6_*` functions read them, and IPv4 ranges as
 * CIDR lists (issue 17, family 5). Text parses to a 128-bit value and a prefix length:
 * - a dotted quad `a.b.c.d` (octets 0..255, up to three digits, as the SQL `ipv4_*` family reads
 *   them) is the IPv4-mapped address `::ffff:a.b.c.d`;
 * - anything else must be an IPv6 address (ipaddr.js parses it; zone ids are refused). An IPv6
 *   text with an embedded dotted quad (`::192.168.1.1`) maps to `::ffff:…` too, as Kusto shows;
 * - an IP-prefix `/n` counts IPv4 bits (0..32, so n + 96 of the 128) when the text carries a
 *   dotted quad, else IPv6 bits (0..128); without one the prefix is 128.
 * Comparisons mask both values by the smallest of the prefixes involved.
 */
import { BIGINT, BOOLEAN, VARCHAR } from '@duckdb/node-api';
import ipaddr from 'ipaddr.js';
import { int, scalarUdf, type UdfValue } from './scalar-udf.js';

export interface ParsedIp {
  /** The address as an unsigned 128-bit value, not yet masked. */
  value: bigint;
  /** The prefix length in IPv6 bits (0..128). */
  prefix: number;
}

const DOTTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const MAPPED = 0xffffn << 32n;

/** A dotted quad's 32-bit value, or undefined. */
export function ipv4Value(text: string): bigint | undefined {
  const m = DOTTED.exec(text);
  if (!m) return undefined;
  const octets = m.slice(1, 5).map(Number);
  if (octets.some((o) => o > 255)) return undefined;
  return octets.reduce((acc, o) => (acc << 8n) | BigInt(o), 0n);
}

/** Parses an IPv6 or IPv4 address with an optional IP-prefix; undefined when it is not one. */
export function parseIp(text: string): ParsedIp | undefined {
  const slash = text.lastIndexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? undefined : text.slice(slash + 1);
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return undefined;
  const v4 = ipv4Value(address);
  let value: bigint;
  let ipv4Bits: boolean;
  if (v4 !== undefined) {
    value = MAPPED | v4;
    ipv4Bits = true;
  } else {
    if (address.includes('%') || !address.includes(':')) return undefined;
    let parts: number[];
    try {
      parts = ipaddr.IPv6.parse(address).parts;
    } catch {
      return undefined;
    }
    value = parts.reduce((acc, part) => (acc << 16n) | BigInt(part), 0n);
    ipv4Bits = address.includes('.');
  }
  if (prefixText === undefined) return { value, prefix: 128 };
  const n = Number(prefixText);
  if (n > (ipv4Bits ? 32 : 128)) return undefined;
  return { value, prefix: ipv4Bits ? n + 96 : n };
}

/** The value with all but its first `prefix` bits cleared. */
export function maskIp(value: bigint, prefix: number): bigint {
  const hostBits = BigInt(128 - prefix);
  return (value >> hostBits) << hostBits;
}

/** Kusto's canonical text: eight groups of four lower-case hex digits. */
export function canonicalIpv6(value: bigint): string {
  const hex = value.toString(16).padStart(32, '0');
  return hex.match(/.{4}/g)?.join(':') ?? '';
}

const validPrefix = (p: number | undefined): p is number => p !== undefined && p >= 0 && p <= 128;

/** parse_ipv6_mask: the canonical masked address; "" when the text or the prefix is invalid. */
export function parseIpv6Mask(text: string, prefixArg: number | undefined): string {
  const ip = parseIp(text);
  if (!ip || !validPrefix(prefixArg)) return '';
  return canonicalIpv6(maskIp(ip.value, Math.min(ip.prefix, prefixArg)));
}

/** ipv6_compare: -1, 0 or 1 under the smallest prefix; undefined when an input is invalid. */
export function compareIpv6(a: string, b: string, prefixArg: number | undefined): number | undefined {
  const x = parseIp(a);
  const y = parseIp(b);
  if (!x || !y || !validPrefix(prefixArg)) return undefined;
  const p = Math.min(x.prefix, y.prefix, prefixArg);
  const [mx, my] = [maskIp(x.value, p), maskIp(y.value, p)];
  return mx < my ? -1 : mx > my ? 1 : 0;
}

/** ipv6_is_in_range: the address masked by the range's prefix is the range's network. */
export function ipv6InRange(address: string, range: string): boolean | undefined {
  const x = parseIp(address);
  const r = parseIp(range);
  if (!x || !r) return undefined;
  return maskIp(x.value, r.prefix) === maskIp(r.value, r.prefix);
}

/**
 * ipv4_range_to_cidr_list: the fewest CIDR blocks covering start..end (both plain dotted quads),
 * largest aligned block first; undefined when an address is invalid, [] when start > end.
 */
export function ipv4RangeToCidrs(start: string, end: string): string[] | undefined {
  let from = ipv4Value(start);
  const to = ipv4Value(end);
  if (from === undefined || to === undefined) return undefined;
  const out: string[] = [];
  while (from <= to) {
    // The largest block aligned at `from` that does not run past `to`.
    let size = from === 0n ? 1n << 32n : from & -from;
    while (from + size - 1n > to) size >>= 1n;
    const bits = size.toString(2).length - 1;
    const dotted = [24n, 16n, 8n, 0n].map((s) => ((from as bigint) >> s) & 255n).join('.');
    out.push(`${dotted}/${32 - bits}`);
    from += size;
  }
  return out;
}

const str = (v: UdfValue): string => (typeof v === 'string' ? v : '');

/** The SQL functions (`kql_` names) the registry's ipv6 bindings call. */
export const IP_ADDRESS_UDFS = [
  () =>
    scalarUdf({
      name: 'kql_parse_ipv6_mask',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: ([ip, p]) => parseIpv6Mask(str(ip ?? null), int(p ?? null)),
    }),
  () =>
    scalarUdf({
      name: 'kql_ipv6_compare',
      params: [VARCHAR, VARCHAR, BIGINT],
      returns: BIGINT,
      row: ([a, b, p]) => {
        const c = compareIpv6(str(a ?? null), str(b ?? null), int(p ?? null));
        return c === undefined ? null : BigInt(c);
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_ipv6_is_in_range',
      params: [VARCHAR, VARCHAR],
      returns: BOOLEAN,
      row: ([a, r]) => ipv6InRange(str(a ?? null), str(r ?? null)) ?? null,
    }),
  () =>
    scalarUdf({
      name: 'kql_ipv4_range_to_cidr_list',
      params: [VARCHAR, VARCHAR],
      returns: VARCHAR,
      row: ([a, b]) => {
        const list = ipv4RangeToCidrs(str(a ?? null), str(b ?? null));
        return list === undefined ? null : JSON.stringify(list);
      },
    }),
];
