import type { Logger, ReplicatedLog, SnapshotInfo } from '@strata/common';
import { RelationalStore } from '../relational-store.js';
import { decodeChangeEntry } from './change-entry.js';
import { ensurePositionTable, type ReplicaPosition, readPosition, writePosition } from './replica-position.js';
import { restoreSnapshot } from './store-snapshot.js';

/** Entries read from the log per request (each at most 1 MiB, most a few KiB). */
const READ_BATCH = 64;

/** The log no longer has the entry after a copy's position: it was compacted into a snapshot. */
class LogGap extends Error {}

/** A local copy of the store and where it stands in the log. */
export interface LocalReplica {
  store: RelationalStore;
  position: ReplicaPosition;
}

/**
 * Whether a copy holds data worth protecting: a row in any table but the migration bookkeeping and
 * the log position. A file that only ran the migrations holds nothing a log could hide — two
 * instances started together on empty volumes each migrate their file, and counting that as "a
 * store from before the log" refused the loser's file for good (it never led again).
 */
export async function holdsStore(store: RelationalStore): Promise<boolean> {
  const tables = await store.all<{ schema_name: string; table_name: string }>(
    "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = current_database() AND table_name NOT IN ('schema_migrations', 'strata_replica_position')",
  );
  const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;
  for (const t of tables) {
    const row = await store.one(`SELECT 1 AS found FROM ${quote(t.schema_name)}.${quote(t.table_name)} LIMIT 1`);
    if (row) return true;
  }
  return false;
}

async function openLocal(dir: string): Promise<LocalReplica> {
  const store = await RelationalStore.openFile(dir);
  try {
    await ensurePositionTable(store);
    return { store, position: await store.read(readPosition) };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * Applies the log's entries after `replica.position` to its store until none is left. Each batch
 * read from the log is applied in one local transaction together with the new position (so a
 * crash repeats nothing and skips nothing; one COMMIT per batch, not per entry: a commit costs
 * milliseconds, which made an entry-by-entry catch-up of 2,000 entries take 21 s here). Throws
 * LogGap when the next entry was compacted away.
 */
export async function applyLog(replica: LocalReplica, log: ReplicatedLog): Promise<number> {
  let applied = 0;
  for (;;) {
    const entries = await log.read(replica.position.seq, READ_BATCH);
    if (entries.length === 0) return applied;
    let expected = replica.position.seq + 1;
    for (const entry of entries) {
      if (entry.seq !== expected) throw new LogGap(`entry ${expected} is gone`);
      expected++;
    }
    const changes = entries.map((e) => decodeChangeEntry(e.value));
    const next = { logId: replica.position.logId, seq: entries.at(-1)!.seq };
    await replica.store.transaction(async (tx) => {
      for (const change of changes) for (const s of change.statements) await tx.run(s.sql, s.params);
      await writePosition(tx, next);
    });
    replica.position = next;
    applied += entries.length;
  }
}

/**
 * Opens the local copy of `dir` and brings it to the end of the log: from the current snapshot
 * when the copy follows no log or another one, or stands before the snapshot (its entries are
 * gone); then entry by entry. Answers the snapshot too (undefined: no log exists yet, the copy is
 * left as it is). The caller owns the returned store.
 */
export async function openSynced(
  dir: string,
  log: ReplicatedLog,
  logger: Logger,
): Promise<LocalReplica & { snapshot: SnapshotInfo | undefined }> {
  let replica = await openLocal(dir);
  try {
    for (let attempt = 0; ; attempt++) {
      const snapshot = await log.snapshot();
      if (!snapshot) return { ...replica, snapshot };
      const { position } = replica;
      if (position.logId !== snapshot.logId || position.seq < snapshot.seq) {
        if (position.logId === '' && snapshot.origin === 'empty' && (await holdsStore(replica.store))) {
          // A store from before the log meets a log that another instance created from nothing
          // (it led first, e.g. a new standby during the upgrade): replacing this file would hide
          // its data behind an empty history. Leave it to the operator.
          throw new Error(
            `${replica.store.file} holds a store from before the database log, but the log in etcd was created from an empty copy; ` +
              'refusing to replace it. Stop every database instance, delete the log (etcdctl del --prefix <etcd.prefix>/log/database/) ' +
              'and start this instance first (docs/operations.md, "Database standbys")',
          );
        }
        const data = await log.readSnapshot(snapshot);
        await replica.store.close();
        // A file of another log (or of none: written before replication) is kept aside once.
        restoreSnapshot(dir, data, position.logId !== snapshot.logId);
        replica = await openLocal(dir);
        logger.info(
          { snapshotSeq: snapshot.seq, bytes: snapshot.bytes, from: position },
          'database copy restored from the log snapshot',
        );
      }
      try {
        const applied = await applyLog(replica, log);
        if (applied > 0) logger.info({ applied, seq: replica.position.seq }, 'database copy caught up with the log');
        return { ...replica, snapshot };
      } catch (err) {
        // Compacted while we read: the newer snapshot has what we miss. Bounded: each retry
        // follows a newer snapshot, and compaction is rare.
        if (!(err instanceof LogGap) || attempt >= 5) throw err;
      }
    }
  } catch (err) {
    await replica.store.close();
    throw err;
  }
}

export { LogGap };
