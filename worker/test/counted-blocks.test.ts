import assert from 'node:assert/strict';
import { type FragmentStatement, runFragment } from '@strata/common';
import fc from 'fast-check';
import { countWithCatalog } from '../src/query/catalog-count.js';
import { countedByBlocks } from '../src/storage/counted-blocks.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import { TERM_BLOCK_ROWS } from '../src/storage/term-index.js';
import { ACCOUNT, input, openEngine, part, type TestEntry, tempDir } from './helpers/storage-fixtures.js';

/**
 * A bare count over a time range splits an edge segment by its blocks' times (counted-blocks.ts,
 * decision 0046): blocks inside the range counted from their row counts, the cut ones read by
 * rowid range. For bounds at, just before and just after row times, block edges and anywhere,
 * the answer must equal the count over the whole relation.
 */
describe('bare count of an edge segment by its blocks', function () {
  this.timeout(300_000);
  const ROWS = 4 * TERM_BLOCK_ROWS + 1_000; // five blocks, the last one short
  const base = Date.UTC(2024, 0, 1);
  /** Row i at base + i seconds (in time order, as a segment is written). */
  const atUs = (i: number) => (base + i * 1000) * 1000;
  const COUNT: FragmentStatement = {
    sql: 'WITH "s0" AS (SELECT NULL AS "__none" FROM "__strata_source__"), "s1" AS (SELECT count(*) AS "c3" FROM "s0") SELECT "c3" AS "c3" FROM "s1"',
    params: [],
    sourceColumns: [],
    columns: [{ id: 'c3', type: 'BIGINT' }],
  };
  let dir: ReturnType<typeof tempDir>;
  let engine: StorageEngine;

  before(async () => {
    dir = tempDir();
    engine = await openEngine(dir.dir);
    const rows: TestEntry[] = [];
    for (let i = 0; i < ROWS; i++) rows.push({ ts: base + i * 1000, data: { seq: i } });
    await engine.append(input([part('T', rows)]));
    await engine.sealAll();
    // and a few hot rows inside the range of every bound below
    await engine.append(input([part('T', [{ ts: base + 100_000, data: { seq: -1 } }])]));
  });
  after(async () => {
    await engine.close();
    dir.cleanup();
  });

  async function counts(fromUs?: number, toUs?: number) {
    const scan = (await engine.openScan(ACCOUNT, 'T', { fromUs, toUs }))!;
    try {
      const available = scan.columns.map((c) => c.name);
      const signal = new AbortController().signal;
      const one = async (batches: AsyncIterable<{ rowCount: number; columns: unknown[][] }>) => {
        const values: unknown[] = [];
        for await (const b of batches) values.push(...b.columns[0]!);
        assert.equal(values.length, 1);
        return values[0] as bigint;
      };
      const split = await countedByBlocks(scan.connection, scan.counted);
      return {
        blocks: await one(countWithCatalog(scan.connection, split, available, COUNT, signal)),
        whole: await one(runFragment(scan.connection, scan.relation, available, COUNT, signal)),
        split,
      };
    } finally {
      await scan.release();
    }
  }

  it('counts the blocks inside the range from their row counts and reads only the cut block', async () => {
    const [segment] = await engine.listSegments(ACCOUNT);
    assert.equal(segment?.rowCount, ROWS);
    // From the middle of block 1 to the end: blocks 2-4 counted, block 1 read from its rowid range.
    const from = atUs(TERM_BLOCK_ROWS + 100);
    const { blocks, whole, split } = await counts(from);
    assert.equal(blocks, whole);
    assert.equal(blocks, BigInt(ROWS - (TERM_BLOCK_ROWS + 100)));
    assert.equal(split.catalogRows, ROWS - 2 * TERM_BLOCK_ROWS);
    assert.deepEqual(
      [...split.rest.matchAll(/rowid BETWEEN (\d+) AND (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]),
      [[TERM_BLOCK_ROWS, 2 * TERM_BLOCK_ROWS - 1]],
    );
  });

  it('answers as the whole relation for bounds at, around and between row times and block edges', async () => {
    const bounds: (number | undefined)[] = [undefined, atUs(-5), atUs(ROWS + 5)];
    for (let b = 0; b <= 5; b++) {
      const i = Math.min(b * TERM_BLOCK_ROWS, ROWS - 1);
      for (const at of [atUs(i - 1), atUs(i), atUs(i + 1)]) bounds.push(at - 1, at, at + 1);
    }
    for (const from of bounds)
      for (const to of bounds) {
        if (from !== undefined && to !== undefined && to <= from) continue;
        const { blocks, whole } = await counts(from, to);
        assert.equal(blocks, whole, `from ${from} to ${to}`);
      }
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -10, max: ROWS + 10 }), fc.integer({ min: 1, max: ROWS }), async (first, length) => {
        const { blocks, whole } = await counts(atUs(first) + 1, atUs(first + length));
        assert.equal(blocks, whole);
      }),
      { numRuns: 40, seed: 46 },
    );
  });
});
