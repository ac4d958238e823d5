/**
 * The time bounds of each term block (TERM_BLOCK_ROWS rows by rowid) of a 'duckdb' segment, so a
 * scan that reads a segment by rowid ranges (term-index.ts segmentRowRanges) can also bound each
 * range by time (docs/decisions/0046-fixed-costs-on-one-segment.md).
 *
 * Why: DuckDB (1.5) keeps no statistics for rowid, so a `rowid BETWEEN` filter is checked on every
 * vector of the table: one 16,384-row block of a settled 10 M-row segment cost 8–16 ms (10 M rows
 * scanned, measured with DuckDB's operator_rows_scanned), growing with the segment. A filter on
 * the timestamp column is checked against each row group's statistics first, and a segment's rows
 * are written sorted by time, so the block's own time bounds leave DuckDB the one or two row
 * groups (122,880 rows) holding the block: 1.4–3 ms. The time condition only adds a bound every
 * row of the range meets (its block's min and max), so the range's rows are the same; were a
 * segment not sorted, it would only skip less.
 *
 * Listed with the segment's block filters (term-index.ts: at seal, compaction and purge rewrites
 * and when a segment arrives from another worker; one pass over its timestamps, which a query
 * would otherwise pay the first time it reads the segment by blocks: 150–360 ms for 10 M rows on
 * the loaded 2-core bench machine). A segment listed before this table existed gets them from its
 * file on first use. Read once per segment and kept for the process's life: a segment's rows
 * never change (a rewrite makes a new segment id, a copy on another worker holds the same rows).
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteLiteral } from '@strata/common';
import { TERM_BLOCK_ROWS } from './term-blocks.js';

/** One row per block of a listed 'duckdb' segment; NULL bounds for a block holding a NULL time. */
export const BLOCK_TIMES_DDL = `CREATE TABLE IF NOT EXISTS strata_block_times (
     segment_id VARCHAR NOT NULL,
     block BIGINT NOT NULL,
     min_us BIGINT,
     max_us BIGINT,
     PRIMARY KEY (segment_id, block))`;

/** Per block (index = first row / TERM_BLOCK_ROWS): its [min, max] time in µs, or null when unknown (a NULL time). */
export type BlockTimes = readonly ([number, number] | null)[];

/** Segments whose block times are kept (each ~16 bytes a block: 10 KB for 10 M rows). */
const MAX_SEGMENTS = 4096;
const cache = new Map<string, Promise<BlockTimes>>();

/**
 * The block times of segment `segmentId` (of `rowCount` rows): from the catalog, or for a segment
 * listed without them from `source` (its attached rows table), in the caller's snapshot, on first use.
 */
export function blockTimes(conn: DuckDBConnection, segmentId: string, source: string, rowCount: number): Promise<BlockTimes> {
  const hit = cache.get(segmentId);
  if (hit) return hit;
  const load = (async () => (await listedBlockTimes(conn, segmentId, rowCount)) ?? readBlockTimes(conn, source, rowCount))();
  // A failed read (an interrupted query) is not kept: the next scan reads again.
  load.catch(() => cache.delete(segmentId));
  if (cache.size >= MAX_SEGMENTS) cache.delete(cache.keys().next().value as string);
  cache.set(segmentId, load);
  return load;
}

/** The listed block times of a segment, or undefined when it was listed without them. */
async function listedBlockTimes(conn: DuckDBConnection, segmentId: string, rowCount: number): Promise<BlockTimes | undefined> {
  const rows = (
    await conn.runAndReadAll('SELECT block, min_us, max_us FROM strata_block_times WHERE segment_id = $1', [segmentId])
  ).getRows();
  const out = new Array<[number, number] | null>(Math.ceil(rowCount / TERM_BLOCK_ROWS)).fill(null);
  if (rows.length !== out.length) return undefined;
  for (const [block, lo, hi] of rows) {
    const i = Number(block);
    if (i >= out.length) return undefined;
    if (lo !== null && hi !== null) out[i] = [Number(lo), Number(hi)];
  }
  return out;
}

/** Block rows per INSERT statement (as term-index.ts's block filters). */
const ROWS_PER_INSERT = 100;

/** Lists a segment's block times, in the caller's transaction (the one listing the segment). */
export async function insertBlockTimes(conn: DuckDBConnection, segmentId: string, times: BlockTimes): Promise<void> {
  for (let first = 0; first < times.length; first += ROWS_PER_INSERT) {
    const values = times.slice(first, first + ROWS_PER_INSERT).map((t, i) => {
      // Numbers only (read back as integers) and a checked segment id.
      const bounds = t ? `${t[0]}, ${t[1]}` : 'NULL, NULL';
      return `(${quoteLiteral(segmentId)}, ${first + i}, ${bounds})`;
    });
    await conn.run(`INSERT OR REPLACE INTO strata_block_times VALUES ${values.join(', ')}`);
  }
}

/** Unlists the block times of segments (ids are UUIDs, checked by the caller). */
export async function deleteBlockTimes(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<void> {
  if (segmentIds.length === 0) return;
  await conn.run(`DELETE FROM strata_block_times WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`);
}

/**
 * The block times of a segment file, from its rows table `source` (`rowCount` rows; when not
 * given, as many blocks as the rows read hold).
 */
export async function readBlockTimes(conn: DuckDBConnection, source: string, rowCount?: number): Promise<BlockTimes> {
  const rows = (
    await conn.runAndReadAll(
      `SELECT rowid // ${TERM_BLOCK_ROWS} AS block, epoch_us(min("timestamp")), epoch_us(max("timestamp")), count(*) - count("timestamp")
         FROM ${source} GROUP BY ALL`,
    )
  ).getRows();
  const blocks =
    rowCount !== undefined ? Math.ceil(rowCount / TERM_BLOCK_ROWS) : Math.max(0, ...rows.map((r) => Number(r[0]) + 1));
  const out = new Array<[number, number] | null>(blocks).fill(null);
  for (const [block, lo, hi, nulls] of rows) {
    const i = Number(block);
    if (i < out.length && lo !== null && hi !== null && Number(nulls) === 0) out[i] = [Number(lo), Number(hi)];
  }
  return out;
}

/**
 * A condition bounding rows [first, last] of a segment by time, from its block times: the
 * lowest and highest time of the blocks the range covers; '' when a block's bounds are unknown.
 */
export function rangeTimeCondition(times: BlockTimes, first: number, last: number): string {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (let b = Math.floor(first / TERM_BLOCK_ROWS); b <= Math.floor(last / TERM_BLOCK_ROWS); b++) {
    const t = times[b];
    if (!t) return '';
    lo = Math.min(lo, t[0]);
    hi = Math.max(hi, t[1]);
  }
  // Numbers only (read back as integers), so inlining them is safe.
  return `"timestamp" BETWEEN make_timestamp(${lo}::BIGINT) AND make_timestamp(${hi}::BIGINT)`;
}

/**
 * The branch of a segment's `select` (ending in its `where`, which may be '') reading rows
 * [first, last] by rowid, bounded by those blocks' times so that DuckDB skips the other row groups
 * (a rowid filter alone is checked on every vector of the table). Used by the scan's term-block
 * ranges and by the count's cut edge blocks (counted-blocks.ts).
 */
export function rowRangeBranch(select: string, where: string, times: BlockTimes, first: number, last: number): string {
  const time = rangeTimeCondition(times, first, last);
  return `${select}${where ? `${where} AND` : ' WHERE'} rowid BETWEEN ${first} AND ${last}${time && ` AND ${time}`}`;
}
