/**
 * Hash functions (issue 17, family 4, part). Expected digests come from Node's crypto (a
 * different implementation than DuckDB's). `print` runs in the gateway's merge database; the
 * query over Logs runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { xxhash64 } from 'hash-wasm';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;
const hex = (algorithm: string, s: string) => createHash(algorithm).update(s, 'utf8').digest('hex');
/** XXH64 by hash-wasm (a WASM build of the reference C code; the engine uses @node-rs/xxhash, a Rust one). */
const xx = async (s: string) => BigInt.asIntN(64, BigInt(`0x${await xxhash64(s)}`));

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
