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
import { blobValue } from '@duckdb/node-api';
import { type ColumnSchema, quoteIdentifier, quoteLiteral, type TermHint, visitChunkStrings } from '@strata/common';
import type { SegmentInfo } from './catalog.js';
import { type SegmentFormat, segmentSources } from './segment-format.js';
import { TERM_FILTER_VERSION, TermFilter } from './term-filter.js';
import { type KeyHashSet, TermKeyCutter } from './term-key-hashes.js';

export const TERM_INDEX_DDL = `CREATE TABLE IF NOT EXISTS strata_term_index (
     segment_id VARCHAR NOT NULL,
     column_name VARCHAR NOT NULL,
     version INTEGER NOT NULL,
     hashes INTEGER NOT NULL,
     key_count BIGINT NOT NULL,
     bits BLOB NOT NULL,
     PRIMARY KEY (segment_id, column_name))`;

/**
 * A column with more distinct keys than this in one segment gets no filter (it would cost
 * 1.25 bytes a key, and the build holds the keys in memory): its segments are scanned.
 */
export const MAX_KEYS_PER_COLUMN = 2_000_000;

/** One segment's filters by column name, ready to be listed with it. */
export type SegmentTermIndex = Map<string, TermFilter & { keyCount: number }>;

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
async function columnKeys(conn: DuckDBConnection, source: string, column: string): Promise<KeyHashSet | undefined> {
  const c = quoteIdentifier(column);
  const result = await conn.stream(
    `SELECT string_agg(v, ' ') FROM (SELECT DISTINCT ${c} AS v FROM ${source} WHERE ${c} IS NOT NULL) GROUP BY hash(v) % ${VALUE_GROUPS}`,
  );
  const cutter = new TermKeyCutter();
  for (;;) {
    const chunk = await result.fetchChunk();
    if (!chunk || chunk.rowCount === 0) return cutter.keys;
    visitChunkStrings(chunk, 0, cutter.addText);
    if (cutter.keys.size > MAX_KEYS_PER_COLUMN) return undefined;
  }
}

/** Builds the filters of a segment file written with `columns` (its String columns only). */
export async function buildTermIndex(
  conn: DuckDBConnection,
  file: string,
  format: SegmentFormat,
  columns: readonly ColumnSchema[],
): Promise<SegmentTermIndex> {
  const index: SegmentTermIndex = new Map();
  // A 'duckdb' file is read through its attachment: attach it before building.
  const [source] = segmentSources([file], format);
  for (const c of columns) {
    if (c.type !== 'String') continue;
    const keys = await columnKeys(conn, source!, c.name);
    if (!keys) continue;
    const filter = await TermFilter.ofKeyHashes(keys);
    index.set(c.name, Object.assign(filter, { keyCount: keys.size }));
  }
  return index;
}

/** Lists a segment's filters, in the caller's transaction (the one listing the segment). */
export async function insertTermIndex(conn: DuckDBConnection, segmentId: string, index: SegmentTermIndex): Promise<void> {
  for (const [column, f] of index) {
    await conn.run('INSERT OR REPLACE INTO strata_term_index VALUES ($1, $2, $3, $4, $5, $6)', [
      segmentId,
      column,
      TERM_FILTER_VERSION,
      f.hashes,
      BigInt(f.keyCount),
      blobValue(f.bits),
    ]);
  }
}

/** Unlists the filters of segments (ids are UUIDs, checked by the caller). */
export async function deleteTermIndex(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<void> {
  if (segmentIds.length === 0) return;
  await conn.run(`DELETE FROM strata_term_index WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`);
}

/**
 * Filters read from the catalog, by segment and column. A segment's filter never changes (a
 * rewrite makes a new segment id; a copy on another worker holds the same rows), so entries stay
 * valid for the process's life; the cache only bounds their memory.
 */
class FilterCache {
  private readonly entries = new Map<string, TermFilter>();
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  get(key: string): TermFilter | undefined {
    const f = this.entries.get(key);
    if (f) {
      // Most recently used last: eviction takes from the front.
      this.entries.delete(key);
      this.entries.set(key, f);
    }
    return f;
  }

  set(key: string, f: TermFilter): void {
    if (this.entries.has(key) || f.bits.length > this.maxBytes) return;
    this.entries.set(key, f);
    this.bytes += f.bits.length;
    for (const [k, old] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= old.bits.length;
    }
  }
}

const cache = new FilterCache(64 * 1024 * 1024);

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
  const found = new Map<string, TermFilter>();
  if (missing.length > 0) {
    const rows = (
      await conn.runAndReadAll(
        `SELECT segment_id, column_name, hashes, bits FROM strata_term_index WHERE version = ${TERM_FILTER_VERSION}
           AND column_name IN (${columns.map(quoteLiteral).join(', ')})
           AND segment_id IN (${missing.map((s) => quoteLiteral(s.segmentId)).join(', ')})`,
      )
    ).getRows();
    for (const [segmentId, column, hashes, bits] of rows) {
      const f = await TermFilter.stored((bits as { bytes: Uint8Array }).bytes, Number(hashes));
      const key = cacheKey(String(segmentId), String(column));
      found.set(key, f);
      cache.set(key, f);
    }
  }
  return segments.filter((s) =>
    hints.every((h) => {
      const key = cacheKey(s.segmentId, h.column);
      const f = found.get(key) ?? cache.get(key);
      // No filter (older segment, a column that was not a String, too many terms): read it.
      return f === undefined || h.anyOf.some((alt) => alt.every((k) => f.mayHold(k)));
    }),
  );
}
