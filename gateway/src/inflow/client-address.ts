import { BlockList, isIP } from 'node:net';

/** `::ffff:10.0.0.1` → `10.0.0.1`: IPv4 peers on a dual-stack socket. */
function normalizeAddress(address: string): string {
  return address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

/**
 * Decides `__INFLOW_SOURCE_ADDRESS`: the socket's peer address, unless that peer is one of
 * `gateway.trustedProxies` (addresses or CIDR ranges, IPv4 or IPv6). Then X-Forwarded-For is read
 * from the right: every hop that is itself a trusted proxy is skipped, the first other address is
 * the client. A forwarded header from an untrusted peer is ignored, so clients cannot forge it.
 */
export class ClientAddressResolver {
  private readonly trusted = new BlockList();
  private readonly empty: boolean;

  constructor(trustedProxies: readonly string[]) {
    for (const entry of trustedProxies) {
      const [address, prefix] = entry.split('/');
      const family = isIP(address ?? '');
      if (!family) throw new Error(`gateway.trustedProxies: not an IP address or CIDR range: ${entry}`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.trusted.addAddress(address!, type);
      else this.trusted.addSubnet(address!, Number(prefix), type);
    }
    this.empty = trustedProxies.length === 0;
  }

  isTrusted(address: string): boolean {
    const a = normalizeAddress(address);
    const family = isIP(a);
    return family !== 0 && this.trusted.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }

  resolve(peer: string | undefined, forwardedFor: string | undefined): string {
    const direct = normalizeAddress(peer ?? '');
    if (this.empty || !forwardedFor || !this.isTrusted(direct)) return direct;
    const hops = forwardedFor
      .split(',')
      .map((h) => normalizeAddress(h.trim()))
      .filter((h) => h.length > 0);
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!;
      if (!isIP(hop)) return direct; // a malformed header is not trusted at all
      if (!this.isTrusted(hop)) return hop;
    }
    return hops[0] ?? direct;
  }
}
