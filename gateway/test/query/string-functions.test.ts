/**
 * String functions (issue 17, family 1). Expected values are written by hand from Kusto's
 * documented behaviour (own inputs), or computed from LOGS in TypeScript by a different path than
 * the engine's SQL. `print` runs in the gateway's merge database; queries over Logs run on one
 * worker and on three (run() insists on identical answers); a summarize first and the function
 * after it runs the function in the merge.
 */
import assert from 'node:assert/strict';
import { domainToASCII } from 'node:url';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

/** Kusto's overlapping plain count, computed in JS by another path (indexOf from each hit + 1). */
function countOverlapping(s: string, m: string): number {
  if (m === '') return 0;
  let n = 0;
  for (let i = s.indexOf(m); i >= 0; i = s.indexOf(m, i + 1)) n++;
  return n;
}

const kql = (s: string) => JSON.stringify(s);

describe('string functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('strcat_delim, strcat_array, strrep, strcmp, reverse (non-strings convert; null reads as "")', async () => {
    const r = await one(`print
      d1 = strcat_delim("/", "usr", 7, long(null), true),
      a1 = strcat_array(dynamic(["x", 1, 2.5, null, {"k": 1}]), ";"), a2 = strcat_array(dynamic([]), ","), a3 = strcat_array(dynamic({"a": 1}), ","),
      r1 = strrep("ab", 3), r2 = strrep(12, 2, "-"), r3 = strrep("z", 0), r4 = strlen(strrep("q", 5000)),
      c1 = strcmp("apple", "banana"), c2 = strcmp("b", "a"), c3 = strcmp("", ""), c4 = strcmp("B", "a"),
      v1 = reverse("stressed"), v2 = reverse(1024), v3 = reverse(""), v4 = reverse(tostring(long(null)))`);
    assert.deepEqual(r, {
      d1: 'usr/7//true',
      a1: 'x;1;2.5;;{"k":1}',
      a2: '',
      a3: '',
      r1: 'ababab',
      r2: '12-12',
      r3: '',
      r4: 1024,
      c1: -1,
      c2: 1,
      c3: 0,
      c4: -1,
      v1: 'desserts',
      v2: '4201',
      v3: '',
      v4: '',
    });
  });

  it('indexof with start, length and occurrence; -1 when not found, null for a bad occurrence or length', async () => {
    const r = await one(`print
      i1 = indexof("hello world", "o"), i2 = indexof("hello world", "o", 5), i3 = indexof("hello world", "wor", 2, 4),
      i4 = indexof("hello world", "wor", 2, 9), i5 = indexof("hello world", "o", -4), i6 = indexof(90210, 21),
      i7 = indexof("xyxyxy", "xy", 0, -1, 3), i8 = indexof("xyxyxy", "xy", 0, -1, 4), i9 = indexof("xyxyxy", "xy", 1, 3, 2),
      n1 = indexof("abc", "b", 0, -2), n2 = indexof("abc", "b", 0, -1, -1), e1 = indexof("abc", ""), e2 = indexof("", "a"),
      z = indexof("abc", "c", 10)`);
    // i9: window of 3 from 1 ("yxy") finds xy at 2; the second search, 3 from 3 ("yxy"), finds it at 4.
    assert.deepEqual(r, {
      i1: 4,
      i2: 7,
      i3: -1,
      i4: 6,
      i5: 7,
      i6: 2,
      i7: 4,
      i8: -1,
      i9: 4,
      n1: null,
      n2: null,
      e1: 0,
      e2: -1,
      z: -1,
    });
  });

  it('countof: plain matches overlap, regex matches do not', async () => {
    const r = await one(`print
      a = countof("mississippi", "ss"), b = countof("xxxxx", "xx"), c = countof("xxxxx", "xx", "regex"),
      d = countof("a1b22c333", "[0-9]+", "regex"), e = countof("abc", ""), f = countof("", "a"), g = countof(12121, 121)`);
    assert.deepEqual(r, { a: 2, b: 4, c: 2, d: 3, e: 0, f: 0, g: 2 });
    await assert.rejects(run('print countof("a", "a", "fuzzy")'), /"normal" or "regex"/);
  });

  it('replace_string, replace_regex (with groups), translate (short and empty replacement lists)', async () => {
    const r = await one(`print
      s1 = replace_string("a.b.c", ".", "::"), s2 = replace_string("abc", "", "x"), s3 = replace_string("aaa", "aa", "b"),
      x1 = replace_regex("2024-03-10", @"(\\d+)-(\\d+)-(\\d+)", @"\\3/\\2/\\1"), x2 = replace_regex("a  b   c", @"\\s+", " "),
      t1 = translate("abc", "xyz", "aabbcc"), t2 = translate("abc", "z", "cabin"), t3 = translate("ab", "", "banana")`);
    assert.deepEqual(r, {
      s1: 'a::b::c',
      s2: 'abc',
      s3: 'ba',
      x1: '10/03/2024',
      x2: 'a b c',
      t1: 'xxyyzz',
      t2: 'zzzin',
      t3: 'nn',
    });
  });

  it('trim, trim_start, trim_end remove runs of regex matches at the ends', async () => {
    const r = await one(`print
      a = trim("-", "--x-y--"), b = trim_start("-", "--x-y--"), c = trim_end("-", "--x-y--"),
      d = trim(@"[ \\t]", " \\t pad \\t "), e = trim("ab", "ababXab"), f = trim("-", "")`);
    assert.deepEqual(r, { a: 'x-y', b: 'x-y--', c: '--x-y', d: 'pad', e: 'X', f: '' });
  });

  it('split with and without an index', async () => {
    const r = await one(`print
      a = split("a,b,,c", ","), b = split("a::b", "::"), c = split("", ","), d = split("abc", ""),
      e = split("a,b,c", ",", 1), f = split("a,b,c", ",", 3), g = split("a,b,c", ",", -1)`);
    assert.deepEqual(r, { a: ['a', 'b', '', 'c'], b: ['a', 'b'], c: [''], d: ['abc'], e: ['b'], f: [], g: [] });
  });

  it('sizes, code points, bytes and ASCII (multi-byte and astral characters)', async () => {
    const r = await one(`print
      s1 = string_size("abc"), s2 = string_size("é€😀"), s3 = string_size(""),
      a1 = isascii("plain ~text"), a2 = isascii("café"), a3 = isascii(""),
      u1 = to_utf8("aé😀"), u2 = to_utf8(""),
      p1 = unicode_codepoints_from_string("a€😀"), p2 = unicode_codepoints_from_string(""),
      q1 = unicode_codepoints_to_string(dynamic([72, 105, 128075])), q2 = unicode_codepoints_to_string(dynamic([-1])),
      q3 = unicode_codepoints_to_string(dynamic(["a"])), m1 = make_string(75, dynamic([117, 115]), 116, 111), m2 = make_string(dynamic([]))`);
    const utf8 = (s: string) => [...Buffer.from(s, 'utf8')];
    const points = (s: string) => [...s].map((c) => c.codePointAt(0));
    assert.deepEqual(r, {
      s1: 3,
      s2: Buffer.byteLength('é€😀'),
      s3: 0,
      a1: true,
      a2: false,
      a3: true,
      u1: utf8('aé😀'),
      u2: [],
      p1: points('a€😀'),
      p2: [],
      q1: String.fromCodePoint(72, 105, 128075),
      q2: '',
      q3: '',
      m1: 'Kusto',
      m2: '',
    });
  });

  it('base64 and URL encodings round-trip; text that does not decode gives ""', async () => {
    const r = await one(`print
      b1 = base64_encode_tostring("Strata ✓"), b2 = base64_decode_tostring(base64_encode_tostring("Strata ✓")),
      b3 = base64_decode_tostring("%%%"), b4 = base64_decode_tostring("/w=="), b5 = base64_encode_tostring(""),
      u1 = url_encode_component("a b/c?d=é&e~"), u2 = url_decode("a%20b+c%2Bd%C3%A9"), u3 = url_decode(url_encode_component("x=1&y=ü"))`);
    assert.deepEqual(r, {
      b1: Buffer.from('Strata ✓', 'utf8').toString('base64'),
      b2: 'Strata ✓',
      b3: '',
      b4: '',
      b5: '',
      u1: encodeURIComponent('a b/c?d=é&e~'),
      u2: 'a b c+dé',
      u3: 'x=1&y=ü',
    });
  });

  it('punycode (JS functions on every worker and in the merge): labels and domains, round trips', async () => {
    const r = await one(`print
      e = punycode_from_string("bücher"), d = punycode_to_string("bcher-kva"), bad = punycode_to_string("ab-é"),
      de = punycode_domain_from_string("www.bücher.example"), dd = punycode_domain_to_string("xn--bcher-kva.example"),
      rt = punycode_to_string(punycode_from_string("日本語"))`);
    assert.deepEqual(r, {
      e: 'bcher-kva',
      d: 'bücher',
      bad: '',
      de: 'www.xn--bcher-kva.example',
      dd: 'bücher.example',
      rt: '日本語',
    });
    // On stored rows: the function runs inside every worker's DuckDB, one worker and three.
    // Expected from Node's WHATWG URL (ICU's IDNA), a different implementation than the punycode package.
    const rows = await run('Logs | project id, p = punycode_domain_from_string(strcat(tolower(level), "-ü.example"))');
    assert.deepEqual(
      sortedJson(rows.results),
      sortedJson(LOGS.map((l) => ({ id: l.id, p: domainToASCII(`${l.level.toLowerCase()}-ü.example`) }))),
    );
  });

  it('new_guid gives a different version-4 GUID on every row', async () => {
    const r = await run(
      'Logs | extend g = new_guid() | summarize n = count(), distinct = dcount(tostring(g)), v4 = countif(tostring(g) matches regex "^[0-9a-f]{8}-[0-9a-f]{4}-4")',
    );
    const row = r.results[0] as { n: number; distinct: number; v4: number };
    assert.equal(row.n, LOGS.length);
    assert.equal(row.v4, LOGS.length);
    assert.ok(row.distinct > LOGS.length * 0.95, 'dcount is an estimate, but the GUIDs differ');
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const r = await run(
      'Logs | project id, n = countof(message, "o"), i = indexof(message, "e", 0, -1, 2), p = split(message, " ", 0), t = trim_end("[0-9]+", message), u = toupper(reverse(level))',
    );
    const expected = LOGS.map((l) => {
      const first = l.message.indexOf('e');
      return {
        id: l.id,
        n: countOverlapping(l.message, 'o'),
        i: first < 0 ? -1 : l.message.indexOf('e', first + 1),
        p: [l.message.split(' ')[0]],
        t: l.message.replace(/[0-9]+$/, ''),
        u: [...l.level].reverse().join('').toUpperCase(),
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const merged = await run(
      'Logs | summarize msgs = count() by level | extend tag = strcat_delim("|", level, strrep("*", 2)), k = countof(level, "r")',
      {},
    );
    const levels = [...new Set(LOGS.map((l) => l.level))];
    assert.deepEqual(
      sortedJson(merged.results.map((x) => ({ level: x.level, tag: x.tag, k: x.k }))),
      sortedJson(levels.map((level) => ({ level, tag: `${level}|**`, k: countOverlapping(level, 'r') }))),
    );
  });

  it('wrong argument types and counts are refused with the function named', async () => {
    await assert.rejects(run('print strrep("a", "3")'), /multiplier of 'strrep' must be long/);
    await assert.rejects(
      run('print translate(tostring(now()), "a", "b")'),
      /search list of 'translate' must be a constant string/,
    );
    await assert.rejects(run('print strcat_delim("-", "a")'), /'strcat_delim' takes 3 to 64 arguments/);
    await assert.rejects(run('print make_string("a")'), /make_string/);
    await assert.rejects(run('print split("a", ",", "1")'), /index of 'split' must be long/);
  });

  it('property: countof (plain) and indexof agree with JS on random strings', async function () {
    this.timeout(60_000);
    const alphabet = fc.constantFrom('a', 'b', 'é', 'ß', ' '); // BMP only: see docs/query.md on astral characters
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet, { maxLength: 12 }),
        fc.array(alphabet, { minLength: 1, maxLength: 3 }),
        async (s1, m1) => {
          const s = s1.join('');
          const m = m1.join('');
          const r = await one(`print c = countof(${kql(s)}, ${kql(m)}), i = indexof(${kql(s)}, ${kql(m)})`);
          // Kusto counts in characters; JS indexOf counts UTF-16 units, so compare in code points.
          const unit = s.indexOf(m);
          const index = unit < 0 ? -1 : [...s.slice(0, unit)].length;
          assert.deepEqual(r, { c: countOverlapping(s, m), i: index });
        },
      ),
      { numRuns: 40 },
    );
  });
});
