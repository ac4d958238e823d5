import type { Candidacy, Unsubscribe } from './coordinator.js';

/** One entry of a replicated log: its position and the bytes the leader appended. */
export interface LogEntry {
  seq: number;
  value: Buffer;
}

/**
 * A published snapshot of the replicated state: the state after applying every entry up to and
 * including `seq` of the log `logId`. Its bytes are stored in `chunks` pieces (etcd refuses values
 * above ~1.5 MB) and checked against `sha256` when read back.
 */
export interface SnapshotInfo {
  /** Identity of the log (a UUID chosen when the first snapshot was published). */
  logId: string;
  seq: number;
  chunks: number;
  bytes: number;
  sha256: string;
  /** Fencing term of the leader that published it. */
  term: number;
  createdAt: string;
  /**
   * What the log was created from, recorded by the first snapshot and carried on: `empty` when
   * the first leader's copy held nothing yet (a new cluster), `existing` when it held a store.
   */
  origin: 'empty' | 'existing';
  /** Store revision of this record, used to replace exactly this snapshot and no later one. */
  revision: string;
}

/**
 * A log of a leader's committed changes kept in the coordinator's replicated store, plus snapshots
 * so the log stays bounded. The database role writes every committed transaction of its relational
 * store here, and standbys apply it to their own copy (docs/decisions/0017-database-standbys.md).
 *
 * Invariant kept by the writers: the snapshot plus the entries after it are the whole state. The
 * first snapshot creates the log; entries up to a newer snapshot's `seq` are removed once it is
 * published.
 */
export interface ReplicatedLog {
  /**
   * Appends entry `seq` in ONE coordinator transaction with the leader's fencing check: it lands
   * only if `candidacy` still leads with its term and no entry `seq` exists yet. Otherwise throws
   * StrataError `unavailable` (and the candidacy is demoted: its view of the log or of its
   * leadership is stale). Any other error leaves the outcome unknown: the entry may have landed.
   */
  append(candidacy: Candidacy, seq: number, value: Buffer): Promise<void>;
  /** Up to `limit` entries with a seq above `after`, in order (a gap means they were compacted). */
  read(after: number, limit: number): Promise<LogEntry[]>;
  /** The current snapshot, or undefined before the log was created. */
  snapshot(): Promise<SnapshotInfo | undefined>;
  /** The bytes of `info`, checked against its hash (throws if they were replaced meanwhile). */
  readSnapshot(info: SnapshotInfo): Promise<Buffer>;
  /**
   * Stores `data` as the state at `seq` of log `logId` and makes it the current snapshot, fenced
   * like `append` and only if the current snapshot is still `replaces` (undefined: there is none,
   * which creates the log). Then removes the entries up to `seq` and the chunks of older snapshots.
   */
  publishSnapshot(
    candidacy: Candidacy,
    snapshot: { logId: string; seq: number; data: Buffer; origin: SnapshotInfo['origin'] },
    replaces: SnapshotInfo | undefined,
  ): Promise<SnapshotInfo>;
  /** Calls back (coalesced) whenever the log or its snapshot may have changed, and once at start. */
  watch(callback: () => void): Unsubscribe;
}
