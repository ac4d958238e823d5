import type { RelationalStore, SqlExecutor } from '../relational-store.js';

/**
 * Where a local copy of the store stands in the database log: the log's identity and the last
 * entry applied. Kept in the store itself (table `strata_replica_position`, one row), written in
 * the same transaction as the changes of that entry, so the file and its position never disagree,
 * whatever crashes when. Local bookkeeping, not schema: created on open, not by a migration, and
 * never itself logged (the journal writes it on an unrecorded executor).
 */
export interface ReplicaPosition {
  /** '' for a file that never followed a log (a new file, or one from before replication). */
  logId: string;
  seq: number;
}

const TABLE = 'strata_replica_position';

export async function ensurePositionTable(store: RelationalStore): Promise<void> {
  await store.transaction(async (tx) => {
    await tx.run(`CREATE TABLE IF NOT EXISTS ${TABLE} (log_id VARCHAR NOT NULL, seq BIGINT NOT NULL)`);
    const row = await tx.one(`SELECT count(*) AS n FROM ${TABLE}`);
    if (Number(row?.n) === 0) await tx.run(`INSERT INTO ${TABLE} VALUES ('', 0)`);
  });
}

export async function readPosition(x: SqlExecutor): Promise<ReplicaPosition> {
  const row = await x.one<{ log_id: string; seq: string }>(`SELECT log_id, seq FROM ${TABLE}`);
  if (!row) throw new Error(`${TABLE} has no row`);
  return { logId: row.log_id, seq: Number(row.seq) };
}

export async function writePosition(x: SqlExecutor, position: ReplicaPosition): Promise<void> {
  await x.run(`UPDATE ${TABLE} SET log_id = $1, seq = $2`, [position.logId, BigInt(position.seq)]);
}
