/**
 * Hash functions (issue 17, family 4, part). Expected digests come from Node's crypto (a
 * different implementation than DuckDB's). `print` runs in the gateway's merge database; the
 * query over Logs runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import fc from 'fast-check';
import { xxhash64 } from 'hash-wasm';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;
const scalarOf = async (expr: string) => (await one(`print v = ${expr}`)).v;
const hex = (algorithm: string, s: string) => createHash(algorithm).update(s, 'utf8').digest('hex');
/** XXH64 by hash-wasm (a WASM build of the reference C code; the engine uses @node-rs/xxhash, a Rust one). */
const xx = async (s: string | Uint8Array) => BigInt.asIntN(64, BigInt(`0x${await xxhash64(s)}`));
/** XXH64 of a tick count's 8 little-endian bytes (Kusto's form for datetimes and timespans). */
const xxTicks = (ticks: bigint) => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigInt64(0, ticks, true);
  return xx(b);
};
/** A Date's ticks since 0001-01-01 (100 ns each). */
const ticksOf = (d: Date) => BigInt(d.getTime()) * 10_000n + 621_355_968_000_000_000n;
const unsignedMod = (h: bigint, m: bigint) => Number(BigInt.asUintN(64, h) % m);
/**
 * A zlib stream written by hand with one stored (uncompressed) block: header 0x78 0x01, BFINAL=1
 * BTYPE=00, LEN/NLEN, the bytes, Adler-32 — a different encoder than the engine's.
 */
function storedZlib(text: string): string {
  const data = Buffer.from(text, 'utf8');
  let a = 1;
  let b = 0;
  for (const byte of data) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  const head = Buffer.from([
    0x78,
    0x01,
    0x01,
    data.length & 0xff,
    data.length >> 8,
    ~data.length & 0xff,
    (~data.length >> 8) & 0xff,
  ]);
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0);
  return Buffer.concat([head, data, adler]).toString('base64');
}

describe('hash functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('hash_md5, hash_sha1, hash_sha256 of UTF-8 text, the empty string and a null string', async () => {
    const r = await one(
      'print m = hash_md5("Strata ✓"), s1 = hash_sha1("Strata ✓"), s2 = hash_sha256("Strata ✓"), e = hash_md5(""), n = hash_sha256(tostring(long(null)))',
    );
    assert.deepEqual(r, {
      m: hex('md5', 'Strata ✓'),
      s1: hex('sha1', 'Strata ✓'),
      s2: hex('sha256', 'Strata ✓'),
      e: hex('md5', ''),
      n: hex('sha256', ''),
    });
    await assert.rejects(run('print hash_md5(42)'), /'hash_md5' hashes strings; this is a long/);
    await assert.rejects(run('print hash_sha1("a", "b")'), /takes 1 argument/);
  });

  it('hash_xxhash64 (a JS function on every worker and in the merge): signed longs, a modulus gives 0 to mod - 1', async () => {
    const words = ['Strata', '', 'ünïcødé ✓', 'x'.repeat(100)];
    const r = await one(
      `print ${words.map((w, i) => `h${i} = tostring(hash_xxhash64(${JSON.stringify(w)}))`).join(', ')}, m = hash_xxhash64("Strata", 1000), z = hash_xxhash64("a", 0)`,
    );
    const expected: Record<string, unknown> = {};
    for (const [i, w] of words.entries()) expected[`h${i}`] = String(await xx(w));
    expected.m = Number(BigInt.asUintN(64, await xx('Strata')) % 1000n);
    expected.z = null;
    assert.deepEqual(r, expected);
    const rows = await run('Logs | project id, h = tostring(hash_xxhash64(message)), b = hash_xxhash64(level, 7)');
    const want = await Promise.all(
      LOGS.map(async (l) => ({
        id: l.id,
        h: String(await xx(l.message)),
        b: Number(BigInt.asUintN(64, await xx(l.level)) % 7n),
      })),
    );
    assert.deepEqual(sortedJson(rows.results), sortedJson(want));
    await assert.rejects(run('print hash_xxhash64(1)'), /hashes strings/);
    await assert.rejects(run('print hash_xxhash64("a", "b")'), /modulus of 'hash_xxhash64' must be long/);
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const r = await run('Logs | project id, h = hash_sha256(message), m = hash_md5(level)');
    const expected = LOGS.map((l) => ({ id: l.id, h: hex('sha256', l.message), m: hex('md5', l.level) }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const merged = await run('Logs | summarize n = count() by level | extend h = hash_sha1(strcat(level, n))');
    const levels = [...new Set(LOGS.map((l) => l.level))];
    assert.deepEqual(
      sortedJson(merged.results),
      sortedJson(
        levels.map((level) => {
          const n = LOGS.filter((l) => l.level === level).length;
          return { level, n, h: hex('sha1', `${level}${n}`) };
        }),
      ),
    );
  });

  it('hash: XXH64 of strings, and of datetimes and timespans as their ticks; a modulus; other types refused', async () => {
    const when = new Date(Date.UTC(2021, 6, 14, 9, 30, 15, 250));
    const r = await one(
      'print s = tostring(hash("strata-host-7")), sm = hash("strata-host-7", 97), d = tostring(hash(datetime(2021-07-14 09:30:15.250))), ' +
        'dm = hash(datetime(2021-07-14 09:30:15.250), 10), t = tostring(hash(90m)), x = tostring(hash_xxhash64(90m)), e = tostring(hash(""))',
    );
    const hs = await xx('strata-host-7');
    const hd = await xxTicks(ticksOf(when));
    const ht = await xxTicks(90n * 60n * 10_000_000n);
    assert.deepEqual(r, {
      s: String(hs),
      sm: unsignedMod(hs, 97n),
      d: String(hd),
      dm: unsignedMod(hd, 10n),
      t: String(ht),
      x: String(ht),
      e: String(await xx('')),
    });
    await assert.rejects(run('print hash(42)'), /Kusto's byte form of a long is not documented/);
    await assert.rejects(run('print hash(1.5, 3)'), /byte form of a real/);
    await assert.rejects(run('print hash("a", 2, 3)'), /takes 1 to 2 arguments/);
    // Sampling by hash over stored rows: one worker and three agree with the JS hash of each timestamp.
    const rows = await run('Logs | where hash(timestamp, 4) == 1 | project id, d = tostring(hash(duration))');
    const want = [];
    for (const l of LOGS) {
      if (unsignedMod(await xxTicks(ticksOf(l.timestamp)), 4n) !== 1) continue;
      want.push({ id: l.id, d: l.duration === null ? '' : String(await xxTicks(l.duration)) });
    }
    assert.ok(want.length > 20 && want.length < LOGS.length - 20, 'the sample is a part of the rows');
    assert.deepEqual(sortedJson(rows.results), sortedJson(want));
  });

  it('zlib and gzip to base64 and back: round trips, hand-made streams, invalid input gives an empty string', async () => {
    const text = 'Strata ✓ — stored rows, stored rows, stored rows';
    const r = await one(
      `print z = zlib_compress_to_base64_string(${JSON.stringify(text)}), g = gzip_compress_to_base64_string(${JSON.stringify(text)}), ` +
        `hand = zlib_decompress_from_base64_string(${JSON.stringify(storedZlib(text))}), ` +
        'bad = zlib_decompress_from_base64_string("not base64!"), badg = gzip_decompress_from_base64_string("x0x0x0"), ' +
        'n = zlib_compress_to_base64_string(tostring(long(null)))',
    );
    assert.equal(zlib.inflateSync(Buffer.from(r.z as string, 'base64')).toString('utf8'), text);
    assert.equal(zlib.gunzipSync(Buffer.from(r.g as string, 'base64')).toString('utf8'), text);
    assert.equal(r.hand, text);
    assert.equal(r.bad, '');
    assert.equal(r.badg, '');
    assert.equal(zlib.inflateSync(Buffer.from(r.n as string, 'base64')).toString('utf8'), '');
    // A gzip header with a file name (FLG = FNAME) is refused as Kusto's reader refuses it.
    const named = zlib.gzipSync(Buffer.from('abc'));
    const withName = Buffer.concat([named.subarray(0, 10), Buffer.from('f.txt\0'), named.subarray(10)]);
    withName[3] = 0x08;
    assert.equal(zlib.gunzipSync(withName).toString(), 'abc', 'the test stream itself is valid gzip');
    assert.equal(await scalarOf(`gzip_decompress_from_base64_string("${withName.toString('base64')}")`), '');
    // Bytes that are not UTF-8 decode to an empty string, not to replacement characters.
    const latin1 = zlib.deflateSync(Buffer.from([0x66, 0xe9, 0x65])).toString('base64');
    assert.equal(await scalarOf(`zlib_decompress_from_base64_string("${latin1}")`), '');
    // Over stored rows (one worker and three), and back in the gateway's merge.
    const rows = await run(
      'Logs | extend c = gzip_compress_to_base64_string(message) | summarize by message, c | extend back = gzip_decompress_from_base64_string(c) | project message, back',
    );
    const messages = [...new Set(LOGS.map((l) => l.message))];
    assert.deepEqual(sortedJson(rows.results), sortedJson(messages.map((m) => ({ message: m, back: m }))));
    await assert.rejects(run('print zlib_compress_to_base64_string(5)'), /takes a string; this is a long/);
  });

  it('property: zlib and gzip round-trip random Unicode text; hash agrees with hash-wasm', async function () {
    this.timeout(60_000);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme', maxLength: 30 }), async (s) => {
        const q = JSON.stringify(s);
        const r = await one(
          `print z = zlib_decompress_from_base64_string(zlib_compress_to_base64_string(${q})), g = gzip_decompress_from_base64_string(gzip_compress_to_base64_string(${q})), h = tostring(hash(${q}))`,
        );
        assert.deepEqual(r, { z: s, g: s, h: String(await xx(s)) });
      }),
      { numRuns: 25 },
    );
  });

  it('property: digests of random Unicode text agree with Node’s crypto', async function () {
    this.timeout(60_000);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 20 }), async (s) => {
        const r = await one(`print m = hash_md5(${JSON.stringify(s)}), h = hash_sha256(${JSON.stringify(s)})`);
        assert.deepEqual(r, { m: hex('md5', s), h: hex('sha256', s) });
      }),
      { numRuns: 30 },
    );
  });
});
