/**
 * IPv4 functions (issue 17, family 5). Expected values are hand-computed from Kusto's documented
 * behaviour (own addresses), or computed in JS with plain integer arithmetic (a different path
 * than the engine's SQL). `print` runs in the gateway's merge database; queries over Logs run on
 * one worker and on three, and the summarize-then-extend query runs them in the merge.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

const value = (ip: string) => ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
const mask = (v: number, p: number) => (p === 0 ? 0 : Math.floor(v / 2 ** (32 - p)) * 2 ** (32 - p));

describe('IPv4 functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('parse_ipv4 and parse_ipv4_mask: the value masked by the prefix; null for what is not an address', async () => {
    const r = await one(`print
      a = parse_ipv4("127.0.0.1"), b = parse_ipv4("192.168.1.77/24"), c = parse_ipv4("256.1.1.1"), d = parse_ipv4("1.2.3"), e = parse_ipv4(""),
      f = parse_ipv4("10.0.0.1/33"), g = parse_ipv4("0.0.0.0/0"), m1 = parse_ipv4_mask("10.20.30.40", 16), m2 = parse_ipv4_mask("10.20.30.40", 40)`);
    assert.deepEqual(r, {
      a: value('127.0.0.1'),
      b: value('192.168.1.0'),
      c: null,
      d: null,
      e: null,
      f: null,
      g: 0,
      m1: value('10.20.0.0'),
      m2: null,
    });
  });

  it('ipv4_compare and ipv4_is_match use the smallest of the prefixes', async () => {
    const r = await one(`print
      c1 = ipv4_compare("192.168.1.1", "192.168.1.2"), c2 = ipv4_compare("10.0.0.9/24", "10.0.0.200"), c3 = ipv4_compare("10.0.1.1", "10.0.0.255", 23),
      c4 = ipv4_compare("10.0.2.1", "10.0.0.255", 23), c5 = ipv4_compare("x", "10.0.0.1"), c6 = ipv4_compare("10.0.0.1", "10.0.0.2/32", 0),
      m1 = ipv4_is_match("10.1.2.3", "10.1.99.99", 16), m2 = ipv4_is_match("10.1.2.3", "10.1.2.4"), m3 = ipv4_is_match("10.1.2.3", "")`);
    assert.deepEqual(r, { c1: -1, c2: 0, c3: 0, c4: 1, c5: null, c6: 0, m1: true, m2: false, m3: null });
  });

  it('ranges: ipv4_is_in_range, ipv4_is_in_any_range (arguments or an array), ipv4_is_private', async () => {
    const r = await one(`print
      r1 = ipv4_is_in_range("172.20.5.6", "172.16.0.0/12"), r2 = ipv4_is_in_range("172.32.0.1", "172.16.0.0/12"), r3 = ipv4_is_in_range("8.8.8.8", "8.8.8.8"),
      r4 = ipv4_is_in_range("bad", "10.0.0.0/8"),
      a1 = ipv4_is_in_any_range("192.168.3.4", "10.0.0.0/8", "192.168.0.0/16"), a2 = ipv4_is_in_any_range("192.168.3.4", dynamic(["10.0.0.0/8", "192.168.3.0/29"])),
      a3 = ipv4_is_in_any_range("1.1.1.1", "10.0.0.0/8", "bad"),
      p1 = ipv4_is_private("10.200.1.1"), p2 = ipv4_is_private("172.15.255.255"), p3 = ipv4_is_private("172.31.0.1"), p4 = ipv4_is_private("192.168.0.0/16"),
      p5 = ipv4_is_private("192.0.0.0/8"), p6 = ipv4_is_private("8.8.8.8"), p7 = ipv4_is_private("x")`);
    assert.deepEqual(r, {
      r1: true,
      r2: false,
      r3: true,
      r4: null,
      a1: true,
      a2: true,
      a3: false,
      p1: true,
      p2: false,
      p3: true,
      p4: true,
      p5: false,
      p6: false,
      p7: null,
    });
  });

  it('ipv4_netmask_suffix, format_ipv4 and format_ipv4_mask (from strings and longs)', async () => {
    const r = await one(`print
      s1 = ipv4_netmask_suffix("10.0.0.0/20"), s2 = ipv4_netmask_suffix("10.0.0.1"), s3 = ipv4_netmask_suffix("nope"),
      f1 = format_ipv4(3232235777), f2 = format_ipv4("192.168.1.77", 24), f3 = format_ipv4(-1), f4 = format_ipv4("x"), f5 = format_ipv4(4294967295),
      m1 = format_ipv4_mask("10.1.2.3", 8), m2 = format_ipv4_mask("10.1.2.3"), m3 = format_ipv4_mask(167772161, 31), m4 = format_ipv4_mask("10.1.2.3/16", 24)`);
    assert.deepEqual(r, {
      s1: 20,
      s2: 32,
      s3: null,
      f1: '192.168.1.1',
      f2: '192.168.1.0',
      f3: '',
      f4: '',
      f5: '255.255.255.255',
      m1: '10.0.0.0/8',
      m2: '10.1.2.3/32',
      m3: '10.0.0.0/31',
      m4: '10.1.0.0/16',
    });
  });

  it('has_ipv4 / has_any_ipv4 / has_ipv4_prefix / has_any_ipv4_prefix find addresses that stand alone in text', async () => {
    const r = await one(`print
      h1 = has_ipv4("GET from 10.0.0.5, then", "10.0.0.5"), h2 = has_ipv4("host10.0.0.5", "10.0.0.5"), h3 = has_ipv4("at 10.0.0.55", "10.0.0.5"),
      h4 = has_ipv4("v 1.10.0.0.5", "10.0.0.5"), h5 = has_ipv4("ends 10.0.0.5.", "10.0.0.5"), h6 = has_ipv4("a 10.0.0.256 b", "10.0.0.256"),
      a1 = has_any_ipv4("a 10.0.0.5 b", dynamic(["1.1.1.1", "10.0.0.5"])), a2 = has_any_ipv4("a 10.0.0.5 b", "1.1.1.1", "2.2.2.2"),
      p1 = has_ipv4_prefix("peer 172.16.4.2 up", "172.16."), p2 = has_ipv4_prefix("peer 172.160.4.2 up", "172.16."), p3 = has_ipv4_prefix("x 10.1.2.3", "10.1.2.3"),
      p4 = has_ipv4_prefix("x 10.1.2.3", "10.1"), p5 = has_ipv4_prefix("x 10.1.2", "10.1."),
      q1 = has_any_ipv4_prefix("x 192.168.9.9", "10.", "192.168."), q2 = has_any_ipv4_prefix("x 192.168.9.9", dynamic(["10."]))`);
    assert.deepEqual(r, {
      h1: true,
      h2: false,
      h3: false,
      h4: false,
      h5: true,
      h6: false,
      a1: true,
      a2: false,
      p1: true,
      p2: false,
      p3: true,
      p4: false,
      p5: false,
      q1: true,
      q2: false,
    });
    await assert.rejects(run('Logs | extend has_ipv4(message, host)'), /must be constant strings/);
    await assert.rejects(run('print parse_ipv4(123)'), /address of 'parse_ipv4' must be a string/);
    await assert.rejects(run('print parse_ipv4_mask("10.0.0.1", "8")'), /prefix of 'parse_ipv4_mask' must be long/);
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const r = await run(
      'Logs | project id, has = has_ipv4(message, "10.0.0.1"), v = parse_ipv4(extract(@"(\\d+\\.\\d+\\.\\d+\\.\\d+)", 1, message)), priv = ipv4_is_private(extract(@"(\\d+\\.\\d+\\.\\d+\\.\\d+)", 1, message))',
    );
    const expected = LOGS.map((l) => {
      const ip = /(\d+\.\d+\.\d+\.\d+)/.exec(l.message)?.[1];
      return {
        id: l.id,
        has: /(^|[^\w.])10\.0\.0\.1($|[^\w.])/.test(l.message),
        v: ip ? value(ip) : null,
        priv: ip ? ip.startsWith('10.') : null,
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const merged = await run(
      'Logs | summarize n = count() by level | extend ip = format_ipv4(n + 167772160), inside = ipv4_is_in_range(format_ipv4(n + 167772160), "10.0.0.0/24")',
    );
    const levels = [...new Set(LOGS.map((l) => l.level))];
    const expectedMerge = levels.map((level) => {
      const n = LOGS.filter((l) => l.level === level).length;
      return { level, n, ip: `10.0.0.${n}`, inside: n < 256 };
    });
    assert.deepEqual(sortedJson(merged.results), sortedJson(expectedMerge));
  });

  it('property: parse_ipv4, ipv4_compare and format_ipv4_mask agree with integer arithmetic', async function () {
    this.timeout(60_000);
    const octet = fc.integer({ min: 0, max: 255 });
    const ip = fc.tuple(octet, octet, octet, octet).map((o) => o.join('.'));
    await fc.assert(
      fc.asyncProperty(ip, ip, fc.integer({ min: 0, max: 32 }), async (a, b, p) => {
        const r = await one(
          `print v = parse_ipv4("${a}/${p}"), c = ipv4_compare("${a}", "${b}", ${p}), f = format_ipv4_mask("${a}", ${p})`,
        );
        const [x, y] = [mask(value(a), p), mask(value(b), p)];
        const m = mask(value(a), p);
        const f = `${[24, 16, 8, 0].map((s) => Math.floor(m / 2 ** s) % 256).join('.')}/${p}`;
        assert.deepEqual(r, { v: m, c: x < y ? -1 : x > y ? 1 : 0, f });
      }),
      { numRuns: 25 },
    );
  });
});
