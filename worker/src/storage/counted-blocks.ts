/**
 * A bare count over a time range, with the edge segments split by their blocks' times
 * (block-times.ts; docs/decisions/0046-fixed-costs-on-one-segment.md): the blocks wholly inside
 * the range are counted from their row counts, the blocks wholly outside are left out, and only
 * the blocks the range's bounds cut (or whose times are unknown) are read, by rowid range and
 * bounded by their own times so that DuckDB reads their row groups alone.
 *
 * Why: since compaction settles a worker's rows into one large segment (decision 0042), every
 * count over a time range meets that segment as an edge, and DuckDB decoded the timestamps of
 * every row group the range touches: `count, last day` over 10 M rows read ~1.4 M timestamps
 * (~2 ms), where the catalog answers `count, 7 days`. Exact: a block's row count is the number of
 * its rowids (0 to n-1 in a segment file, term-blocks.ts), and a block inside the range has every
 * row's time between its own min and max (a block holding a NULL time has no bounds and is read).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { blockTimes, rowRangeBranch } from './block-times.js';
import { type CountedRelation, unionRelation } from './scan.js';
import { maxRowRanges, TERM_BLOCK_ROWS } from './term-blocks.js';

/** `counted` with its edge segments split by block (the same count), or as it is when it has none. */
export async function countedByBlocks(connection: DuckDBConnection, counted: CountedRelation): Promise<CountedRelation> {
  const edges = counted.edgeBlocks;
  if (!edges) return counted;
  const { fromUs, toUs } = edges.range;
  let catalogRows = counted.catalogRows;
  const parts = [...edges.others];
  for (const s of edges.segments) {
    const times = await blockTimes(connection, s.segmentId, s.source, s.rowCount);
    let insideRows = 0;
    const ranges: [number, number][] = [];
    for (const [b, t] of times.entries()) {
      const first = b * TERM_BLOCK_ROWS;
      const last = Math.min(s.rowCount, first + TERM_BLOCK_ROWS) - 1;
      if (t && (fromUs === undefined || t[0] >= fromUs) && (toUs === undefined || t[1] < toUs)) {
        insideRows += last - first + 1;
        continue;
      }
      if (t && ((fromUs !== undefined && t[1] < fromUs) || (toUs !== undefined && t[0] >= toUs))) continue;
      const previous = ranges[ranges.length - 1];
      if (previous && previous[1] === first - 1) previous[1] = last;
      else ranges.push([first, last]);
    }
    if (ranges.length > maxRowRanges(times.length)) {
      // Cut in too many places (times out of order): the segment read whole, as before.
      parts.push(`${s.select}${edges.where}`);
      continue;
    }
    catalogRows += insideRows;
    for (const [first, last] of ranges) parts.push(rowRangeBranch(s.select, edges.where, times, first, last));
  }
  return { catalogRows, rest: unionRelation(parts, edges.columns) };
}
