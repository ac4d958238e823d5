/**
 * The block filters of a 'duckdb' segment's String columns (decision 0037), built so that they
 * scale with the segment (docs/decisions/0042-large-segments.md): compaction merges segments up
 * to 1 GB (30 M bench rows, 1,831 blocks), and a filter per block must stay worth its cost there.
 *
 *  - The pass over a column goes window by window (WINDOW_BLOCKS blocks of rows at a time, read
 *    by `rowid BETWEEN`), turning each block's keys into its filter at once: what it holds is the
 *    segment's key set (bounded by the caller's maxKeys, as the segment filter always was) and one
 *    window's keys, not every block's keys (a 30 M-row message column sums ~10 M block keys).
 *  - A block filter's false-positive rate shrinks with the number of blocks (blockBitsPerKey): a
 *    term absent from a block passes its filter with probability p, so a segment of n blocks reads
 *    about n·p blocks for nothing; at 10 bits a key (p ≈ 1 %) a 1,831-block segment read ~18 of
 *    them for a term in one block, more ranges than a scan reads range by range.
 *  - A scan reads a segment range by range up to maxRowRanges ranges, a bound that grows with the
 *    segment: each range is one more UNION ALL branch, the whole segment is every block.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, visitChunkStrings } from '@strata/common';
import { BITS_PER_KEY, TermFilter } from './term-filter.js';
import { KeyHashSet, TermKeyCutter } from './term-key-hashes.js';

/**
 * Rows per block: 8 DuckDB vectors. DuckDB skips the vectors outside a `rowid BETWEEN` range of a
 * table scan (measured: a 2,048-row range of a 600,000-row segment 0.8 ms against 116 ms for the
 * whole message column), so blocks finer than a row group (122,880 rows) pay off; finer still
 * would cost more filters and catalog rows per segment. (It still checks the rowid filter on
 * every vector of the table, which grew with compacted segments: a scan also bounds each range
 * by its blocks' times, so DuckDB skips the other row groups — block-times.ts, decision 0046.)
 */
export const TERM_BLOCK_ROWS = 16_384;

/** A filter of the term keys of rows [firstRow, firstRow + rowCount) of a segment. */
export interface BlockFilter {
  firstRow: number;
  rowCount: number;
  filter: TermFilter;
}

/**
 * Blocks per window of the build: 64 blocks are ~1 M rows, as many as a seal writes (one window,
 * as before windows existed), and a window's keys stay a few MB.
 */
export const WINDOW_BLOCKS = 64;

/** Texts per block that the distinct values of a block are concatenated into (term-index.ts VALUE_GROUPS' reason). */
const BLOCK_VALUE_GROUPS = 64;

/**
 * Bits per key of the block filters of a segment of `blockCount` blocks: enough that a term in
 * no block passes about a quarter of a block filter per segment (false-positive rate
 * p = 1 / (4 · blocks), bits = log2(1/p) / ln 2), and never fewer than a segment filter's 10. A
 * sealed segment (~37 blocks) keeps 10 bits; a 1 GB compacted one (1,831 blocks) gets 19.
 */
export function blockBitsPerKey(blockCount: number): number {
  return Math.max(BITS_PER_KEY, Math.round(Math.log2(4 * Math.max(1, blockCount)) / Math.LN2));
}

/**
 * The most rowid ranges a scan reads a segment of `blockCount` blocks by, range by range (more:
 * the whole segment). 8 for segments up to 256 blocks (decision 0037's bound); a larger segment
 * one range per 32 blocks, so the ranges read stay a small part of what the whole would cost.
 */
export function maxRowRanges(blockCount: number): number {
  return Math.max(8, Math.floor(blockCount / 32));
}

/** What the block pass over a column found (columnBlockFilters). */
export type BlockPass =
  /** The segment's key set and the filter of each block holding a non-null value. */
  | { kind: 'filters'; whole: KeyHashSet; blocks: BlockFilter[] }
  /**
   * More than maxKeys distinct keys in the segment: no filter at all. The caller does not look
   * again for a segment filter, which would hold the same keys: on a nearly unique column of a
   * compacted segment (ids, trace ids) that second pass cost a DISTINCT over every value, then
   * cutting and hashing maxKeys keys, only to be thrown away.
   */
  | { kind: 'too-many-keys' }
  /** Past 4 × maxKeys keys summed over one window's blocks: the segment filter alone may still fit. */
  | { kind: 'window-bound' };

/**
 * The term keys of one column of a 'duckdb' segment file, as the segment's key set (the same
 * pairs as term-index.ts columnKeys finds, so the same segment filter) and one filter per block
 * holding a non-null value, in one pass over the column, window by window. It stops at the first
 * window past `maxKeys` distinct keys in the segment, or past 4 × maxKeys keys summed over one
 * window's blocks (what bounds the pass's memory; the caller then builds the segment filter alone).
 */
export async function columnBlockFilters(
  conn: DuckDBConnection,
  source: string,
  column: string,
  maxKeys: number,
  windowBlocks = WINDOW_BLOCKS,
): Promise<BlockPass> {
  const c = quoteIdentifier(column);
  const [[count]] = (await conn.runAndReadAll(`SELECT count(*) FROM ${source}`)).getRows() as [[bigint]];
  const rows = Number(count);
  const bitsPerKey = blockBitsPerKey(Math.ceil(rows / TERM_BLOCK_ROWS));
  const whole = new KeyHashSet();
  const blocks: BlockFilter[] = [];
  const windowRows = windowBlocks * TERM_BLOCK_ROWS;
  let largestBlock = 0;
  for (let first = 0; first < rows; first += windowRows) {
    const result = await conn.stream(
      `SELECT blk, string_agg(v, ' ') FROM (SELECT DISTINCT (rowid // ${TERM_BLOCK_ROWS})::INTEGER AS blk, ${c} AS v
         FROM ${source} WHERE rowid BETWEEN ${first} AND ${first + windowRows - 1} AND ${c} IS NOT NULL)
       GROUP BY blk, hash(v) % ${BLOCK_VALUE_GROUPS}`,
    );
    const cutters = new Map<number, TermKeyCutter>();
    let keys = 0;
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const blockOf = chunk.getColumnValues(0) as number[];
      visitChunkStrings(chunk, 1, (bytes, start, end, row) => {
        const block = blockOf[row]!;
        let cutter = cutters.get(block);
        if (!cutter) {
          // Blocks of a column hold about as many keys as each other: room for the largest so far.
          cutter = new TermKeyCutter(largestBlock);
          cutters.set(block, cutter);
        }
        const before = cutter.keys.size;
        cutter.addText(bytes, start, end);
        keys += cutter.keys.size - before;
      });
      // Keys repeat across blocks: bound the window's sum so a column far past the limit stops early.
      if (keys > 4 * maxKeys) return { kind: 'window-bound' };
    }
    for (const [block, cutter] of [...cutters].sort((a, b) => a[0] - b[0])) {
      largestBlock = Math.max(largestBlock, cutter.keys.size);
      whole.addAll(cutter.keys);
      blocks.push({
        firstRow: block * TERM_BLOCK_ROWS,
        rowCount: TERM_BLOCK_ROWS,
        filter: await TermFilter.ofKeyHashes(cutter.keys, bitsPerKey),
      });
    }
    if (whole.size > maxKeys) return { kind: 'too-many-keys' };
  }
  return { kind: 'filters', whole, blocks };
}
