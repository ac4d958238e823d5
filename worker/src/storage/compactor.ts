import { randomUUID } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnSchema, quoteIdentifier, StrataError, termFoldColumn } from '@strata/common';
import {
  countHandoffs,
  countListedSegments,
  deleteSegments,
  insertSegment,
  type SegmentInfo,
  selectTableSegments,
  type TableInfo,
} from './catalog.js';
import { convertSql, DUCKDB_TYPE } from './column-sql.js';
import { publishFile } from './durable-file.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { discardSegmentFile } from './segment-discard.js';
import { attachSegmentFiles, segmentFileName, segmentSources, WRITTEN_FORMAT, writeSegmentFile } from './segment-format.js';
import type { StorageContext } from './storage-context.js';
import { chooseFoldColumns, computedFoldItem, foldSelectItems } from './term-folds.js';
import { buildTermIndex, insertTermIndex } from './term-index.js';

/**
 * SQL reading `segments` as rows with exactly `columns` (names and current types): files written
 * before a column existed give NULL for it, files written before a widening are converted.
 * Parquet files with the same column list are read by one read_parquet call; each DuckDB file
 * is a SELECT of its own (segment-format.ts), so a top-N runs per segment (fragmentSql).
 */
export function segmentsSelectSql(
  segmentsDir: string,
  segments: readonly SegmentInfo[],
  columns: readonly ColumnSchema[],
  folds: readonly string[] = [],
): string[] {
  const groups = new Map<string, SegmentInfo[]>();
  for (const s of segments) {
    const key = `${s.format}\u0000${JSON.stringify(s.columns)}\u0000${folds.length > 0 ? JSON.stringify(s.folds ?? []) : ''}`;
    const list = groups.get(key);
    if (list) list.push(s);
    else groups.set(key, [s]);
  }
  const selects: string[] = [];
  for (const group of groups.values()) {
    const stored = new Map(group[0]!.columns.map((c) => [c.name, c.type]));
    const list = columns.map((c) => {
      const from = stored.get(c.name);
      const target = quoteIdentifier(c.name);
      return from === undefined
        ? `CAST(NULL AS ${DUCKDB_TYPE[c.type]}) AS ${target}`
        : `${convertSql(target, from, c.type)} AS ${target}`;
    });
    // The term folds asked for (after the columns): stored where the file has them, else computed.
    const storedFolds = new Set(group[0]!.folds ?? []);
    // The fold is of the value as the scan gives it (the table's current type), as text.
    for (const name of folds) {
      const to = columns.find((c) => c.name === name)?.type;
      const from = stored.get(name);
      const target = quoteIdentifier(termFoldColumn(name));
      if (from === undefined || to === undefined) list.push(`CAST(NULL AS VARCHAR) AS ${target}`);
      else if (from === 'String' && to === 'String' && storedFolds.has(name)) list.push(target);
      else list.push(computedFoldItem(name, convertSql(quoteIdentifier(name), from, to), to));
    }
    const files = group.map((s) => path.join(segmentsDir, s.fileName));
    for (const source of segmentSources(files, group[0]!.format)) selects.push(`SELECT ${list.join(', ')} FROM ${source}`);
  }
  return selects;
}

/** The temporary table a rewrite of several files stages their rows in (rewriteSegments). */
const STAGE = 'temp.main.strata_rewrite_stage';

async function countRows(conn: DuckDBConnection, select: string): Promise<number> {
  return Number(((await conn.runAndReadAll(`SELECT count(*) AS n FROM (${select})`)).getRowObjectsJS()[0] as { n: bigint }).n);
}

const SEGMENT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface CompactRequest {
  accountId: string;
  schema: string;
  segmentIds: string[];
}

/**
 * Writes the rows of `segments` (of one table) that pass `keepWhere` (SQL over the table's
 * columns, '' for all) into one new segment sorted by timestamp, checks the row count, then swaps
 * the catalog in one transaction (old segments unlisted, new one listed). A crash before the swap
 * commits leaves the old set listed and an unlisted new file (deleted at start-up); after it, the
 * new set and unlisted old files. Old files are deleted once no open scan can read them.
 *
 * Fails with 'precondition_failed' when a segment is no longer listed (nothing changes). The
 * caller holds the table's compaction lock and gives the connection.
 */
export async function rewriteSegments(
  ctx: StorageContext,
  conn: DuckDBConnection,
  table: TableInfo,
  segments: readonly SegmentInfo[],
  keepWhere: string,
): Promise<SegmentInfo> {
  const ids = segments.map((s) => s.segmentId);
  const segmentId = randomUUID();
  const fileName = segmentFileName(table.tableId, segmentId, WRITTEN_FORMAT);
  const finalPath = path.join(ctx.paths.segments, fileName);
  const tmpPath = `${finalPath}.tmp`;
  let published = false;
  try {
    const columns = ctx.tables.getById(table.tableId)!.columns.map((c) => ({ ...c }));
    const sources = segmentsSelectSql(ctx.paths.segments, segments, columns);
    const kept = keepWhere === '' ? '' : ` WHERE ${keepWhere}`;
    await mkdir(path.dirname(finalPath), { recursive: true });
    let written: Awaited<ReturnType<typeof writeSegmentFile>>;
    let expected: number;
    // The term folds of the long-text columns, computed again from the texts (decision 0045): so
    // segments written before folds existed get them here.
    const folds = await chooseFoldColumns(
      conn,
      sources.map((x) => `(${x})`),
      columns,
    );
    if (sources.length === 1) {
      written = await writeSegmentFile(
        conn,
        `SELECT *${foldSelectItems(folds)} FROM (${sources[0]})${kept} ORDER BY "timestamp"`,
        tmpPath,
        WRITTEN_FORMAT,
      );
      expected = kept
        ? await countRows(conn, `SELECT * FROM (${sources[0]})${kept}`)
        : segments.reduce((n, s) => n + s.rowCount, 0);
    } else {
      // Several files: staged into one temporary table first, then sorted from it alone. DuckDB
      // 1.5.6's sort of a UNION ALL of several attached files does not always spill to disk: a
      // 60-segment compaction of 30 M bench rows failed at the 4.4 GB limit ("failed to pin
      // block"), and 5 segments of 1 M rows fail at 512 MB and 1 GB yet pass at 256 MB and 2 GB;
      // a sort of one table spills at any limit. The copy costs ~20 % more CPU (decision 0040,
      // bench/storage/compaction-memory.mjs). The table lives on this connection only, in memory
      // and the account's spill directory.
      await conn.run(`CREATE TEMP TABLE ${STAGE} AS SELECT * FROM (${sources[0]})${kept}`);
      try {
        for (const source of sources.slice(1)) await conn.run(`INSERT INTO ${STAGE} SELECT * FROM (${source})${kept}`);
        expected = await countRows(conn, `SELECT * FROM ${STAGE}`);
        written = await writeSegmentFile(
          conn,
          `SELECT *${foldSelectItems(folds)} FROM ${STAGE} ORDER BY "timestamp"`,
          tmpPath,
          WRITTEN_FORMAT,
        );
      } finally {
        await conn.run(`DROP TABLE IF EXISTS ${STAGE}`);
      }
    }
    const rowCount = written.rows;
    if (rowCount !== expected)
      throw new StrataError('internal', `A segment rewrite wrote ${rowCount} rows instead of ${expected}.`);
    await publishFile(tmpPath, finalPath);
    published = true;
    await attachSegmentFiles(conn, [finalPath]);
    const byteSize = (await stat(finalPath)).size;
    ctx.guard.noteWritten(byteSize);
    const terms = await buildTermIndex(conn, finalPath, WRITTEN_FORMAT, columns);
    const rewritten: SegmentInfo = {
      segmentId,
      tableId: table.tableId,
      accountId: table.accountId,
      schema: table.schema,
      fileName,
      minTsUs: written.minUs,
      maxTsUs: written.maxUs,
      rowCount,
      byteSize,
      columns,
      createdAtMs: Date.now(),
      format: WRITTEN_FORMAT,
    };

    // The swap. The table lock keeps a seal of this table from committing in between (both
    // write strata_segments); the caller's compaction lock keeps other rewrites of the table out.
    const releaseTable = await ctx.tableLocks.lock(table.tableId);
    try {
      await conn.run('BEGIN TRANSACTION');
      try {
        if ((await countListedSegments(conn, ids)) !== ids.length)
          throw new StrataError('precondition_failed', 'Some segments to rewrite are no longer listed.');
        // A segment being handed to or from another worker must stay the same rows as its copy.
        if ((await countHandoffs(conn, ids)) > 0)
          throw new StrataError('precondition_failed', 'Some segments to rewrite are being moved to another worker.');
        await deleteSegments(conn, ids);
        await insertSegment(conn, rewritten);
        await insertTermIndex(conn, segmentId, terms);
        await ctx.catalogChanges.commit(conn);
      } catch (err) {
        await conn.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      releaseTable();
    }
    ctx.reclaimer.retire(segments.map((s) => path.join(ctx.paths.segments, s.fileName)));
    return rewritten;
  } catch (err) {
    await discardSegmentFile(conn, published ? finalPath : tmpPath);
    throw err;
  }
}

/**
 * Merges segments of one table into one segment (rewriteSegments), leaving behind rows past
 * retention: this is where segments straddling the cut lose them.
 *
 * Fails with 'precondition_failed' when a named segment is not (or no longer) listed: the plan
 * was stale, and nothing changes.
 */
export async function compactSegments(
  ctx: StorageContext,
  compactionLocks: KeyedMutex<number>,
  request: CompactRequest,
): Promise<SegmentInfo> {
  ctx.guard.assertWritable();
  const table = ctx.tables.get(request.accountId, request.schema);
  if (!table) throw new StrataError('not_found', `Schema ${request.schema} does not exist on this worker.`);
  const ids = [...new Set(request.segmentIds)];
  if (ids.length < 2) throw new StrataError('invalid', 'A compaction needs at least two segments.');
  if (!ids.every((id) => SEGMENT_ID_PATTERN.test(id))) throw new StrataError('invalid', 'Segment ids must be UUIDs.');

  const releaseCompaction = await compactionLocks.lock(table.tableId);
  const conn = await ctx.instance.connect();
  try {
    const listed = await selectTableSegments(conn, table.tableId);
    const wanted = new Set(ids);
    const segments = listed.filter((s) => wanted.has(s.segmentId) && s.handoff === undefined);
    if (segments.length !== ids.length)
      throw new StrataError('precondition_failed', 'Some segments of the compaction job are no longer listed.');
    // (Checked integer microseconds, so inlining the bound is safe.)
    const cutoffUs = ctx.retention.cutoffUs(table.accountId, table.schema);
    const keep = cutoffUs === undefined ? '' : `"timestamp" >= make_timestamp(${Math.trunc(cutoffUs)}::BIGINT)`;
    const merged = await rewriteSegments(ctx, conn, table, segments, keep);
    ctx.log.info(
      {
        accountId: table.accountId,
        schema: table.schema,
        merged: segments.length,
        rows: merged.rowCount,
        bytes: merged.byteSize,
      },
      'segments compacted',
    );
    return merged;
  } finally {
    conn.closeSync();
    releaseCompaction();
  }
}
