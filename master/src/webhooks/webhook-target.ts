import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { invalid } from '@strata/common';

/**
 * Where a webhook may point: the SSRF stance (docs/alerting.md, "Webhooks"). A webhook URL is
 * chosen by an account admin but called from inside the cluster, so it must not reach what only
 * the cluster can reach: loopback, link-local (where clouds serve instance metadata and
 * credentials: 169.254.169.254, fd00:ec2::254), the unspecified, multicast and reserved ranges.
 * Private-network addresses (10/8, 172.16/12, 192.168/16, fc00::/7) are allowed: on-premises
 * receivers live there, and the NetworkPolicy egress rules are the tool to narrow that further.
 * The operator may allow named hosts anyway (`webhooks.allowInternalHosts`), and plain http:// only
 * for named hosts (`webhooks.allowPlainHttpHosts`).
 *
 * The address check runs in the connection's own DNS lookup, so the address checked is the
 * address connected to (no window for DNS rebinding between a check and the connect).
 */
export interface WebhookPolicy {
  allowPlainHttpHosts: readonly string[];
  allowInternalHosts: readonly string[];
}

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['100.100.100.200', 32], // Alibaba Cloud metadata
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fe80::', 10],
  ['ff00::', 8],
  ['fd00:ec2::254', 128], // AWS metadata over IPv6
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** Why an address may not be called, or undefined when it may. */
export function blockedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return blockedAddress(mapped[1]!);
  return BLOCKED.check(address, family === 4 ? 'ipv4' : 'ipv6')
    ? `${address} is a loopback, link-local, metadata or other special address`
    : undefined;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase();

/** Checks a URL when it is saved: scheme, credentials, and an address literal's range. */
export function checkWebhookUrl(raw: string, policy: WebhookPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('The webhook url is not a valid absolute URL.');
  }
  const host = hostOf(url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPlainHttpHosts.includes(host)))
    throw invalid(
      `The webhook url must use https:// (plain http:// only for hosts the operator allows: webhooks.allowPlainHttpHosts).`,
    );
  if (url.username || url.password) throw invalid('The webhook url must not carry a user name or password.');
  const blocked = isIP(host) ? blockedAddress(host) : undefined;
  if (blocked && !policy.allowInternalHosts.includes(host))
    throw invalid(`The webhook url may not point at ${blocked} (webhooks.allowInternalHosts).`);
  return url;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http(s).request that refuses blocked addresses unless the host is allowed. Node
 * calls it with `all: true` when it races address families (autoSelectFamily), else for one.
 */
export function guardedLookup(policy: WebhookPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback): void => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses) => {
      if (err) return callback(err, []);
      const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
      if (!policy.allowInternalHosts.includes(host)) {
        for (const a of addresses) {
          const why = blockedAddress(a.address);
          if (why) return callback(Object.assign(new Error(`refused: ${hostname} resolves to ${why}`), { code: 'EBLOCKED' }), []);
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), []);
      callback(null, first.address, first.family);
    });
  };
}
