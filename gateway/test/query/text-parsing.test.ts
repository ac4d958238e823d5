/**
 * Term operators (has_any, has_all, hasprefix, hassuffix) and the text-parsing string functions
 * (issue 17 family 1, issue 16 item 5): expected values are Kusto's documented answers written by
 * hand, or computed from LOGS in TypeScript by a different path (a tokenizer for terms, Node's
 * Buffer for base64); every query runs on one worker and on three. A property compares the typed
 * extract (UDF-free SQL) with extract_all's first match and with JS's own regex.
 */
import assert from 'node:assert/strict';
import { isStrataError } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

async function refused(query: string, message: RegExp): Promise<void> {
  await assert.rejects(run(query), (err: unknown) => isStrataError(err) && message.test((err as Error).message));
}

/** Kusto's terms: runs of letters and digits, compared case-insensitively. */
const termsOf = (s: string) => (s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) as string[];

describe('term operators and text-parsing functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('has_any and has_all match whole terms, case-insensitively, from strings and dynamic arrays', async () => {
    const r = await run('Logs | where message has_any ("timeout", dynamic(["HELLO", "user"])) | summarize n = count()');
    const anyOf = ['timeout', 'hello', 'user'];
    assert.deepEqual(r.results, [{ n: LOGS.filter((l) => termsOf(l.message).some((t) => anyOf.includes(t))).length }]);
    const all = await run('Logs | where message has_all ("user", "from") | summarize n = count()');
    assert.deepEqual(all.results, [
      { n: LOGS.filter((l) => ['user', 'from'].every((t) => termsOf(l.message).includes(t))).length },
    ]);
    const p = await one(
      'print a = "Hello World-x" has_any ("world", "zz"), b = "Hello World" has_all ("hello", dynamic(["WORLD"])), c = "Hello World" has_all ("hello", "wor"), d = "abc" has_any (""), e = "abc" has_any (dynamic([]))',
    );
    assert.deepEqual(p, { a: true, b: true, c: false, d: true, e: false });
  });

  it('has_any with thousands of terms (several regexes under RE2’s size limit) and as an OR of has', async function () {
    this.timeout(120_000);
    const many = Array.from({ length: 6000 }, (_, i) => `t${i}`);
    const r = await one(
      `let terms = dynamic(${JSON.stringify(many)}); print a = "x t5999 y" has_any (terms), b = "x t6000 y" has_any (terms)`,
    );
    assert.deepEqual(r, { a: true, b: false });
    const term = fc.constantFrom('user', 'hello', 'world', 'from', 'Timeout', '10.0', '-world', 'admin ', '30s', 'ratio=0');
    await fc.assert(
      fc.asyncProperty(fc.array(term, { minLength: 1, maxLength: 5 }), async (ts) => {
        const list = ts.map((t) => JSON.stringify(t)).join(', ');
        const ors = ts.map((t) => `message has ${JSON.stringify(t)}`).join(' or ');
        const ands = ts.map((t) => `message has ${JSON.stringify(t)}`).join(' and ');
        const q = await run(
          `Logs | summarize a = countif(message has_any (${list})), b = countif(${ors}), c = countif(message has_all (${list})), d = countif(${ands})`,
        );
        const row = q.results[0] as Record<string, unknown>;
        assert.equal(row.a, row.b);
        assert.equal(row.c, row.d);
      }),
      { numRuns: 20 },
    );
  });

  it('hasprefix / hassuffix (and _cs, negated): a term starts or ends with the text', async () => {
    const r = await one(`print
      a = "Hello World" hasprefix "wor", b = "Hello World" hasprefix "orl", c = "Hello World" hassuffix "LD",
      d = "Hello World" hassuffix_cs "LD", e = "Hello World" !hasprefix_cs "Wor", f = "Hello World" !hassuffix "xyz",
      g = "Hello World" hasprefix_cs "Wor", h = "Hello World" !hasprefix "hel"`);
    assert.deepEqual(r, { a: true, b: false, c: true, d: false, e: false, f: true, g: true, h: false });
    const n = await run('Logs | where message hasprefix "conn" | summarize n = count()');
    assert.deepEqual(n.results, [{ n: LOGS.filter((l) => termsOf(l.message).some((t) => t.startsWith('conn'))).length }]);
  });

  it('extract with typeof(T), extract_all in all its forms, extract_json', async () => {
    const id = '82b8be2d-dfa7-4bd1-8f63-24ad26d31449';
    const r = await one(`print
      a = extract("x=([0-9.]+)", 1, "x=12.5", typeof(real)), b = extract("x=([0-9]+)", 1, "y", typeof(long)), s = extract("(b+)", 1, "abbc", typeof(string)),
      g1 = extract_all(@"([\\da-f]{2})", "${id}"),
      g3 = extract_all(@"(\\w)(\\w+)(\\w)", "${id}"),
      sel = extract_all(@"(\\w)(\\w+)(\\w)", dynamic([1,3]), "${id}"),
      named = extract_all(@"(?P<first>\\w)(?P<middle>\\w+)(?P<last>\\w)", dynamic(['first',2,'last']), "${id}"),
      none = extract_all(@"(\\d+)", "no digits"),
      j1 = extract_json("$.a.b[1]", @'{"a":{"b":[1,2]}}', typeof(long)), j2 = extract_json("$['a']", @'{"a":{"b":1}}'),
      j3 = extract_json("$.a", "not json"), j4 = extract_json("$.missing", @'{"a":1}'), j5 = extract_json("$.a", @'{"a":"text"}')`);
    const pairs = id.replaceAll('-', '').match(/.{2}/g);
    assert.deepEqual(r, {
      a: 12.5,
      b: null,
      s: 'bb',
      g1: pairs,
      g3: [
        ['8', '2b8be2', 'd'],
        ['d', 'fa', '7'],
        ['4', 'bd', '1'],
        ['8', 'f6', '3'],
        ['2', '4ad26d3144', '9'],
      ],
      sel: [
        ['8', 'd'],
        ['d', '7'],
        ['4', '1'],
        ['8', '3'],
        ['2', '9'],
      ],
      named: [
        ['8', '2b8be2', 'd'],
        ['d', 'fa', '7'],
        ['4', 'bd', '1'],
        ['8', 'f6', '3'],
        ['2', '4ad26d3144', '9'],
      ],
      none: null,
      j1: 2,
      j2: '{"b":1}',
      j3: '',
      j4: '',
      j5: 'text',
    });
    // Over the data: the numbers in each message, against JS's regex.
    const rows = (await run('Logs | summarize by message | extend n = extract_all(@"(\\d+)", message)')).results;
    for (const row of rows) {
      const found = (row.message as string).match(/\d+/g);
      assert.deepEqual(row.n, found ? [...found] : null);
    }
  });

  it('parse_url, parse_urlquery, parse_path and parse_csv as Kusto documents them', async () => {
    const r = await one(`print
      u = parse_url("scheme://username:password@host:1234/this/is/a/path?k1=v1&k2=v2#fragment"),
      plain = parse_url("https://bing.com"), rel = parse_url("bing.com"),
      q = parse_urlquery("k1=v1&k2=v%202&k3=a+b"),
      c1 = parse_csv('aa,"b,b,b",cc,"Escaping quotes: ""Title""","line1\\nline2"'),
      c2 = parse_csv('record1,a,b,c\\nrecord2,x,y,z'), c3 = parse_csv('')`);
    assert.deepEqual(r, {
      u: {
        Scheme: 'scheme',
        Host: 'host',
        Port: '1234',
        Path: '/this/is/a/path',
        Username: 'username',
        Password: 'password',
        'Query Parameters': { k1: 'v1', k2: 'v2' },
        Fragment: 'fragment',
      },
      plain: {
        Scheme: 'https',
        Host: 'bing.com',
        Port: '',
        Path: '',
        Username: '',
        Password: '',
        'Query Parameters': {},
        Fragment: '',
      },
      rel: {},
      q: { 'Query Parameters': { k1: 'v1', k2: 'v 2', k3: 'a b' } },
      c1: ['aa', 'b,b,b', 'cc', 'Escaping quotes: "Title"', 'line1\nline2'],
      c2: ['record1', 'a', 'b', 'c'],
      c3: [''],
    });
    const paths = await run(`datatable(p:string)[
      @"C:\\temp\\file.txt", @"temp\\file.txt", "file://C:/temp/file.txt:some.exe", @"\\\\shared\\users\\temp\\file.txt.gz", "/usr/lib/temp/file.txt"]
      | extend parts = parse_path(p)`);
    const part = (Scheme: string, RootPath: string, DirectoryPath: string, Filename: string, Extension: string, ads = '') => ({
      Scheme,
      RootPath,
      DirectoryPath,
      DirectoryName: 'temp',
      Filename,
      Extension,
      AlternateDataStreamName: ads,
    });
    assert.deepEqual(
      paths.results.map((x) => x.parts),
      [
        part('', 'C:', 'C:\\temp', 'file.txt', 'txt'),
        part('', '', 'temp', 'file.txt', 'txt'),
        part('file', 'C:', 'C:/temp', 'file.txt', 'txt', 'some.exe'),
        part('', '', '\\\\shared\\users\\temp', 'file.txt.gz', 'gz'),
        part('', '', '/usr/lib/temp', 'file.txt', 'txt'),
      ],
    );
  });

  it('format_bytes, url_encode, isutf8, base64 array and GUID forms, strlen of surrogate pairs', async () => {
    const r = await one(`print
      v1 = format_bytes(564), v2 = format_bytes(10332, 1), v3 = format_bytes(20010332), v4 = format_bytes(20010332, 2),
      v5 = format_bytes(20010332, 0, "KB"), v6 = format_bytes(long(null)),
      e = url_encode(@"https://www.bing.com/hello world"), e2 = url_encode("a~'é"),
      u = isutf8("some string"),
      b1 = base64_encode_fromarray(dynamic([75, 117, 115, 116, 111])), b2 = base64_decode_toarray("S3VzdG8="),
      bad1 = base64_encode_fromarray(dynamic([256])), bad2 = base64_decode_toarray("S3V"),
      g1 = base64_encode_fromguid(guid(ae3133f2-6e22-49ae-b06a-16e6a9b212eb)), g2 = base64_decode_toguid("8jMxriJurkmwahbmqbIS6w=="),
      g3 = base64_decode_toguid("S3VzdG8="),
      l1 = strlen("C\\u0327edilla"), l2 = strlen("\\ud835\\udc00x"), l3 = strlen("⒦⒰⒮⒯⒪")`);
    assert.deepEqual(r, {
      v1: '564 Bytes',
      v2: '10.1 KB',
      v3: '19 MB',
      v4: '19.08 MB',
      v5: '19541 KB',
      v6: '',
      e: 'https%3a%2f%2fwww.bing.com%2fhello+world',
      e2: 'a%7e%27%c3%a9',
      u: true,
      b1: Buffer.from('Kusto').toString('base64'),
      b2: [...Buffer.from('Kusto')],
      bad1: '',
      bad2: null,
      g1: '8jMxriJurkmwahbmqbIS6w==',
      g2: 'ae3133f2-6e22-49ae-b06a-16e6a9b212eb',
      g3: null,
      l1: 8,
      l2: 2,
      l3: 5,
    });
  });

  it('refuses what it cannot answer by name', async () => {
    await refused('Logs | where message has_any (host)', /'has_any' needs constant terms/);
    await refused('print extract_all("a", "abc")', /must have 1 to 16 capture groups; it has 0/);
    await refused('print extract_all("(a)", dynamic([2]), "abc")', /has no capture group 2/);
    await refused('print extract_json("a.b", "{}")', /JSONPath 'a.b' of 'extract_json' is not supported/);
    await refused('print extract("(a)", 1, "a", "long")', /must be typeof\(T\)/);
    await refused('print format_bytes(1, 0, "XB")', /units of 'format_bytes' must be/);
    await refused('print x = "a" hasprefix strcat("a", tostring(now()))', /needs a constant string/);
  });

  it('property: typed extract agrees with extract_all’s first match and with JS’s regex', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 9999 }), fc.constantFrom('a', '-', 'x=')), { maxLength: 8 }),
        async (parts) => {
          // Separated by spaces, so every number fits a long.
          const s = parts.join(' ');
          const r = await one(
            `print t = extract("([0-9]+)", 1, "${s}", typeof(long)), all = extract_all("([0-9]+)", "${s}"), n = countof("${s}", "[0-9]+", "regex")`,
          );
          const js = s.match(/[0-9]+/g);
          assert.equal(r.t, js ? Number(js[0]) : null);
          assert.deepEqual(r.all, js ? [...js] : null);
          if (js) assert.equal(Number((r.all as string[])[0]), r.t);
          assert.equal(r.n, js ? js.length : 0);
        },
      ),
      { numRuns: 30 },
    );
  });
});
