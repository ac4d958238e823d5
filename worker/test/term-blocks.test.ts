import assert from 'node:assert/strict';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type TermHint, termKeys } from '@strata/common';
import fc from 'fast-check';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import { TERM_BLOCK_ROWS } from '../src/storage/term-index.js';
import {
  ACCOUNT,
  input,
  openEngine,
  part,
  purgeToEnd,
  seqParityPurge,
  type TestEntry,
  tempDir,
} from './helpers/storage-fixtures.js';
import { sqlString, termRegex } from './helpers/term-regex.js';

/**
 * The block filters of a segment (decision 0037): a scan given term hints reads only the rowid
 * ranges of a DuckDB segment whose blocks may hold the terms, and must still count exactly what a
 * plain scan counts, whatever the texts and terms; a segment without block filters (as an older
 * worker left it) is read whole and answers alike.
 */

/** Words each block draws its texts from: some in one block only, some everywhere, some odd. */
const COMMON = ['GET', 'timeout', 'db-3', 'ok', '\u212Aelvin', '\u017Ftatus', 'caf\u00E9'];
const blockWord = (b: number) => `rare${b}x`;
const ROWS = 3 * TERM_BLOCK_ROWS + 1_000; // four blocks, the last one short

/** Rows in time order: texts of common words, one block's own word in that block only, some nulls. */
function rows(): TestEntry[] {
  const t0 = Date.UTC(2024, 0, 1);
  const out: TestEntry[] = [];
  for (let i = 0; i < ROWS; i++) {
    const b = Math.floor(i / TERM_BLOCK_ROWS);
    const words = [COMMON[i % COMMON.length], i % 997 === 0 ? blockWord(b) : '', COMMON[(i * 7) % COMMON.length]];
    out.push({ ts: t0 + i, data: { message: i % 13 === 5 ? null : words.join(' '), seq: i } });
  }
  return out;
}

describe('term index per block of a segment', function () {
  this.timeout(600_000);
  let dirs: ReturnType<typeof tempDir>[] = [];
  let engines: StorageEngine[] = [];

  afterEach(async () => {
    for (const e of engines) await e.close();
    for (const d of dirs) d.cleanup();
    engines = [];
    dirs = [];
  });

  async function loaded(): Promise<{ e: StorageEngine; dir: string }> {
    const d = tempDir();
    dirs.push(d);
    const e = await openEngine(d.dir);
    engines.push(e);
    await e.append(input([part('T', rows())]));
    await e.sealAll();
    return { e, dir: d.dir };
  }

  /** The scan's relation and the count of `where` over it. */
  async function scanCount(e: StorageEngine, where: string, terms: TermHint[] = []) {
    const scan = await e.openScan(ACCOUNT, 'T', { terms });
    assert.ok(scan);
    try {
      const [row] = (
        await scan.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${scan.relation} WHERE ${where}`)
      ).getRowObjectsJS();
      return { n: (row as { n: number }).n, relation: scan.relation };
    } finally {
      await scan.release();
    }
  }

  const hintOf = (needle: string): TermHint[] => {
    const keys = termKeys(needle);
    return keys ? [{ column: 'message', anyOf: [keys] }] : [];
  };
  const whereOf = (needle: string) => `regexp_matches("message", ${sqlString(termRegex(needle, false))})`;
  const ranges = (relation: string) =>
    [...relation.matchAll(/rowid BETWEEN (\d+) AND (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);

  /** For random needles (block words, common words, pieces, absent ones): hinted count = plain count. */
  async function assertNeverMisses(e: StorageEngine, label: string) {
    const needleArb = fc.oneof(
      fc.constantFrom(...COMMON, blockWord(0), blockWord(1), blockWord(2), blockWord(3), 'RARE2X', 'absent', 'kelvin', 'status'),
      fc.integer({ min: 0, max: 3 }).map((b) => `rare${b}`),
    );
    await fc.assert(
      fc.asyncProperty(needleArb, async (needle) => {
        const plain = await scanCount(e, whereOf(needle));
        const hinted = await scanCount(e, whereOf(needle), hintOf(needle));
        assert.equal(hinted.n, plain.n, `${label}: has ${JSON.stringify(needle)}`);
      }),
      { numRuns: 40, seed: 37 },
    );
  }

  it('reads only the blocks that may hold the term, and answers as a plain scan', async () => {
    const { e } = await loaded();
    const [segment] = await e.listSegments(ACCOUNT);
    assert.equal(segment?.format, 'duckdb');
    const one = await scanCount(e, whereOf(blockWord(1)), hintOf(blockWord(1)));
    assert.deepEqual(ranges(one.relation), [[TERM_BLOCK_ROWS, 2 * TERM_BLOCK_ROWS - 1]], 'block 1 only');
    // Bounded by the block's own times too (row i at t0 + i ms), for DuckDB's row-group statistics (decision 0046).
    const us = (i: number) => (Date.UTC(2024, 0, 1) + i) * 1000;
    assert.ok(
      one.relation.includes(
        `rowid BETWEEN ${TERM_BLOCK_ROWS} AND ${2 * TERM_BLOCK_ROWS - 1} AND "timestamp" BETWEEN make_timestamp(${us(TERM_BLOCK_ROWS)}::BIGINT) AND make_timestamp(${us(2 * TERM_BLOCK_ROWS - 1)}::BIGINT)`,
      ),
    );
    assert.equal(one.n, (await scanCount(e, whereOf(blockWord(1)))).n);
    assert.ok(one.n > 0);
    const last = await scanCount(e, whereOf(blockWord(3)), hintOf(blockWord(3)));
    assert.deepEqual(ranges(last.relation), [[3 * TERM_BLOCK_ROWS, ROWS - 1]], 'the short last block, to the last row');
    // A word in every block: the segment is read whole, without a rowid range.
    assert.deepEqual(ranges((await scanCount(e, whereOf('timeout'), hintOf('timeout'))).relation), []);
    await assertNeverMisses(e, 'sealed');
  });

  it('keeps answering alike after compaction and a purge rewrite (their segments get block filters too)', async () => {
    const { e } = await loaded();
    await e.append(input([part('T', [{ ts: Date.UTC(2024, 1, 1), data: { message: 'late rare1x row', seq: ROWS } }])]));
    await e.sealAll();
    const segments = await e.listSegments(ACCOUNT);
    await e.compact({ accountId: ACCOUNT, schema: 'T', segmentIds: segments.map((s) => s.segmentId) });
    const compacted = await scanCount(e, whereOf(blockWord(1)), hintOf(blockWord(1)));
    assert.ok(ranges(compacted.relation).length > 0, 'the compacted segment is read by block');
    await assertNeverMisses(e, 'compacted');
    await purgeToEnd(e, 'T', seqParityPurge(1), 20_000);
    await assertNeverMisses(e, 'purged');
  });

  /** The listed block times (block-times.ts) by segment: [block, min µs, max µs] rows. */
  async function listedTimes(e: StorageEngine, dir: string): Promise<Map<string, [number, number, number][]>> {
    const ids = (await e.listSegments(ACCOUNT)).map((s) => s.segmentId);
    await e.close();
    engines = engines.filter((x) => x !== e);
    const db = await DuckDBInstance.create(path.join(dir, 'accounts', ACCOUNT, 'hot.duckdb'));
    const conn = await db.connect();
    const rows = (
      await conn.runAndReadAll('SELECT segment_id, block, min_us, max_us FROM strata_block_times ORDER BY ALL')
    ).getRows();
    conn.closeSync();
    db.closeSync();
    const out = new Map<string, [number, number, number][]>();
    for (const [id, block, lo, hi] of rows) {
      assert.ok(ids.includes(String(id)), 'only listed segments have block times');
      out.set(String(id), [...(out.get(String(id)) ?? []), [Number(block), Number(lo), Number(hi)]]);
    }
    return out;
  }

  it("lists each block's times with the segment at seal and compaction, and unlists them with it", async () => {
    const { e, dir } = await loaded();
    const [sealed] = await e.listSegments(ACCOUNT);
    await e.append(input([part('T', [{ ts: Date.UTC(2024, 1, 1), data: { message: 'late', seq: ROWS } }])]));
    await e.sealAll();
    const segments = await e.listSegments(ACCOUNT);
    await e.compact({ accountId: ACCOUNT, schema: 'T', segmentIds: segments.map((s) => s.segmentId) });
    const [compacted] = await e.listSegments(ACCOUNT);
    assert.notEqual(compacted!.segmentId, sealed!.segmentId);
    const listed = await listedTimes(e, dir);
    // Row i at t0 + i ms; the compacted segment has the late row last, in a block of its own.
    const us = (i: number) => (Date.UTC(2024, 0, 1) + i) * 1000;
    const expected: [number, number, number][] = [0, 1, 2].map((b) => [
      b,
      us(b * TERM_BLOCK_ROWS),
      us((b + 1) * TERM_BLOCK_ROWS - 1),
    ]);
    expected.push([3, us(3 * TERM_BLOCK_ROWS), Date.UTC(2024, 1, 1) * 1000]);
    assert.deepEqual([...listed.keys()], [compacted!.segmentId], "the replaced segments' block times went with them");
    assert.deepEqual(listed.get(compacted!.segmentId), expected);
  });

  it('reads a segment without block filters whole (as an older worker left it), and answers alike', async () => {
    const { e, dir } = await loaded();
    await e.close();
    engines = engines.filter((x) => x !== e);
    const db = await DuckDBInstance.create(path.join(dir, 'accounts', ACCOUNT, 'hot.duckdb'));
    const conn = await db.connect();
    await conn.run('DELETE FROM strata_term_blocks');
    conn.closeSync();
    db.closeSync();
    const reopened = await openEngine(dir);
    engines.push(reopened);
    const r = await scanCount(reopened, whereOf(blockWord(1)), hintOf(blockWord(1)));
    assert.deepEqual(ranges(r.relation), [], 'no block filters: no rowid range');
    assert.match(r.relation, /"seg_/, 'the segment is read (its segment filter may hold the term)');
    await assertNeverMisses(reopened, 'without block filters');
  });
});
