import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import xxhash from 'xxhash-wasm';
import type { SegmentInfo } from '../src/storage/catalog.js';
import { attachSegmentFiles, segmentSources } from '../src/storage/segment-format.js';
import { blockBitsPerKey, columnBlockFilters, maxRowRanges, TERM_BLOCK_ROWS } from '../src/storage/term-blocks.js';
import { TermFilter } from '../src/storage/term-filter.js';
import {
  buildTermIndex,
  insertTermIndex,
  type SegmentTermIndex,
  segmentRowRanges,
  TERM_BLOCKS_DDL,
  TERM_INDEX_DDL,
} from '../src/storage/term-index.js';
import { tempDir } from './helpers/storage-fixtures.js';

/**
 * Block filters that scale with the segment (docs/decisions/0042-large-segments.md): the build
 * goes window by window and gives the same filters as one pass; a large segment's block filters
 * have fewer false positives; a scan reads a large segment range by range past decision 0037's
 * eight ranges.
 */
describe('block filters of large segments', function () {
  this.timeout(300_000);

  it('builds the same filters window by window as in one window, and keeps block filters past a summed bound', async () => {
    const d = tempDir();
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      // Nine blocks (the last one short): every block holds the 80 common words, block b also
      // its own word, and some values are NULL.
      const rows = 8 * TERM_BLOCK_ROWS + 777;
      const file = path.join(d.dir, `${randomUUID()}.duckdb`);
      await conn.run(`ATTACH '${file}' AS w`);
      await conn.run(
        `CREATE TABLE w."rows" AS SELECT CASE WHEN i % 11 = 3 THEN NULL
           ELSE 'w' || (i % 80) || CASE WHEN i % 700 = 17 THEN ' own' || (i // ${TERM_BLOCK_ROWS}) ELSE '' END END AS message
           FROM range(${rows}) t(i) ORDER BY i`,
      );
      await conn.run('DETACH w');
      await attachSegmentFiles(conn, [file]);
      const [source] = segmentSources([file], 'duckdb');
      const one = await columnBlockFilters(conn, source!, 'message', 1_000);
      assert.ok(one.kind === 'filters');
      assert.equal(one.blocks.length, 9);
      for (const windowBlocks of [1, 2, 4]) {
        const windowed = await columnBlockFilters(conn, source!, 'message', 1_000, windowBlocks);
        assert.ok(windowed.kind === 'filters', `window of ${windowBlocks}`);
        assert.deepEqual(
          windowed.blocks.map((b) => [b.firstRow, b.rowCount, b.filter.hashes, [...b.filter.bits]]),
          one.blocks.map((b) => [b.firstRow, b.rowCount, b.filter.hashes, [...b.filter.bits]]),
          `window of ${windowBlocks}: the same block filters`,
        );
        assert.equal(windowed.whole.size, one.whole.size);
      }
      // Each block's own word is in that block's filter; 80 + 9 distinct keys in the segment.
      assert.equal(one.whole.size, 89);
      for (const [b, block] of one.blocks.entries()) assert.ok(block.filter.mayHold(`own${b}`));
      // 9 blocks × ~81 keys sum past 4 × 100 in one window (no block filters, the segment filter
      // alone), but not in windows of two blocks: a large segment keeps its block filters.
      const columns = [{ name: 'message', type: 'String' as const }];
      const oneWindow = await columnBlockFilters(conn, source!, 'message', 100);
      assert.equal(oneWindow.kind, 'window-bound');
      const windowed = await columnBlockFilters(conn, source!, 'message', 100, 2);
      assert.equal(windowed.kind === 'filters' && windowed.blocks.length, 9);
      // Past maxKeys distinct keys in the segment: nothing, whatever the window.
      assert.equal((await columnBlockFilters(conn, source!, 'message', 88, 1)).kind, 'too-many-keys');
      // …and buildTermIndex keeps no filter for the column: no segment filter either.
      assert.equal((await buildTermIndex(conn, file, 'duckdb', columns, 88)).has('message'), false);
      assert.equal((await buildTermIndex(conn, file, 'duckdb', columns, 89)).get('message')?.keyCount, 89);
      const index = (await buildTermIndex(conn, file, 'duckdb', columns)).get('message');
      assert.equal(index?.keyCount, 89);
      assert.equal(index?.blocks?.length, 9);
    } finally {
      conn.closeSync();
      db.closeSync();
      d.cleanup();
    }
  });

  it('sizes block filters by the number of blocks: 10 bits a key for a sealed segment, fewer false positives for a large one', async () => {
    assert.equal(blockBitsPerKey(1), 10);
    assert.equal(blockBitsPerKey(37), 10, 'a sealed segment (600,000 rows): as before');
    assert.equal(blockBitsPerKey(611), 16, '10 M rows');
    assert.equal(blockBitsPerKey(1831), 19, '30 M rows (1 GB)');
    for (let n = 1; n < 5000; n++) assert.ok(blockBitsPerKey(n + 1) >= blockBitsPerKey(n));
    // Measured false positives of a 30 M-row segment's block filter: about 1 / (4 · 1,831) of the
    // absent keys (expected ~14 of 100,000; 10 bits a key would pass ~1,000).
    const hasher = await xxhash();
    const { KeyHashSet } = await import('../src/storage/term-key-hashes.js');
    const keys = new KeyHashSet();
    for (let i = 0; i < 5_000; i++) keys.add(hasher.h32(`k${i}`, 0), hasher.h32(`k${i}`, 1));
    const filter = await TermFilter.ofKeyHashes(keys, blockBitsPerKey(1831));
    for (let i = 0; i < 5_000; i++) assert.ok(filter.mayHold(`k${i}`));
    let passed = 0;
    for (let i = 0; i < 100_000; i++) if (filter.mayHold(`absent${i}`)) passed++;
    assert.ok(passed < 60, `${passed} of 100,000 absent keys passed`);
  });

  it('looks keys up by their hashes as by the keys themselves, at any size', async () => {
    const hasher = await xxhash();
    const { KeyHashSet } = await import('../src/storage/term-key-hashes.js');
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,8}$/), { maxLength: 200 }),
        fc.array(fc.stringMatching(/^[a-z0-9]{1,8}$/), { maxLength: 50 }),
        fc.integer({ min: 1, max: 30 }),
        async (added, probes, bitsPerKey) => {
          const keys = new KeyHashSet();
          for (const k of added) keys.add(hasher.h32(k, 0), hasher.h32(k, 1));
          const filter = await TermFilter.ofKeyHashes(keys, bitsPerKey);
          for (const k of [...added, ...probes])
            assert.equal(filter.mayHoldHashes(hasher.h32(k, 0), hasher.h32(k, 1)), filter.mayHold(k), k);
          for (const k of added) assert.ok(filter.mayHold(k));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a large segment range by range past eight ranges, up to its bound', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const conn = await db.connect();
    try {
      await conn.run(TERM_INDEX_DDL);
      await conn.run(TERM_BLOCKS_DDL);
      const blockCount = 600; // ~9.8 M rows: maxRowRanges 18
      assert.equal(maxRowRanges(blockCount), 18);
      assert.equal(maxRowRanges(37), 8);
      const rowCount = blockCount * TERM_BLOCK_ROWS - 100;
      // A segment whose block b holds the word `hay` and, in the blocks listed, `needle`.
      const segment = async (needleBlocks: number[]): Promise<SegmentInfo> => {
        const segmentId = randomUUID();
        const blocks = [];
        for (let b = 0; b < blockCount; b++) {
          const words = needleBlocks.includes(b) ? ['hay', 'needle'] : ['hay'];
          blocks.push({
            firstRow: b * TERM_BLOCK_ROWS,
            rowCount: TERM_BLOCK_ROWS,
            filter: await TermFilter.of(words, words.length),
          });
        }
        const whole = await TermFilter.of(['hay', 'needle'], 2);
        const index: SegmentTermIndex = new Map([['message', Object.assign(whole, { keyCount: 2, blocks })]]);
        await insertTermIndex(conn, segmentId, index);
        return { segmentId, format: 'duckdb', rowCount } as SegmentInfo;
      };
      const hints = [{ column: 'message', anyOf: [['needle']] }];
      // 12 separate blocks: 12 ranges (decision 0037 read the whole segment past 8).
      const twelve = Array.from({ length: 12 }, (_, i) => 7 + i * 41);
      const s12 = await segment(twelve);
      const r12 = (await segmentRowRanges(conn, [s12], hints)).get(s12.segmentId);
      assert.deepEqual(
        r12,
        twelve.map((b) => [b * TERM_BLOCK_ROWS, (b + 1) * TERM_BLOCK_ROWS - 1]),
      );
      // Neighbouring blocks make one range; the last block ends at the last row.
      const s2 = await segment([3, 4, blockCount - 1]);
      assert.deepEqual((await segmentRowRanges(conn, [s2], hints)).get(s2.segmentId), [
        [3 * TERM_BLOCK_ROWS, 5 * TERM_BLOCK_ROWS - 1],
        [(blockCount - 1) * TERM_BLOCK_ROWS, rowCount - 1],
      ]);
      // Past the bound (19 ranges): the whole segment.
      const s19 = await segment(Array.from({ length: 19 }, (_, i) => i * 30));
      assert.equal((await segmentRowRanges(conn, [s19], hints)).has(s19.segmentId), false);
      // No block holds it: no range at all (the segment filter passed it: a false positive).
      const s0 = await segment([]);
      assert.deepEqual((await segmentRowRanges(conn, [s0], hints)).get(s0.segmentId), []);
    } finally {
      conn.closeSync();
      db.closeSync();
    }
  });
});
