import assert from 'node:assert/strict';
import { memoryDuckDB } from '@strata/common/testing';
import fc from 'fast-check';
import {
  BLOCK_TIMES_DDL,
  blockTimes,
  deleteBlockTimes,
  insertBlockTimes,
  rangeTimeCondition,
  readBlockTimes,
} from '../src/storage/block-times.js';
import { TERM_BLOCK_ROWS } from '../src/storage/term-index.js';

/**
 * A scan reads a segment by rowid ranges also bounded by the time bounds of the ranges' blocks
 * (block-times.ts, decision 0046), so that DuckDB skips row groups by the timestamp's statistics.
 * The bound must keep every row of the range: here on rows in time order (as segments are
 * written) and on rows in no order, with a block holding a NULL time (no bound for it).
 */
describe('time bounds of the blocks of a segment', function () {
  this.timeout(120_000);
  const db = memoryDuckDB();
  const ROWS = 5 * TERM_BLOCK_ROWS + 777; // six blocks, the last one short
  const NULL_ROW = 3 * TERM_BLOCK_ROWS + 5; // block 3 of the unordered table holds a NULL time

  before(async () => {
    await db.conn.run(BLOCK_TIMES_DDL);
    // Sorted: row i at i seconds. Unordered: times drawn by a hash of the row number.
    await db.conn.run(
      `CREATE TABLE sorted AS SELECT make_timestamp((1700000000 + i) * 1000000) AS "timestamp", i AS seq FROM range(${ROWS}) t(i) ORDER BY i`,
    );
    await db.conn.run(
      `CREATE TABLE unordered AS SELECT CASE WHEN i = ${NULL_ROW} THEN NULL ELSE make_timestamp(((1700000000 + hash(i) % 1000000) * 1000000)::BIGINT) END AS "timestamp", i AS seq FROM range(${ROWS}) t(i) ORDER BY i`,
    );
  });

  const count = async (table: string, where: string) =>
    Number((await db.conn.runAndReadAll(`SELECT count(*) FROM ${table} WHERE ${where}`)).getRows()[0]![0]);

  it('bounds a block by its own first and last time when the rows are in time order', async () => {
    const times = await blockTimes(db.conn, 'segment-sorted', 'sorted', ROWS);
    assert.equal(times.length, 6);
    const s = (i: number) => (1700000000 + i) * 1_000_000;
    assert.deepEqual(times[1], [s(TERM_BLOCK_ROWS), s(2 * TERM_BLOCK_ROWS - 1)]);
    assert.deepEqual(times[5], [s(5 * TERM_BLOCK_ROWS), s(ROWS - 1)], 'the short last block');
    assert.equal(
      rangeTimeCondition(times, TERM_BLOCK_ROWS, 3 * TERM_BLOCK_ROWS - 1),
      `"timestamp" BETWEEN make_timestamp(${s(TERM_BLOCK_ROWS)}::BIGINT) AND make_timestamp(${s(3 * TERM_BLOCK_ROWS - 1)}::BIGINT)`,
    );
    // The condition keeps exactly the rows of the range, and no row of a block outside it.
    const range = `rowid BETWEEN ${TERM_BLOCK_ROWS} AND ${3 * TERM_BLOCK_ROWS - 1}`;
    const condition = rangeTimeCondition(times, TERM_BLOCK_ROWS, 3 * TERM_BLOCK_ROWS - 1);
    assert.equal(await count('sorted', `${range} AND ${condition}`), 2 * TERM_BLOCK_ROWS);
    assert.equal(await count('sorted', condition), 2 * TERM_BLOCK_ROWS);
    // Read once per segment: a second call answers the same kept bounds.
    assert.equal(await blockTimes(db.conn, 'segment-sorted', 'no_such_table', ROWS), times);
  });

  it('reads listed block times from the catalog, and from the file for a segment listed without them', async () => {
    const times = await readBlockTimes(db.conn, 'unordered');
    assert.equal(times.length, 6, 'as many blocks as the rows hold');
    await insertBlockTimes(db.conn, 'segment-listed', times);
    // Listed: the catalog answers (the source is never read).
    assert.deepEqual(await blockTimes(db.conn, 'segment-listed', 'no_such_table', ROWS), times);
    // Not listed: read from the file.
    assert.deepEqual(await blockTimes(db.conn, 'segment-unlisted', 'unordered', ROWS), times);
    await deleteBlockTimes(db.conn, ['segment-listed']);
    assert.equal(Number((await db.conn.runAndReadAll('SELECT count(*) FROM strata_block_times')).getRows()[0]![0]), 0);
  });

  it('keeps every row of any range, whatever the order of the times; no bound over a block with a NULL time', async () => {
    const times = await blockTimes(db.conn, 'segment-unordered', 'unordered', ROWS);
    assert.equal(times[3], null, 'block 3 holds a NULL time');
    assert.equal(rangeTimeCondition(times, 3 * TERM_BLOCK_ROWS, 3 * TERM_BLOCK_ROWS + 10), '');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: ROWS - 1 }), fc.integer({ min: 0, max: ROWS - 1 }), async (a, b) => {
        const [first, last] = a <= b ? [a, b] : [b, a];
        const range = `rowid BETWEEN ${first} AND ${last}`;
        const condition = rangeTimeCondition(times, first, last);
        assert.equal(await count('unordered', condition ? `${range} AND ${condition}` : range), last - first + 1);
      }),
      { numRuns: 40, seed: 46 },
    );
  });
});
