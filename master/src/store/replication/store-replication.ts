import { randomUUID } from 'node:crypto';
import type { Candidacy, Logger, ReplicatedLog, SnapshotInfo } from '@strata/common';
import type { RelationalStore } from '../relational-store.js';
import { LeaderJournal } from './leader-journal.js';
import { writePosition } from './replica-position.js';
import { holdsStore, openSynced } from './replica-sync.js';
import { databaseLogEntry } from './replication-metrics.js';
import { takeSnapshot } from './store-snapshot.js';

/** A leader's replicated store: its journal into the log and the log's current snapshot. */
export interface StoreReplication {
  log: ReplicatedLog;
  journal: LeaderJournal;
  candidacy: Candidacy;
  /** The snapshot the log currently starts from (replaced by each one this leader publishes). */
  snapshot: SnapshotInfo;
  snapshotEveryChanges: number;
}

/**
 * Opens the new leader's store on its own copy: caught up to the end of the log (nothing can be
 * appended any more by the deposed leader once we are elected: its appends are fenced), the log
 * created from this copy if there is none yet (a new cluster, or an upgrade from a store without
 * replication: the first leader's file is the baseline), and the journal installed, so every
 * later write transaction (migrations included) is logged before it commits.
 */
export async function openReplicatedStore(options: {
  dir: string;
  log: ReplicatedLog;
  candidacy: Candidacy;
  term: number;
  snapshotEveryChanges: number;
  logger: Logger;
}): Promise<{ store: RelationalStore; replication: StoreReplication }> {
  const { dir, log, candidacy, term, logger } = options;
  const synced = await openSynced(dir, log, logger);
  const { store } = synced;
  try {
    let { position, snapshot } = synced;
    if (!snapshot) {
      const origin = (await holdsStore(store)) ? 'existing' : 'empty';
      position = { logId: randomUUID(), seq: 0 };
      await store.transaction((tx) => writePosition(tx, position));
      const { data } = await takeSnapshot(store);
      snapshot = await log.publishSnapshot(candidacy, { logId: position.logId, seq: 0, data, origin }, undefined);
      logger.info({ logId: position.logId, bytes: data.length, origin }, 'created the database log from this copy');
    }
    const journal = new LeaderJournal(log, candidacy, position, term, logger);
    store.setCommitHook(journal);
    databaseLogEntry().set(position.seq);
    logger.info({ seq: position.seq, snapshotSeq: snapshot.seq }, 'database copy at the end of the log');
    return { store, replication: { log, journal, candidacy, snapshot, snapshotEveryChanges: options.snapshotEveryChanges } };
  } catch (err) {
    await store.close();
    throw err;
  }
}

/**
 * Publishes a snapshot of the leader's store when enough changes were logged since the last one,
 * which lets the log drop the entries it covers. Answers whether it published. "Enough": at least
 * `snapshotEveryChanges` entries, and at least a quarter of the last snapshot's size in bytes, so a
 * large store is not copied into etcd after every few small writes (etcd keeps replaced values
 * until its own compaction: the chart's etcd after 1 h). The byte count is this leader's own (a
 * leader does not know the sizes of entries it did not append), so after ten times the entry
 * count a snapshot is due anyway: the log stays bounded however often leadership changes.
 */
export async function snapshotIfDue(store: RelationalStore, replication: StoreReplication, logger: Logger): Promise<boolean> {
  const { journal, snapshot } = replication;
  const entries = journal.seq - snapshot.seq;
  const every = replication.snapshotEveryChanges;
  if (entries < every) return false;
  if (journal.loggedBytes < snapshot.bytes / 4 && entries < 10 * every) return false;
  const started = Date.now();
  const { position, data } = await takeSnapshot(store);
  if (position.seq <= replication.snapshot.seq) return false;
  replication.snapshot = await replication.log.publishSnapshot(
    replication.candidacy,
    { logId: position.logId, seq: position.seq, data, origin: snapshot.origin },
    replication.snapshot,
  );
  journal.snapshotPublished();
  logger.info(
    { seq: position.seq, bytes: data.length, ms: Date.now() - started },
    'published a database snapshot; the log before it is dropped',
  );
  return true;
}
