/**
 * The per-segment term index (docs/decisions/0026-has-term-index.md): for each String column of a
 * segment, a Bloom filter (term-filter.ts) of the keys of every term its texts hold, kept in the
 * account's catalog next to the segment's own row. A scan given term hints (a fragment's constant
 * `has` conjuncts, common/src/query/term-hints.ts) leaves out the segments whose filters prove
 * that no row can pass; the statement's own term check still runs on the rest.
 *
 * Written wherever a segment is listed: at seal (sealer.ts), at compaction and purge rewrites
 * (compactor.ts rewriteSegments) and when a segment arrives from another worker (handoff.ts
 * adoptSegment), each in the transaction that lists the segment; unlisted with it (catalog.ts
 * deleteSegments, deleteTable). A segment without rows here (written before the index existed,
 * or with too many distinct terms) is simply scanned: nothing is migrated.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { blobValue, type DuckDBValue } from '@duckdb/node-api';
import { type ColumnSchema, quoteIdentifier, quoteLiteral, type TermHint, visitChunkStrings } from '@strata/common';
import { type BlockTimes, deleteBlockTimes, insertBlockTimes, readBlockTimes } from './block-times.js';
import type { SegmentInfo } from './catalog.js';
import { type SegmentFormat, segmentSources } from './segment-format.js';
import { type BlockFilter, columnBlockFilters, maxRowRanges, TERM_BLOCK_ROWS } from './term-blocks.js';
import { TERM_FILTER_VERSION, TermFilter, termHasher } from './term-filter.js';
import { type KeyHashSet, TermKeyCutter } from './term-key-hashes.js';

export { type BlockFilter, TERM_BLOCK_ROWS } from './term-blocks.js';

export const TERM_INDEX_DDL = `CREATE TABLE IF NOT EXISTS strata_term_index (
     segment_id VARCHAR NOT NULL,
     column_name VARCHAR NOT NULL,
     version INTEGER NOT NULL,
     hashes INTEGER NOT NULL,
     key_count BIGINT NOT NULL,
     bits BLOB NOT NULL,
     PRIMARY KEY (segment_id, column_name))`;

/**
 * The finer filters of a 'duckdb' segment (decision 0037): per String column, one filter per block
 * of TERM_BLOCK_ROWS consecutive rows of the segment's `rows` table (rows are numbered by rowid,
 * 0 to n-1, in the order written: sorted by time), for the blocks holding a non-null value. A
 * block without a row here holds no non-null value of the column, so no row of it passes a term
 * test. Written and deleted with the segment's own filters; a segment without block rows
 * (Parquet, written before this table existed, or a column past MAX_KEYS_PER_COLUMN) is read by
 * its segment filter alone.
 */
export const TERM_BLOCKS_DDL = `CREATE TABLE IF NOT EXISTS strata_term_blocks (
     segment_id VARCHAR NOT NULL,
     column_name VARCHAR NOT NULL,
     first_row BIGINT NOT NULL,
     row_count BIGINT NOT NULL,
     version INTEGER NOT NULL,
     hashes INTEGER NOT NULL,
     bits BLOB NOT NULL,
     PRIMARY KEY (segment_id, column_name, first_row))`;

/**
 * A column with more distinct keys than this in one segment gets no filter (it would cost
 * 1.25 bytes a key, and the build holds the keys in memory): its segments are scanned.
 */
export const MAX_KEYS_PER_COLUMN = 2_000_000;

/**
 * One segment's filters by column name (and per block, for 'duckdb' files), ready to be listed
 * with it; for a 'duckdb' file also its blocks' time bounds (block-times.ts).
 */
export type SegmentTermIndex = Map<string, TermFilter & { keyCount: number; blocks?: BlockFilter[] }> & {
  blockTimes?: BlockTimes;
};

/**
 * Distinct values of a column are concatenated in this many groups (by hash) before they reach JS:
 * a key never spans the separator, so the keys of a group's text are those of its values, and JS
 * reads a few long texts per chunk instead of one value at a time (a value longer than 12 bytes
 * costs a view of DuckDB's memory each: ~0.5 µs and garbage, more than cutting and hashing its keys).
 */
const VALUE_GROUPS = 1024;

/**
 * The term keys of one column of a segment file (its table source, decision 0025) as hash pairs
 * (term-key-hashes.ts), or undefined past MAX_KEYS_PER_COLUMN. Each distinct value once
 * (low-cardinality columns cost almost nothing), cut in JS from DuckDB's own bytes of the texts
 * (cutting in JS measured ~4x faster than DuckDB's regexp_extract_all on log messages; from
 * bytes instead of JS strings, see decision 0034).
 */
async function columnKeys(
  conn: DuckDBConnection,
  source: string,
  column: string,
  maxKeys: number,
): Promise<KeyHashSet | undefined> {
  const c = quoteIdentifier(column);
  const result = await conn.stream(
    `SELECT string_agg(v, ' ') FROM (SELECT DISTINCT ${c} AS v FROM ${source} WHERE ${c} IS NOT NULL) GROUP BY hash(v) % ${VALUE_GROUPS}`,
  );
  const cutter = new TermKeyCutter();
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return cutter.keys;
    visitChunkStrings(chunk, 0, cutter.addText);
    if (cutter.keys.size > maxKeys) return undefined;
  }
}

/** Builds the filters of a segment file written with `columns` (its String columns only). */
export async function buildTermIndex(
  conn: DuckDBConnection,
  file: string,
  format: SegmentFormat,
  columns: readonly ColumnSchema[],
  maxKeys = MAX_KEYS_PER_COLUMN,
): Promise<SegmentTermIndex> {
  const index: SegmentTermIndex = new Map();
  // A 'duckdb' file is read through its attachment: attach it before building.
  const [source] = segmentSources([file], format);
  // Every segment has the time column; a file written for a test of the filters alone may not.
  if (format === 'duckdb' && columns.some((c) => c.name === 'timestamp' && c.type === 'DateTime'))
    index.blockTimes = await readBlockTimes(conn, source!);
  for (const c of columns) {
    if (c.type !== 'String') continue;
    if (format === 'duckdb') {
      const pass = await columnBlockFilters(conn, source!, c.name, maxKeys);
      // Too many keys for any filter: none (the query side remembers "no filter" and scans).
      if (pass.kind === 'too-many-keys') continue;
      // Past the block pass's window bound (term-blocks.ts), the segment filter alone, as before
      // block filters existed: without it every query with a term would read the column.
      if (pass.kind === 'window-bound') {
        const whole = await columnKeys(conn, source!, c.name, maxKeys);
        if (whole) index.set(c.name, Object.assign(await TermFilter.ofKeyHashes(whole), { keyCount: whole.size }));
        continue;
      }
      const filter = await TermFilter.ofKeyHashes(pass.whole);
      index.set(c.name, Object.assign(filter, { keyCount: pass.whole.size, blocks: pass.blocks }));
      continue;
    }
    const keys = await columnKeys(conn, source!, c.name, maxKeys);
    if (!keys) continue;
    const filter = await TermFilter.ofKeyHashes(keys);
    index.set(c.name, Object.assign(filter, { keyCount: keys.size }));
  }
  return index;
}

/** Block rows per INSERT statement (a seal lists a few hundred: one statement each cost a round trip each). */
const BLOCK_ROWS_PER_INSERT = 100;

/** Lists a segment's filters, in the caller's transaction (the one listing the segment). */
export async function insertTermIndex(conn: DuckDBConnection, segmentId: string, index: SegmentTermIndex): Promise<void> {
  const blockRows: DuckDBValue[][] = [];
  for (const [column, f] of index) {
    await conn.run('INSERT OR REPLACE INTO strata_term_index VALUES ($1, $2, $3, $4, $5, $6)', [
      segmentId,
      column,
      TERM_FILTER_VERSION,
      f.hashes,
      BigInt(f.keyCount),
      blobValue(f.bits),
    ]);
    for (const b of f.blocks ?? [])
      blockRows.push([
        segmentId,
        column,
        BigInt(b.firstRow),
        BigInt(b.rowCount),
        TERM_FILTER_VERSION,
        b.filter.hashes,
        blobValue(b.filter.bits),
      ]);
  }
  if (index.blockTimes) await insertBlockTimes(conn, segmentId, index.blockTimes);
  for (let i = 0; i < blockRows.length; i += BLOCK_ROWS_PER_INSERT) {
    const rows = blockRows.slice(i, i + BLOCK_ROWS_PER_INSERT);
    const values = rows.map((_, r) => `(${Array.from({ length: 7 }, (_, k) => `$${r * 7 + k + 1}`).join(', ')})`);
    await conn.run(`INSERT OR REPLACE INTO strata_term_blocks VALUES ${values.join(', ')}`, rows.flat());
  }
}

/** Unlists the filters of segments (ids are UUIDs, checked by the caller). */
export async function deleteTermIndex(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<void> {
  if (segmentIds.length === 0) return;
  const ids = segmentIds.map(quoteLiteral).join(', ');
  await conn.run(`DELETE FROM strata_term_index WHERE segment_id IN (${ids})`);
  await conn.run(`DELETE FROM strata_term_blocks WHERE segment_id IN (${ids})`);
  await deleteBlockTimes(conn, segmentIds);
}

/**
 * Filters read from the catalog, by segment and column. A segment's filter never changes (a
 * rewrite makes a new segment id; a copy on another worker holds the same rows), so entries stay
 * valid for the process's life; the cache only bounds their memory.
 */
class FilterCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e) {
      // Most recently used last: eviction takes from the front.
      this.entries.delete(key);
      this.entries.set(key, e);
    }
    return e?.value;
  }

  set(key: string, value: V, bytes: number): void {
    if (this.entries.has(key) || bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    for (const [k, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= old.bytes;
    }
  }
}

/** A column's filter of a segment (null: the segment has none for it — kept too, so a column
 * with more keys than a filter takes does not send every query back to the catalog). */
const cache = new FilterCache<TermFilter | null>(64 * 1024 * 1024);
/** A column's block filters of a segment, by first row ([] : the segment has none for it). */
const blockCache = new FilterCache<BlockFilter[]>(64 * 1024 * 1024);

/** Whether a filter may hold every key of some alternative of a hint. */
const mayMatch = (f: TermFilter, h: TermHint) => h.anyOf.some((alt) => alt.every((k) => f.mayHold(k)));

const cacheKey = (segmentId: string, column: string) => `${segmentId}\u0000${column}`;

/**
 * The segments a scan with these term hints must read: all but those whose filter for a hint's
 * column proves that no row passes it. Reads missing filters in the caller's transaction (the
 * scan's snapshot, where the segments are listed).
 */
export async function segmentsWithTerms(
  conn: DuckDBConnection,
  segments: readonly SegmentInfo[],
  hints: readonly TermHint[],
): Promise<SegmentInfo[]> {
  if (hints.length === 0 || segments.length === 0) return [...segments];
  const columns = [...new Set(hints.map((h) => h.column))];
  const missing = segments.filter((s) => columns.some((c) => cache.get(cacheKey(s.segmentId, c)) === undefined));
  const found = new Map<string, TermFilter | null>();
  if (missing.length > 0) {
    for (const s of missing) for (const c of columns) found.set(cacheKey(s.segmentId, c), null);
    const rows = (
      await conn.runAndReadAll(
        `SELECT segment_id, column_name, hashes, bits FROM strata_term_index WHERE version = ${TERM_FILTER_VERSION}
           AND column_name IN (${columns.map(quoteLiteral).join(', ')})
           AND segment_id IN (${missing.map((s) => quoteLiteral(s.segmentId)).join(', ')})`,
      )
    ).getRows();
    for (const [segmentId, column, hashes, bits] of rows) {
      const f = await TermFilter.stored((bits as { bytes: Uint8Array }).bytes, Number(hashes));
      found.set(cacheKey(String(segmentId), String(column)), f);
    }
    for (const [key, f] of found) cache.set(key, f, f === null ? 64 : f.bits.length);
  }
  return segments.filter((s) =>
    hints.every((h) => {
      const key = cacheKey(s.segmentId, h.column);
      const f = found.has(key) ? found.get(key) : cache.get(key);
      // No filter (older segment, a column that was not a String, too many terms): read it.
      return f === undefined || f === null || mayMatch(f, h);
    }),
  );
}

/**
 * For the segments (already left in by segmentsWithTerms) whose block filters prove that only some
 * of their rows can pass the hints: those rows, as inclusive rowid ranges, at most maxRowRanges
 * per segment (term-blocks.ts). A segment not in the answer is read whole: no block filters for any hinted column
 * (Parquet, older segments), or every block may hold the terms, or too many ranges. Reads missing
 * block filters in the caller's transaction (the scan's snapshot).
 */
export async function segmentRowRanges(
  conn: DuckDBConnection,
  segments: readonly SegmentInfo[],
  hints: readonly TermHint[],
): Promise<Map<string, [number, number][]>> {
  const out = new Map<string, [number, number][]>();
  const candidates = segments.filter((s) => s.format === 'duckdb' && s.rowCount > TERM_BLOCK_ROWS);
  if (hints.length === 0 || candidates.length === 0) return out;
  const columns = [...new Set(hints.map((h) => h.column))];
  const missing = candidates.filter((s) => columns.some((c) => blockCache.get(cacheKey(s.segmentId, c)) === undefined));
  const found = new Map<string, BlockFilter[]>();
  if (missing.length > 0) {
    for (const s of missing) for (const c of columns) found.set(cacheKey(s.segmentId, c), []);
    const rows = (
      await conn.runAndReadAll(
        `SELECT segment_id, column_name, first_row, row_count, hashes, bits FROM strata_term_blocks WHERE version = ${TERM_FILTER_VERSION}
           AND column_name IN (${columns.map(quoteLiteral).join(', ')})
           AND segment_id IN (${missing.map((s) => quoteLiteral(s.segmentId)).join(', ')}) ORDER BY first_row`,
      )
    ).getRows();
    for (const [segmentId, column, firstRow, rowCount, hashes, bits] of rows) {
      const filter = await TermFilter.stored((bits as { bytes: Uint8Array }).bytes, Number(hashes));
      found
        .get(cacheKey(String(segmentId), String(column)))
        ?.push({ firstRow: Number(firstRow), rowCount: Number(rowCount), filter });
    }
    for (const [key, blocks] of found)
      blockCache.set(
        key,
        blocks,
        blocks.reduce((n, b) => n + b.filter.bits.length, 64),
      );
  }
  // Each key hashed once for every block filter it is looked up in (a 1 GB segment has 1,831).
  const hasher = await termHasher();
  const hashed = hints.map((h) => h.anyOf.map((alt) => alt.map((k) => [hasher.h32(k, 0), hasher.h32(k, 1)] as const)));
  const blockMayMatch = (f: TermFilter, hint: number) =>
    hashed[hint]!.some((alt) => alt.every(([h1, h2]) => f.mayHoldHashes(h1, h2)));
  for (const s of candidates) {
    // Per hint with block filters, the rows that may pass it; rows outside every block of a
    // column hold no value of it (a NULL does not pass a term test).
    const perHint: boolean[][] = [];
    const blockCount = Math.ceil(s.rowCount / TERM_BLOCK_ROWS);
    for (const [hint, h] of hints.entries()) {
      const key = cacheKey(s.segmentId, h.column);
      const blocks = found.get(key) ?? blockCache.get(key) ?? [];
      if (blocks.length === 0) continue; // no block filters for this column: it narrows nothing
      const may = new Array<boolean>(blockCount).fill(false);
      for (const b of blocks) {
        const i = Math.floor(b.firstRow / TERM_BLOCK_ROWS);
        if (b.rowCount !== TERM_BLOCK_ROWS || b.firstRow % TERM_BLOCK_ROWS !== 0 || i >= blockCount) {
          // Another block layout than this version writes: do not narrow by it.
          may.fill(true);
          break;
        }
        may[i] = blockMayMatch(b.filter, hint);
      }
      perHint.push(may);
    }
    if (perHint.length === 0) continue;
    const ranges: [number, number][] = [];
    for (let i = 0; i < blockCount; i++) {
      if (!perHint.every((may) => may[i])) continue;
      const first = i * TERM_BLOCK_ROWS;
      const last = Math.min(s.rowCount, first + TERM_BLOCK_ROWS) - 1;
      const previous = ranges[ranges.length - 1];
      if (previous && previous[1] === first - 1) previous[1] = last;
      else ranges.push([first, last]);
    }
    const whole = ranges.length === 1 && ranges[0]![0] === 0 && ranges[0]![1] === s.rowCount - 1;
    if (!whole && ranges.length <= maxRowRanges(blockCount)) out.set(s.segmentId, ranges);
  }
  return out;
}
