import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnSchema, type DataType, isReservedFieldName, StrataError } from '@strata/common';
import {
  countListedSegments,
  deleteHandoffs,
  deleteSegments,
  hotTableName,
  insertHandoff,
  insertSegment,
  type SegmentInfo,
  selectSegments,
  type TableInfo,
} from './catalog.js';
import { publishFile } from './durable-file.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { applyColumnChanges, planEvolution } from './schema-evolution.js';
import { discardSegmentFile } from './segment-discard.js';
import { attachSegmentFiles, countFileRows, type SegmentFormat, segmentFileName } from './segment-format.js';
import type { StorageContext } from './storage-context.js';
import { buildTermIndex, insertTermIndex } from './term-index.js';

/** Runs `body` inside BEGIN … (the body commits), rolling back when it throws. */
async function inTransaction<T>(conn: DuckDBConnection, body: () => Promise<T>): Promise<T> {
  await conn.run('BEGIN TRANSACTION');
  try {
    return await body();
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/**
 * The storage side of a segment handoff between workers (a drain;
 * docs/decisions/0016-drain-and-replication.md). Segment files never change once written, so
 * moving one is copying its bytes; what needs care is the catalog, so that every query reads the
 * segment exactly once:
 *
 *   giving worker                         receiving worker                 coordinator
 *   markOutgoing (no rewrite may touch it)
 *                                         adoptSegment: fetch, verify,
 *                                         list it 'incoming' (hidden)
 *                                                                          handoff record (rev R)
 *   … until no query that started before R can still be running …
 *   releaseOutgoing: unlist, refuse views older than R
 *                                         settleIncoming: ordinary segment
 *                                                                          handoff record removed
 *
 * A query reads its account view (with the handoff records) at its start and names the handed-off
 * segments' owners in each fragment (scan.ts, `readsSegment`).
 */

/** A segment as the giving worker describes it, with the SHA-256 of its file. */
export interface SegmentDescriptor {
  segmentId: string;
  accountId: string;
  schema: string;
  minTsUs: number | null;
  maxTsUs: number | null;
  rowCount: number;
  byteSize: number;
  columns: ColumnSchema[];
  createdAtMs: number;
  sha256: string;
  /** How the file stores its rows ('parquet' from a sender older than decision 0025). */
  format: SegmentFormat;
}

const SEGMENT_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function checkSegmentId(segmentId: string): void {
  if (!SEGMENT_ID_PATTERN.test(segmentId)) throw new StrataError('invalid', 'Segment ids must be UUIDs.');
}

/** SHA-256 (hex) of a file. */
export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A listed segment of an account, or undefined. */
export async function findSegment(
  conn: DuckDBConnection,
  accountId: string,
  segmentId: string,
): Promise<SegmentInfo | undefined> {
  checkSegmentId(segmentId);
  return (await selectSegments(conn, accountId)).find((s) => s.segmentId === segmentId);
}

/**
 * Marks segments as handed out: from now on no compaction, purge or other rewrite replaces them
 * (compactor.ts refuses segments in a handoff), so the copies stay the same rows as the original.
 */
export async function markOutgoing(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentIds: readonly string[],
  toWorkerId: string,
): Promise<void> {
  const release = await ctx.tableLocks.lockAll(tablesOf(ctx, segmentIds));
  try {
    await inTransaction(conn, async () => {
      for (const id of segmentIds) await insertHandoff(conn, id, 'outgoing', toWorkerId);
      await ctx.catalogChanges.commit(conn);
    });
  } finally {
    release();
  }
}

/** Every table (all of them: a handoff is rare, and the lock order must not depend on lookups). */
function tablesOf(ctx: StorageContext, _segmentIds: readonly string[]): number[] {
  return ctx.tables.all().map((t) => t.tableId);
}

/**
 * Whether a segment is listed here already; if it is held as a replica, its mark becomes `as`
 * from `sourceWorkerId` (other marks are left as they are).
 */
async function claimListed(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentId: string,
  as: 'incoming' | 'replica',
  sourceWorkerId: string,
): Promise<boolean> {
  // Under every table lock, like dropReplicas: a replica cannot be dropped between the check and
  // the new mark, so a copy claimed here is still here.
  const release = await ctx.tableLocks.lockAll(tablesOf(ctx, [segmentId]));
  try {
    await conn.run('BEGIN TRANSACTION');
    try {
      if ((await countListedSegments(conn, [segmentId])) === 0) {
        await conn.run('ROLLBACK');
        return false;
      }
      await conn.run(
        "UPDATE strata_handoffs SET direction = $2, peer_worker_id = $3 WHERE segment_id = $1 AND direction = 'replica'",
        [segmentId, as, sourceWorkerId],
      );
      await ctx.catalogChanges.commit(conn);
      return true;
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    release();
  }
}

/** Unlists replicas (copies of other workers' segments) and lets their files go. */
export async function dropReplicas(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentIds: readonly string[],
  primary?: string,
): Promise<SegmentInfo[]> {
  return unlistSegments(
    ctx,
    conn,
    segmentIds,
    (s) => s.handoff === 'replica' && (primary === undefined || s.peerWorkerId === primary),
  );
}

/**
 * Unlists those of `segmentIds` that `which` accepts, in one transaction under their tables'
 * locks, and retires their files (deleted once no open scan can read them). Answers them.
 */
async function unlistSegments(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentIds: readonly string[],
  which: (s: SegmentInfo) => boolean,
): Promise<SegmentInfo[]> {
  for (const id of segmentIds) checkSegmentId(id);
  const wanted = new Set(segmentIds);
  const release = await ctx.tableLocks.lockAll(tablesOf(ctx, segmentIds));
  try {
    return await inTransaction(conn, async () => {
      const gone = (await selectSegments(conn)).filter((s) => wanted.has(s.segmentId) && which(s));
      if (gone.length > 0)
        await deleteSegments(
          conn,
          gone.map((s) => s.segmentId),
        );
      await ctx.catalogChanges.commit(conn);
      ctx.reclaimer.retire(gone.map((s) => path.join(ctx.paths.segments, s.fileName)));
      return gone;
    });
  } finally {
    release();
  }
}

/**
 * Makes replicas ordinary segments of this worker (their primary was lost for good and the
 * master leader chose this copy to stand in). Answers the ids promoted.
 */
export async function promoteReplicas(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentIds: readonly string[],
): Promise<string[]> {
  for (const id of segmentIds) checkSegmentId(id);
  const wanted = new Set(segmentIds);
  return await inTransaction(conn, async () => {
    const promoted = (await selectSegments(conn))
      .filter((s) => wanted.has(s.segmentId) && s.handoff === 'replica')
      .map((s) => s.segmentId);
    await deleteHandoffs(conn, promoted);
    await ctx.catalogChanges.commit(conn);
    return promoted;
  });
}

/**
 * Receives a segment: writes `chunks` to a temporary file, checks its SHA-256 and row count
 * against `desc`, makes it durable, then in one transaction makes sure the table can hold its
 * columns (created or widened like by an append) and lists it as `as` ('incoming' for a drain's
 * handoff, 'replica' for a copy kept for replication; neither is read by default). Answers false when
 * the segment was listed here already (nothing is written). Runs between group commits (`gate`),
 * which plan against the same table directory.
 */
export async function adoptSegment(
  ctx: StorageContext,
  conn: DuckDBConnection,
  gate: KeyedMutex<'writes'>,
  desc: SegmentDescriptor,
  sourceWorkerId: string,
  chunks: AsyncIterable<Uint8Array>,
  as: 'incoming' | 'replica' = 'incoming',
): Promise<boolean> {
  checkSegmentId(desc.segmentId);
  // One account's storage takes only that account's segments (decision 0015): its directory,
  // catalog and instance hold nothing of another.
  if (desc.accountId !== ctx.accountId)
    throw new StrataError('invalid', `Segment ${desc.segmentId} belongs to another account than this store's.`);
  ctx.guard.assertWritable();
  // Listed here already: nothing to fetch. A replica held here becomes what is asked for now — the
  // copy of the segment's new primary, or the incoming side of a handoff to this worker (no
  // longer a replica its old primary could drop while the handoff names this worker the owner).
  if (await claimListed(ctx, conn, desc.segmentId, as, sourceWorkerId)) return false;
  const tmpPath = path.join(ctx.paths.tmp, `adopt-${desc.segmentId}.${desc.format}`);
  let finalPath: string | undefined;
  let published = false;
  try {
    const hash = createHash('sha256');
    let bytes = 0;
    const handle = await open(tmpPath, 'w');
    try {
      for await (const chunk of chunks) {
        hash.update(chunk);
        bytes += chunk.byteLength;
        await handle.write(chunk);
      }
    } finally {
      await handle.close();
    }
    const sha = hash.digest('hex');
    if (sha !== desc.sha256 || bytes !== desc.byteSize)
      throw new StrataError('internal', `Segment ${desc.segmentId} arrived damaged (${bytes} bytes, SHA-256 ${sha}).`);
    const counted = await countFileRows(conn, tmpPath, desc.format);
    if (counted !== desc.rowCount)
      throw new StrataError('internal', `Segment ${desc.segmentId} holds ${counted} rows, not ${desc.rowCount}.`);
    ctx.guard.noteWritten(bytes);

    return await gate.with('writes', async () => {
      const current = ctx.tables.get(desc.accountId, desc.schema);
      const dataColumns = desc.columns
        .filter((c) => !isReservedFieldName(c.name) && c.name !== 'timestamp')
        .map((c) => ({ name: c.name, type: c.type as DataType }));
      const plan = planEvolution(desc.schema, current?.columns, dataColumns);
      const tableId = current?.tableId ?? ctx.tables.reserveId();
      const table: TableInfo = current ?? {
        tableId,
        accountId: desc.accountId,
        schema: desc.schema,
        hotTable: hotTableName(tableId),
        columns: [],
      };
      const fileName = segmentFileName(tableId, desc.segmentId, desc.format);
      finalPath = path.join(ctx.paths.segments, fileName);
      await mkdir(path.dirname(finalPath), { recursive: true });
      await publishFile(tmpPath, finalPath);
      published = true;
      await attachSegmentFiles(conn, [finalPath]);
      const terms = await buildTermIndex(conn, finalPath, desc.format, desc.columns);
      const release = current ? await ctx.tableLocks.lock(tableId) : () => undefined;
      try {
        await conn.run('BEGIN TRANSACTION');
        try {
          if ((await countListedSegments(conn, [desc.segmentId])) > 0) {
            await conn.run('ROLLBACK');
            await discardSegmentFile(conn, finalPath);
            published = false;
            return false;
          }
          if (!current || plan.changes.length > 0)
            await applyColumnChanges(conn, table, plan, current === undefined, current?.columns.length ?? 0);
          const segment: SegmentInfo = {
            segmentId: desc.segmentId,
            tableId,
            accountId: desc.accountId,
            schema: desc.schema,
            fileName,
            minTsUs: desc.minTsUs,
            maxTsUs: desc.maxTsUs,
            rowCount: desc.rowCount,
            byteSize: (await stat(finalPath)).size,
            columns: desc.columns,
            createdAtMs: desc.createdAtMs,
            format: desc.format,
          };
          await insertSegment(conn, segment);
          await insertTermIndex(conn, desc.segmentId, terms);
          await insertHandoff(conn, desc.segmentId, as, sourceWorkerId);
          await ctx.catalogChanges.commit(conn);
        } catch (err) {
          await conn.run('ROLLBACK').catch(() => undefined);
          throw err;
        }
      } finally {
        release();
      }
      ctx.tables.put({ ...table, columns: plan.columns });
      return true;
    });
  } catch (err) {
    if (published && finalPath) await discardSegmentFile(conn, finalPath);
    throw err;
  } finally {
    await unlink(tmpPath).catch(() => undefined);
  }
}

/** Ends an incoming handoff: the segment is an ordinary segment of this worker from now on. */
export async function settleIncoming(ctx: StorageContext, conn: DuckDBConnection, segmentId: string): Promise<void> {
  checkSegmentId(segmentId);
  await inTransaction(conn, async () => {
    await deleteHandoffs(conn, [segmentId]);
    await ctx.catalogChanges.commit(conn);
  });
}

/**
 * Unlists segments handed out (their new owner reads them now) and lets their files go once no
 * open scan can read them. Answers the segments unlisted.
 */
export async function releaseOutgoing(
  ctx: StorageContext,
  conn: DuckDBConnection,
  segmentIds: readonly string[],
): Promise<SegmentInfo[]> {
  return unlistSegments(ctx, conn, segmentIds, (s) => s.handoff === 'outgoing');
}
