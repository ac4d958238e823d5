import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ColumnSchema, ColumnTypeName, TermHint } from '@strata/common';
import { quoteIdentifier, StrataError, termFoldColumn } from '@strata/common';
import { blockTimes, rowRangeBranch } from './block-times.js';
import {
  beginCatalogSnapshot,
  hotTableName,
  type SegmentInfo,
  segmentsOverlapping,
  selectTableColumns,
  selectTableId,
  selectTableSegments,
} from './catalog.js';
import { segmentsSelectSql } from './compactor.js';
import { segmentSources, storedFolds } from './segment-format.js';
import type { StorageContext } from './storage-context.js';
import { computedFoldItem } from './term-folds.js';
import { segmentRowRanges, segmentsWithTerms, TERM_BLOCK_ROWS } from './term-index.js';

/**
 * Time range of a scan: milliseconds since the epoch, from inclusive, to exclusive; and optionally
 * exact bounds in µs, both inclusive, which narrow it (a fragment whose statement left those time
 * conditions to the storage, decision 0018). The relation holds exactly the rows inside all given
 * bounds.
 */
export interface ScanRange {
  fromMs?: number;
  toMs?: number;
  fromUs?: number;
  toUs?: number;
  /**
   * Constant `has` terms a fragment's filter requires: segments whose term index proves no row
   * holds them may be left out (the statement checks the terms itself; decision 0026).
   */
  terms?: TermHint[];
  /**
   * Columns whose term fold the fragment reads (its source columns `#fold:c`, decision 0045):
   * each branch gives it, stored where the segment file has it, computed elsewhere.
   */
  folds?: string[];
}

export interface ScanRelation {
  schema: string;
  /**
   * A parenthesised SELECT over the hot rows and segments, usable as-is in SQL as a table
   * (`FROM ${relation}`) on the snapshot's connection. (It is not a temporary view: creating one
   * per scan cost a catalog write and a round trip.)
   */
  relation: string;
  /**
   * Columns of the view in table order: the stamped columns first, then data fields; then the
   * term folds asked for (`#fold:c`, ScanRange.folds).
   */
  columns: { name: string; type: ColumnTypeName }[];
  /**
   * The parts whose UNION ALL is `relation` (hot rows, then segment groups), each a parenthesised
   * SELECT of `columns` in order: a top-N fragment runs over each (fragmentSql).
   */
  branches: string[];
  /**
   * The branches that are whole DuckDB segment files (no filter): DuckDB answers min/max of their
   * columns from the files' statistics, which a top-N's threshold guess reads (top-n-threshold.ts).
   */
  whole: string[];
  /** For a count of the rows (bare-count.ts): see CountedRelation. */
  counted: CountedRelation;
}

/**
 * A count of a scan's rows without reading the segments it reads whole: `catalogRows` is the sum
 * of their catalog row counts, `rest` the relation of the other parts (hot rows, edge segments),
 * whose rows are counted. Exact: a segment's catalog row count is the number of rows its file
 * holds (checked against the file when a seal, rewrite or copy writes it), a purge rewrites a
 * segment into a new one with its own count, and a segment read whole has no filter to apply
 * (splitByRange). Why: a count over 7 days through the union still visits every segment's row
 * groups (decision 0025).
 */
export interface CountedRelation {
  catalogRows: number;
  rest: string;
  /**
   * The edge segments of `rest` that a count may split by their blocks' times (counted-blocks.ts):
   * 'duckdb' files of more than one block. `rest` reads them whole with the range's WHERE.
   */
  edgeBlocks?: EdgeBlocks;
}

/** See CountedRelation.edgeBlocks: what countedByBlocks needs to rebuild `rest` without them. */
export interface EdgeBlocks {
  /** The parts of `rest` other than `segments` (hot rows, other edge segments), each with the WHERE. */
  others: string[];
  segments: { segmentId: string; rowCount: number; source: string; select: string }[];
  /** The range's WHERE (with a leading space), and its µs bounds (from inclusive, to exclusive). */
  where: string;
  range: { fromUs?: number; toUs?: number };
  columns: ColumnSchema[];
}

/**
 * Which handed-off segments a scan reads, from the account view its query resolved at its start
 * (docs/decisions/0016-drain-and-replication.md). A segment the view names is read only by the
 * worker it names; a segment it does not name is read where it is an ordinary or outgoing
 * segment, never where it is an incoming copy or a replica. So a segment in the middle of a
 * handoff is read exactly once by every query, whichever side of the handoff's commit the query
 * started on, and a replica only stands in for its primary once the primary's copy is gone.
 */
export interface SegmentView {
  /** Segments the view gives to this worker. */
  owned: ReadonlySet<string>;
  /** Segments the view gives to another worker. */
  elsewhere: ReadonlySet<string>;
}

/** Whether a scan with `view` reads segment `s` here. */
export function readsSegment(s: SegmentInfo, view: SegmentView | undefined): boolean {
  if (view?.owned.has(s.segmentId)) return true;
  if (view?.elsewhere.has(s.segmentId)) return false;
  return s.handoff !== 'incoming' && s.handoff !== 'replica';
}

export interface ScanSnapshot {
  /** Connection holding the snapshot's open read transaction. Only this snapshot uses it. */
  connection: DuckDBConnection;
  /** One entry per requested schema that exists, in request order. */
  relations: ScanRelation[];
  /** Ends the transaction, closes the connection, lets compaction delete files it replaced. */
  release(): Promise<void>;
}

/** The range as µs bounds, from inclusive and to exclusive (the tighter of the ms and exact bounds). */
function checkRange(range: ScanRange): { fromUs?: number; toUs?: number } {
  for (const k of ['fromMs', 'toMs', 'fromUs', 'toUs'] as const) {
    const v = range[k];
    if (v !== undefined && !Number.isSafeInteger(v))
      throw new StrataError(
        'invalid',
        `Scan range ${k} must be an integer number of ${k.endsWith('Ms') ? 'milli' : 'micro'}seconds.`,
      );
  }
  const froms = [range.fromMs === undefined ? undefined : range.fromMs * 1000, range.fromUs];
  const tos = [range.toMs === undefined ? undefined : range.toMs * 1000, range.toUs === undefined ? undefined : range.toUs + 1];
  const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined);
  const out: { fromUs?: number; toUs?: number } = {};
  if (defined(froms).length > 0) out.fromUs = Math.max(...defined(froms));
  if (defined(tos).length > 0) out.toUs = Math.min(...defined(tos));
  return out;
}

/**
 * Narrows a scan to what retention keeps: rows older than the cut are never returned, also while
 * they still wait on disk for the retention pass (lifecycle.ts).
 */
function withRetention(range: { fromUs?: number; toUs?: number }, cutoffUs: number | undefined) {
  if (cutoffUs === undefined) return range;
  const floor = Math.trunc(cutoffUs);
  return { ...range, fromUs: range.fromUs === undefined ? floor : Math.max(range.fromUs, floor) };
}

function rangeWhere(r: { fromUs?: number; toUs?: number }): string {
  // Numbers only (checked integers), so inlining them in the view text is safe.
  const conds: string[] = [];
  if (r.fromUs !== undefined) conds.push(`"timestamp" >= make_timestamp(${r.fromUs}::BIGINT)`);
  if (r.toUs !== undefined) conds.push(`"timestamp" < make_timestamp(${r.toUs}::BIGINT)`);
  return conds.length ? ` WHERE ${conds.join(' AND ')}` : '';
}

/**
 * Segments wholly inside the range (by their catalog min/max, bounds of every row they hold, also
 * after a purge rewrote them) and the rest. Why: a time filter costs a segment the decoding of its
 * timestamps even when every row passes (DuckDB keeps the pushed filter inside a union), so a
 * count over 7 days decoded 10 M timestamps; without the filter it reads row-group row counts
 * only. Only the edge segments (and the hot rows) get the WHERE (decision 0018).
 */
export function splitByRange(
  segments: readonly SegmentInfo[],
  range: { fromUs?: number; toUs?: number },
): { inside: SegmentInfo[]; edge: SegmentInfo[] } {
  const inside: SegmentInfo[] = [];
  const edge: SegmentInfo[] = [];
  for (const s of segments) {
    const within =
      s.minTsUs !== null &&
      s.maxTsUs !== null &&
      (range.fromUs === undefined || s.minTsUs >= range.fromUs) &&
      (range.toUs === undefined || s.maxTsUs < range.toUs);
    (within ? inside : edge).push(s);
  }
  return { inside, edge };
}

/**
 * A column the union's branches carry first, never a data column (`#` is not allowed in field
 * names, limits.ts): a constant, dropped again by the outer SELECT.
 */
const BRANCH_KEY = '"#branch"';

/**
 * The branches (hot rows, segment groups) as one relation with `columns`.
 *
 * Why the constant first column: when a statement needs no column of the relation (a count),
 * DuckDB still keeps one column of a UNION ALL alive, its first, so every branch decoded the
 * first column (timestamp) of every row: a count over 10 M rows in Parquet segments read 10 M
 * timestamps (~100 ms) where a count over the segments alone answers from their row-group row
 * counts (~2 ms). With a constant first, the kept column costs nothing and each Parquet scan reads
 * no column (decision 0014).
 */
export function unionRelation(parts: readonly string[], columns: readonly ColumnSchema[]): string {
  if (parts.length === 1) return `(${parts[0]})`;
  const keyed = parts.map((p) => {
    if (!p.startsWith('SELECT ')) throw new Error('a scan branch must be a SELECT');
    return `SELECT 1 AS ${BRANCH_KEY}, ${p.slice('SELECT '.length)}`;
  });
  return `(SELECT ${columns.map((c) => quoteIdentifier(c.name)).join(', ')} FROM (${keyed.join(' UNION ALL ')}))`;
}

/** What a scan needs from the catalog about one schema: undefined when it does not exist. */
interface TableCatalog {
  tableId: number;
  columns: ColumnSchema[];
  /** Every segment of the table, by min_ts. */
  segments: SegmentInfo[];
}

async function readTableCatalog(
  connection: DuckDBConnection,
  segmentsDir: string,
  accountId: string,
  schema: string,
): Promise<TableCatalog | undefined> {
  const tableId = await selectTableId(connection, accountId, schema);
  if (tableId === undefined) return undefined;
  const segments = await selectTableSegments(connection, tableId);
  // Which files store term folds (decision 0045): read once per catalog generation, as the rest.
  const folds = await storedFolds(
    connection,
    segments.map((s) => path.join(segmentsDir, s.fileName)),
  );
  return {
    tableId,
    columns: await selectTableColumns(connection, tableId),
    segments: segments.map((s) => {
      const f = folds.get(path.join(segmentsDir, s.fileName));
      return f ? { ...s, folds: f } : s;
    }),
  };
}

/**
 * The table columns of `requested` fold names (matched as DuckDB matches names, without case),
 * each once, in table order.
 */
function foldedColumns(columns: readonly ColumnSchema[], requested: readonly string[] | undefined): ColumnSchema[] {
  if (!requested || requested.length === 0) return [];
  const wanted = new Set(requested.map((n) => n.toLowerCase()));
  return columns.filter((c) => wanted.has(c.name.toLowerCase()));
}

/** The hot rows' select-list items of the term folds of `folds` (computed: hot rows store none). */
function hotFoldItems(folds: readonly ColumnSchema[]): string {
  return folds.map((c) => `, ${computedFoldItem(c.name, quoteIdentifier(c.name), c.type)}`).join('');
}

/**
 * Opens a consistent snapshot of some schemas of an account. See StorageEngine.openSnapshot for
 * the contract; this is its implementation.
 *
 * The snapshot is a DuckDB read transaction on a connection of its own (kept between queries:
 * scan-connections.ts). Within it, each schema's
 * columns, hot rows and listed segments are read at one point in time: a seal or compaction
 * committing meanwhile is invisible to it, so no row is seen twice or missed. The scan registers
 * with the reclaimer before the transaction starts, so segment files it lists are not deleted
 * until release.
 *
 * The catalog part is usually not read again: when no catalog commit was under way before the
 * transaction started and none began until its snapshot was fixed (the first statement), the
 * snapshot holds the catalog of that generation (catalog-changes.ts) and a read of it made
 * earlier in the same generation is reused.
 */
export async function openSnapshot(
  ctx: StorageContext,
  accountId: string,
  requests: readonly ({ schema: string } & ScanRange)[],
  view?: SegmentView,
): Promise<ScanSnapshot> {
  const ranges = requests.map((r) => checkRange(r));
  const unregister = ctx.reclaimer.registerScan();
  const connection = await ctx.scanConnections.take();
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    let clean = true;
    try {
      await connection.run('ROLLBACK');
    } catch {
      // no transaction left to end: the connection is not reused
      clean = false;
    }
    ctx.scanConnections.give(connection, clean);
    unregister();
  };
  try {
    const before = ctx.catalogChanges.stable();
    await beginCatalogSnapshot(connection);
    const generation = before !== undefined && ctx.catalogChanges.stable() === before ? before : undefined;
    const relations: ScanRelation[] = [];
    for (const [i, request] of requests.entries()) {
      const key = `${accountId}\u0000${request.schema}`;
      let table = generation === undefined ? undefined : ctx.catalogChanges.recall<TableCatalog | null>(generation, key);
      if (table === undefined) {
        table = (await readTableCatalog(connection, ctx.paths.segments, accountId, request.schema)) ?? null;
        if (generation !== undefined) ctx.catalogChanges.remember(generation, key, table);
      }
      if (table === null) continue;
      const range = withRetention(ranges[i]!, ctx.retention.cutoffUs(accountId, request.schema));
      const where = rangeWhere(range);
      const hotTable = quoteIdentifier(hotTableName(table.tableId));
      const folded = foldedColumns(table.columns, request.folds);
      const folds = folded.map((c) => c.name);
      const columns: ColumnSchema[] = [
        ...table.columns,
        ...folded.map((c) => ({ name: termFoldColumn(c.name), type: 'String' as const })),
      ];
      const hot = `SELECT ${table.columns.map((c) => quoteIdentifier(c.name)).join(', ')}${hotFoldItems(folded)} FROM ${hotTable}${where}`;
      const readHere = table.segments.filter((s) => readsSegment(s, view));
      // Segments the query's term hints rule out are left out (decision 0026), after time pruning.
      const terms = request.terms ?? [];
      const overlapping = await segmentsWithTerms(connection, segmentsOverlapping(readHere, range), terms);
      // Of the rest, the rows whose block filters rule them out too (decision 0037): such a
      // segment is read range by range (DuckDB skips the vectors outside a rowid range). Not when
      // a data column is named rowid: it would stand for the column there.
      const rowRanges = table.columns.some((c) => c.name.toLowerCase() === 'rowid')
        ? new Map<string, [number, number][]>()
        : await segmentRowRanges(connection, overlapping, terms);
      const { inside, edge } = splitByRange(
        overlapping.filter((s) => !rowRanges.has(s.segmentId)),
        range,
      );
      // Each range also bounded by its blocks' times: DuckDB skips row groups by the timestamp's
      // statistics, where a rowid filter alone is checked on every vector (block-times.ts).
      const narrowed: string[] = [];
      for (const s of overlapping) {
        const ranges = rowRanges.get(s.segmentId);
        if (!ranges) continue;
        const [select] = segmentsSelectSql(ctx.paths.segments, [s], table.columns, folds);
        const [source] = segmentSources([path.join(ctx.paths.segments, s.fileName)], s.format);
        const times = await blockTimes(connection, s.segmentId, source!, s.rowCount);
        for (const [first, last] of ranges) narrowed.push(rowRangeBranch(select!, where, times, first, last));
      }
      const filtered = [
        hot,
        ...segmentsSelectSql(ctx.paths.segments, edge, table.columns, folds).map((select) => `${select}${where}`),
        ...narrowed,
      ];
      // A count may split these edge segments by block (counted-blocks.ts); not when a data
      // column named rowid would stand for it.
      const byBlocks = table.columns.some((c) => c.name.toLowerCase() === 'rowid')
        ? []
        : edge.filter((s) => s.format === 'duckdb' && s.rowCount > TERM_BLOCK_ROWS);
      const edgeBlocks: EdgeBlocks = {
        others: [
          hot,
          ...segmentsSelectSql(
            ctx.paths.segments,
            edge.filter((s) => !byBlocks.includes(s)),
            table.columns,
            folds,
          ).map((select) => `${select}${where}`),
          ...narrowed,
        ],
        segments: byBlocks.map((s) => ({
          segmentId: s.segmentId,
          rowCount: s.rowCount,
          source: segmentSources([path.join(ctx.paths.segments, s.fileName)], s.format)[0]!,
          select: segmentsSelectSql(ctx.paths.segments, [s], table.columns, folds)[0]!,
        })),
        where,
        range,
        columns,
      };
      // Whole DuckDB files last and apart: their min/max are statistics (ScanRelation.whole).
      const whole = segmentsSelectSql(
        ctx.paths.segments,
        inside.filter((s) => s.format === 'duckdb'),
        table.columns,
        folds,
      );
      const parts = [
        ...filtered,
        ...segmentsSelectSql(
          ctx.paths.segments,
          inside.filter((s) => s.format !== 'duckdb'),
          table.columns,
          folds,
        ),
        ...whole,
      ];
      relations.push({
        schema: request.schema,
        relation: unionRelation(parts, columns),
        columns: columns.map((c) => ({ ...c })),
        branches: parts.map((p) => `(${p})`),
        whole: whole.map((p) => `(${p})`),
        counted: {
          catalogRows: inside.reduce((n, s) => n + s.rowCount, 0),
          rest: unionRelation(filtered, columns),
          ...(edgeBlocks.segments.length > 0 ? { edgeBlocks } : {}),
        },
      });
    }
    return { connection, relations, release };
  } catch (err) {
    await release();
    throw err;
  }
}
