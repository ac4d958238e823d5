/**
 * IPv6 functions and ipv4_range_to_cidr_list (issue 17, family 5). Expected values are
 * hand-written from Kusto's documented behaviour (own addresses), or computed in the test by a
 * different path than the engine's ipaddr.js: Node's own BlockList for ranges, plain BigInt
 * arithmetic on text the test formats itself. `print` runs in the gateway's merge database;
 * the queries over Logs run on one worker and on three, then in the merge after a summarize.
 */
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

/** 128-bit value → Kusto's canonical text (eight 4-digit groups). */
const canonical = (v: bigint) => (v.toString(16).padStart(32, '0').match(/.{4}/g) as string[]).join(':');
const masked = (v: bigint, p: number) => (v >> BigInt(128 - p)) << BigInt(128 - p);
/** Eight 16-bit groups → value. */
const fromGroups = (g: number[]) => g.reduce((acc, x) => (acc << 16n) | BigInt(x), 0n);

describe('IPv6 functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('parse_ipv6 and parse_ipv6_mask: canonical text; IPv4 as IPv4-mapped, its prefix counting IPv4 bits', async () => {
    const r = await one(`print
      a = parse_ipv6("2001:db8::1"), b = parse_ipv6("2001:DB8:0:0:0:0:0:1/32"), c = parse_ipv6("10.20.30.40"), d = parse_ipv6("10.20.30.40/16"),
      e = parse_ipv6("::10.20.30.40"), f = parse_ipv6("::"), g = parse_ipv6("1::2::3"), h = parse_ipv6(""), i = parse_ipv6("fe80::1%eth0"),
      j = parse_ipv6("2001:db8::/129"), k = parse_ipv6("10.0.0.1/33"), l = parse_ipv6("300.1.1.1"),
      m1 = parse_ipv6_mask("2001:db8:aaaa:bbbb::1", 48), m2 = parse_ipv6_mask("10.20.30.40", 104), m3 = parse_ipv6_mask("10.20.30.40/8", 128),
      m4 = parse_ipv6_mask("2001:db8::1", 129), m5 = parse_ipv6_mask("2001:db8::1", -1), m6 = parse_ipv6_mask("2001:db8::1/64", 128)`);
    assert.deepEqual(r, {
      a: '2001:0db8:0000:0000:0000:0000:0000:0001',
      b: '2001:0db8:0000:0000:0000:0000:0000:0000',
      c: '0000:0000:0000:0000:0000:ffff:0a14:1e28',
      d: '0000:0000:0000:0000:0000:ffff:0a14:0000',
      e: '0000:0000:0000:0000:0000:ffff:0a14:1e28',
      f: '0000:0000:0000:0000:0000:0000:0000:0000',
      g: '',
      h: '',
      i: '',
      j: '',
      k: '',
      l: '',
      m1: '2001:0db8:aaaa:0000:0000:0000:0000:0000',
      m2: '0000:0000:0000:0000:0000:ffff:0a00:0000',
      m3: '0000:0000:0000:0000:0000:ffff:0a00:0000',
      m4: '',
      m5: '',
      m6: '2001:0db8:0000:0000:0000:0000:0000:0000',
    });
  });

  it('ipv6_compare and ipv6_is_match: the smallest prefix; IPv4 and its mapped form are equal', async () => {
    const r = await one(`print
      c1 = ipv6_compare("2001:db8::1", "2001:db8::2"), c2 = ipv6_compare("2001:db8::ffff", "2001:db8::1", 112), c3 = ipv6_compare("2001:db9::", "2001:db8::/32"),
      c4 = ipv6_compare("10.1.1.1", "::ffff:a01:101"), c5 = ipv6_compare("10.1.1.1/24", "10.1.1.200"), c6 = ipv6_compare("bad", "::1"),
      c7 = ipv6_compare("::1", "::2", 129), c8 = ipv6_compare("::2", "::1", 0),
      m1 = ipv6_is_match("fe80::1:2", "fe80::1:3", 112), m2 = ipv6_is_match("fe80::1:2", "fe80::1:3"), m3 = ipv6_is_match("::1", "")`);
    assert.deepEqual(r, { c1: -1, c2: 0, c3: 1, c4: 0, c5: 0, c6: null, c7: null, c8: 0, m1: true, m2: false, m3: null });
    await assert.rejects(run('print ipv6_compare("::1", "::2", "64")'), /prefix of 'ipv6_compare' must be long/);
    await assert.rejects(run('print parse_ipv6(1)'), /address of 'parse_ipv6' must be a string/);
  });

  it('ipv6_is_in_range and ipv6_is_in_any_range agree with Node’s BlockList', async () => {
    const cases: [string, string, number][] = [
      ['2001:db8:1:2::5', '2001:db8:1::', 48],
      ['2001:db8:2::5', '2001:db8:1::', 48],
      ['fe80::abcd', 'fe80::', 10],
      ['::ffff:10.9.8.7', '::ffff:a00:0', 104],
    ];
    const r = await one(
      `print ${cases.map(([ip, net, p], i) => `r${i} = ipv6_is_in_range("${ip}", "${net}/${p}")`).join(', ')},
        bad = ipv6_is_in_range("nope", "::/0"), exact = ipv6_is_in_range("::1", "::1"),
        a1 = ipv6_is_in_any_range("fe80::1", "2001:db8::/32", "fe80::/10"), a2 = ipv6_is_in_any_range("fe80::1", dynamic(["2001:db8::/32", "x"])),
        a3 = ipv6_is_in_any_range("10.1.2.3", dynamic(["10.0.0.0/8"])), a4 = ipv6_is_in_any_range("bad", "::/0")`,
    );
    const expected: Record<string, unknown> = { bad: null, exact: true, a1: true, a2: false, a3: true, a4: false };
    for (const [i, [ip, net, p]] of cases.entries()) {
      const list = new BlockList();
      list.addSubnet(net, p, 'ipv6');
      expected[`r${i}`] = list.check(ip, 'ipv6');
    }
    assert.deepEqual(r, expected);
  });

  it('ipv4_range_to_cidr_list: the fewest aligned blocks, largest first', async () => {
    const r = await one(`print
      a = ipv4_range_to_cidr_list("10.0.0.0", "10.0.0.255"), b = ipv4_range_to_cidr_list("10.0.0.1", "10.0.0.6"), c = ipv4_range_to_cidr_list("0.0.0.0", "255.255.255.255"),
      d = ipv4_range_to_cidr_list("10.0.0.9", "10.0.0.9"), e = ipv4_range_to_cidr_list("10.0.0.9", "10.0.0.1"), f = ipv4_range_to_cidr_list("x", "10.0.0.1")`);
    assert.deepEqual(r, {
      a: ['10.0.0.0/24'],
      b: ['10.0.0.1/32', '10.0.0.2/31', '10.0.0.4/31', '10.0.0.6/32'],
      c: ['0.0.0.0/0'],
      d: ['10.0.0.9/32'],
      e: [],
      f: null,
    });
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const r = await run(
      'Logs | project id, v6 = parse_ipv6(extract(@"(\\d+\\.\\d+\\.\\d+\\.\\d+)", 1, message)), m = ipv6_is_match(host, "::1")',
    );
    const expected = LOGS.map((l) => {
      const ip = /(\d+\.\d+\.\d+\.\d+)/.exec(l.message)?.[1];
      const v4 = ip ? ip.split('.').reduce((acc, o) => (acc << 8n) | BigInt(o), 0n) : undefined;
      return { id: l.id, v6: v4 === undefined ? '' : canonical((0xffffn << 32n) | v4), m: null };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const merged = await run(
      'Logs | summarize n = count() by level | extend c = ipv6_compare(strcat("::", tostring(n)), "::80")',
    );
    const levels = [...new Set(LOGS.map((l) => l.level))];
    const expectedMerge = levels.map((level) => {
      const n = LOGS.filter((l) => l.level === level).length;
      // "::n" reads n as hexadecimal digits.
      const v = BigInt(`0x${n}`);
      return { level, n, c: v < 0x80n ? -1 : v > 0x80n ? 1 : 0 };
    });
    assert.deepEqual(sortedJson(merged.results), sortedJson(expectedMerge));
  });

  it('property: parse_ipv6 and ipv6_compare agree with BigInt arithmetic; for IPv4 text ipv6_compare agrees with the SQL ipv4_compare', async function () {
    this.timeout(120_000);
    const group = fc.integer({ min: 0, max: 0xffff });
    const groups = fc.array(group, { minLength: 8, maxLength: 8 });
    // The test's own text: full or with the longest zero run compressed (RFC 5952 style, roughly).
    const text = (g: number[], compress: boolean) => {
      const hex = g.map((x) => x.toString(16));
      if (!compress) return hex.join(':');
      const i = g.indexOf(0);
      if (i < 0) return hex.join(':');
      let j = i;
      while (j < 8 && g[j] === 0) j++;
      return `${hex.slice(0, i).join(':')}::${hex.slice(j).join(':')}`;
    };
    const octet = fc.integer({ min: 0, max: 255 });
    const v4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
    await fc.assert(
      fc.asyncProperty(
        groups,
        groups,
        fc.boolean(),
        fc.integer({ min: 0, max: 128 }),
        v4,
        v4,
        fc.integer({ min: 0, max: 32 }),
        async (ga, gb, z, p, a4, b4, p4) => {
          const [a, b] = [text(ga, z), text(gb, !z)];
          const r = await one(
            `print t = parse_ipv6_mask("${a}", ${p}), c = ipv6_compare("${a}", "${b}", ${p}), c6 = ipv6_compare("${a4}", "${b4}", ${p4 + 96}), c4 = ipv4_compare("${a4}", "${b4}", ${p4})`,
          );
          const [x, y] = [masked(fromGroups(ga), p), masked(fromGroups(gb), p)];
          assert.equal(r.t, canonical(x));
          assert.equal(r.c, x < y ? -1 : x > y ? 1 : 0);
          assert.equal(r.c6, r.c4);
        },
      ),
      { numRuns: 30 },
    );
  });
});
