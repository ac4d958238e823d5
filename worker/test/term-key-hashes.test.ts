import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { xxHash32 } from 'js-xxhash';
import xxhash from 'xxhash-wasm';
import { attachSegmentFiles } from '../src/storage/segment-format.js';
import { TermFilter } from '../src/storage/term-filter.js';
import { buildTermIndex, TERM_BLOCK_ROWS } from '../src/storage/term-index.js';
import { KeyHashSet, TermKeyCutter } from '../src/storage/term-key-hashes.js';
import { tempDir } from './helpers/storage-fixtures.js';

/**
 * The seal's term keys are cut from bytes and hashed in JS (decision 0034); the filters they make
 * must be the ones the string rule of decision 0026 makes, which queries look up.
 */

/** The key rule on a decoded text, as decision 0026 states it: the reference for the byte cutter. */
function textKeys(text: string): Set<string> {
  const keys = new Set<string>();
  for (const run of text.match(/[A-Za-z0-9\u212a\u017f]+/g) ?? []) keys.add(run.toLowerCase().replaceAll('\u017f', 's'));
  return keys;
}

/** Characters that make the rule hard: both cases, the Kelvin sign and long s, other non-ASCII letters, separators. */
const PIECES = [
  'a',
  'Z',
  'k',
  'K',
  '\u212a',
  's',
  'S',
  '\u017f',
  '\u0130',
  '\u0345',
  '\u00e9',
  '\u0663',
  '7',
  ' ',
  '-',
  '.',
  '\u2028',
  '\u{1F600}',
  '\u212b',
];
const textArb = fc.oneof(
  fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((p) => p.join('')),
  fc.string({ unit: 'binary', maxLength: 60 }),
);

const pairsOf = (set: KeyHashSet) => {
  const out = new Set<string>();
  set.forEach((h1, h2) => {
    out.add(`${h1},${h2}`);
  });
  return out;
};

describe('term keys from bytes (term-key-hashes.ts)', () => {
  it("the seal's hash (js-xxhash) of a view into a larger buffer is the query side's xxhash-wasm h32Raw, for every length class and seed", async () => {
    const wasm = await xxhash();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), fc.nat(8), fc.constantFrom(0, 1, 0x9e3779b1), (bytes, pad, seed) => {
        const padded = new Uint8Array(pad + bytes.length + 3);
        padded.set(bytes, pad);
        assert.equal(xxHash32(padded.subarray(pad, pad + bytes.length), seed), wasm.h32Raw(bytes, seed));
      }),
      { numRuns: 2000 },
    );
  });

  it('cuts the keys of UTF-8 bytes that the string rule cuts from the decoded text, hashed alike', async () => {
    const wasm = await xxhash();
    fc.assert(
      fc.property(fc.array(textArb, { maxLength: 5 }), (texts) => {
        const cutter = new TermKeyCutter();
        const expected = new Set<string>();
        for (const t of texts) {
          const bytes = Buffer.from(t, 'utf8');
          // At an offset inside a larger buffer, as DuckDB's chunk memory hands them over.
          const padded = Buffer.concat([Buffer.from('AB'), bytes, Buffer.from('cd')]);
          cutter.addText(padded, 2, 2 + bytes.length);
          for (const k of textKeys(bytes.toString('utf8'))) expected.add(`${wasm.h32(k, 0)},${wasm.h32(k, 1)}`);
        }
        assert.deepEqual(pairsOf(cutter.keys), expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('a filter holds every key it was built with, whatever its size (no false negatives)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 300 }), async (keys) => {
        const filter = await TermFilter.of(keys, keys.length);
        for (const k of keys) assert.ok(filter.mayHold(k), k);
      }),
      { numRuns: 300 },
    );
  });

  it('a set of hash pairs keeps each pair once, through growth', () => {
    const set = new KeyHashSet();
    for (let round = 0; round < 2; round++) for (let i = 0; i < 20_000; i++) set.add((i * 2654435761) >>> 0, i % 7);
    assert.equal(set.size, 20_000);
    let seen = 0;
    set.forEach(() => {
      seen++;
    });
    assert.equal(seen, 20_000);
  });

  it('builds the filter of the string rule from a segment file (distinct values grouped before JS)', async () => {
    const d = tempDir();
    const db = await DuckDBInstance.create(path.join(d.dir, 'x.duckdb'), { threads: '1' });
    const conn = await db.connect();
    try {
      const texts: (string | null)[] = fc.sample(textArb, { numRuns: 3000, seed: 18 });
      texts.push(null, '', 'Timeout after 2179ms', 'timeout', `${'x'.repeat(300)} \u212Aelvin`);
      await conn.run('CREATE TABLE t (message VARCHAR, host VARCHAR)');
      const appender = await conn.createAppender('t');
      for (const [i, t] of texts.entries()) {
        if (t === null) appender.appendNull();
        else appender.appendVarchar(t);
        appender.appendVarchar(`web-${i % 3}`);
        appender.endRow();
      }
      appender.closeSync();
      const file = path.join(d.dir, 'seg.parquet');
      await conn.run(`COPY t TO '${file}' (FORMAT parquet)`);
      const index = await buildTermIndex(conn, file, 'parquet', [
        { name: 'message', type: 'String' },
        { name: 'host', type: 'String' },
        { name: 'seq', type: 'Int64' },
      ]);
      assert.deepEqual([...index.keys()].sort(), ['host', 'message']);
      for (const [column, values] of [
        ['message', texts],
        ['host', ['web-0', 'web-1', 'web-2']],
      ] as const) {
        const keys = new Set<string>();
        for (const t of values) if (t !== null) for (const k of textKeys(Buffer.from(t, 'utf8').toString('utf8'))) keys.add(k);
        const expected = await TermFilter.of(keys, keys.size);
        const built = index.get(column)!;
        assert.equal(built.keyCount, keys.size, column);
        assert.deepEqual(built.bits, expected.bits, column);
        for (const k of keys) assert.ok(built.mayHold(k), `${column}: ${k}`);
      }
    } finally {
      conn.closeSync();
      db.closeSync();
      d.cleanup();
    }
  });
  it('keeps the segment filter of a column whose keys summed over one window of blocks pass the bound', async () => {
    // Six blocks in one window (term-blocks.ts), each holding all 80 words: 480 block keys, past 4 × 100, yet 80 distinct.
    const d = tempDir();
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      const file = path.join(d.dir, `${randomUUID()}.duckdb`);
      await conn.run(`ATTACH '${file}' AS w`);
      await conn.run(`CREATE TABLE w."rows" AS SELECT 'w' || (i % 80) AS message FROM range(${6 * TERM_BLOCK_ROWS}) t(i)`);
      await conn.run('DETACH w');
      await attachSegmentFiles(conn, [file]);
      const columns = [{ name: 'message', type: 'String' as const }];
      const bounded = (await buildTermIndex(conn, file, 'duckdb', columns, 100)).get('message');
      assert.ok(bounded, 'a segment filter');
      assert.equal(bounded.keyCount, 80);
      assert.equal(bounded.blocks, undefined, 'no block filters past the bound');
      assert.ok(bounded.mayHold('w7'));
      const full = (await buildTermIndex(conn, file, 'duckdb', columns)).get('message');
      assert.equal(full?.blocks?.length, 6);
      assert.deepEqual(full?.bits, bounded.bits, 'the same segment filter either way');
    } finally {
      conn.closeSync();
      db.closeSync();
      d.cleanup();
    }
  });
});
