import type { DuckDBConnection } from '@duckdb/node-api';
import {
  boundStatement,
  type FragmentChecker,
  type FragmentStatement,
  inlineParams,
  quoteIdentifier,
  StrataError,
} from '@strata/common';
import { selectTableSegments, type TableInfo } from './catalog.js';
import { rewriteSegments, segmentsSelectSql } from './compactor.js';
import type { StorageContext } from './storage-context.js';

/**
 * One step of a purge job on this worker (docs/api.md, "Purge"): the rows a query fragment
 * matches (it outputs their `__INFLOW_ID`, planned by a gateway from the job's KQL predicate and
 * checked here like every fragment) are deleted from the hot rows, then segment by segment: a
 * segment holding matches is rewritten without them (rewriteSegments: one catalog swap), one
 * holding none is left alone. Idempotent: a rewritten segment has no matches left, so after a
 * restart of this worker or of the master the next step simply finds less to do.
 */
export interface PurgeProgress {
  rowsExamined: number;
  rowsRemoved: number;
  segmentsDone: number;
  segmentsTotal: number;
  finished: boolean;
}

// Compared as text: the fragment outputs ids as VARCHAR (its wire type), storage holds UUIDs.
const ID = `CAST(${quoteIdentifier('__INFLOW_ID')} AS VARCHAR)`;

/** The matching ids over `relation` as a subquery (params inlined: the statement is checked first). */
function matchedIds(statement: FragmentStatement, relation: string, available: readonly string[]): string {
  const inlined = inlineParams(statement.sql, statement.params);
  if (inlined === undefined) throw new StrataError('invalid', 'A purge predicate has a value that cannot be inlined.');
  return `(SELECT * FROM (${boundStatement({ ...statement, sql: inlined }, relation, available)}))`;
}

async function count(conn: DuckDBConnection, sql: string): Promise<number> {
  return Number(((await conn.runAndReadAll(sql)).getRowObjectsJS()[0] as { n: bigint }).n);
}

/**
 * Runs a step: the hot rows first, then up to `maxSegments` segments not yet known clean
 * (`clean` remembers them between steps of the job; it starts empty after a restart). The
 * caller holds the table's compaction lock and the write gate for the hot-row part.
 */
export async function purgeStep(
  ctx: StorageContext,
  conn: DuckDBConnection,
  table: TableInfo,
  statement: FragmentStatement,
  checker: FragmentChecker,
  clean: Set<string>,
  maxSegments: number,
  withWriteGate: <T>(work: () => Promise<T>) => Promise<T>,
): Promise<PurgeProgress> {
  if (statement.columns.length !== 1) throw new StrataError('invalid', "A purge fragment must output exactly the rows' ids.");
  await checker.check(conn, statement.sql);
  const available = table.columns.map((c) => c.name);
  const progress: PurgeProgress = { rowsExamined: 0, rowsRemoved: 0, segmentsDone: 0, segmentsTotal: 0, finished: false };

  // Hot rows: one transaction, with no group commit of the table in between.
  await withWriteGate(async () => {
    const releaseTable = await ctx.tableLocks.lock(table.tableId);
    try {
      const hot = `(SELECT ${available.map(quoteIdentifier).join(', ')} FROM ${quoteIdentifier(table.hotTable)})`;
      await conn.run('BEGIN TRANSACTION');
      try {
        progress.rowsExamined += await count(conn, `SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`);
        const removed = await count(
          conn,
          `SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)} WHERE ${ID} IN ${matchedIds(statement, hot, available)}`,
        );
        if (removed > 0)
          await conn.run(
            `DELETE FROM ${quoteIdentifier(table.hotTable)} WHERE ${ID} IN ${matchedIds(statement, hot, available)}`,
          );
        await conn.run('COMMIT');
        progress.rowsRemoved += removed;
      } catch (err) {
        await conn.run('ROLLBACK').catch(() => undefined);
        throw err;
      }
    } finally {
      releaseTable();
    }
  });

  // Replicas are other workers' segments: their primaries purge them (the rewritten segment is
  // copied again). A segment in a handoff is not rewritten (its copy must stay the same rows) and
  // keeps the job unfinished here until the handoff ends.
  const segments = (await selectTableSegments(conn, table.tableId)).filter((s) => s.handoff !== 'replica');
  progress.segmentsTotal = segments.length;
  let worked = 0;
  for (const segment of segments) {
    if (clean.has(segment.segmentId) || segment.handoff !== undefined) continue;
    if (worked >= maxSegments) break;
    worked++;
    const relation = `(${segmentsSelectSql(ctx.paths.segments, [segment], table.columns)[0]})`;
    const matched = matchedIds(statement, relation, available);
    const matches = await count(conn, `SELECT count(*) AS n FROM ${relation} WHERE ${ID} IN ${matched}`);
    progress.rowsExamined += segment.rowCount;
    if (matches === 0) {
      clean.add(segment.segmentId);
      continue;
    }
    const rewritten = await rewriteSegments(ctx, conn, table, [segment], `${ID} NOT IN ${matched}`);
    clean.add(rewritten.segmentId);
    progress.rowsRemoved += matches;
  }
  const listed = new Set(
    (await selectTableSegments(conn, table.tableId)).filter((s) => s.handoff !== 'replica').map((s) => s.segmentId),
  );
  progress.segmentsTotal = listed.size;
  progress.segmentsDone = [...clean].filter((id) => listed.has(id)).length;
  progress.finished = progress.segmentsDone === progress.segmentsTotal;
  return progress;
}
