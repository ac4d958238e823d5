import { type Candidacy, errorFields, type Logger, type ReplicatedLog, StrataError } from '@strata/common';
import type { CommitHook, RecordedStatement, SqlExecutor } from '../relational-store.js';
import { encodeChangeEntry } from './change-entry.js';
import { type ReplicaPosition, writePosition } from './replica-position.js';
import { databaseLogEntry } from './replication-metrics.js';

/**
 * Largest entry the log takes (after compression). etcd refuses requests above 1.5 MiB by default
 * (`--max-request-bytes`); a transaction this large is refused as such instead of failing in etcd
 * with an outcome the leader could not tell from a lost connection.
 */
export const MAX_ENTRY_BYTES = 1024 * 1024;

/**
 * The leader's commit hook: every write transaction's statements become the next entry of the
 * database log, appended in the same etcd transaction as the fencing check, BEFORE the local
 * COMMIT. So a write acknowledged to a client is in etcd, and a deposed leader commits nothing
 * (its append fails, the local transaction rolls back). The local copy is never ahead of the log;
 * it can only fall behind, when the append's outcome is unknown or the local COMMIT fails after
 * the append: then this term is given up (`stepAside`) and the next one catches up from the log.
 * Order and reasons: docs/decisions/0017-database-standbys.md.
 */
export class LeaderJournal implements CommitHook {
  private pending: { seq: number; bytes: number } | undefined;
  /** Bytes this leader appended since the last snapshot (decides, with the count, when one is due). */
  private logged = 0;

  constructor(
    private readonly log: ReplicatedLog,
    private readonly candidacy: Candidacy,
    private position: ReplicaPosition,
    private readonly term: number,
    private readonly logger: Logger,
  ) {}

  /** The last entry this leader's store has committed. */
  get seq(): number {
    return this.position.seq;
  }

  get logId(): string {
    return this.position.logId;
  }

  /** Bytes of entries this leader appended since it last published a snapshot (or took office). */
  get loggedBytes(): number {
    return this.logged;
  }

  snapshotPublished(): void {
    this.logged = 0;
  }

  async beforeCommit(changes: readonly RecordedStatement[], tx: SqlExecutor): Promise<void> {
    // Nothing changed: nothing to log, but the answer still must not come from a deposed leader.
    if (changes.length === 0) return this.candidacy.assertLeadership();
    const seq = this.position.seq + 1;
    await writePosition(tx, { logId: this.position.logId, seq });
    const entry = encodeChangeEntry({ term: this.term, statements: [...changes] });
    if (entry.length > MAX_ENTRY_BYTES) {
      throw new StrataError(
        'payload_too_large',
        `The change is too large for the database log: ${entry.length} bytes compressed, at most ${MAX_ENTRY_BYTES}.`,
      );
    }
    try {
      await this.log.append(this.candidacy, seq, entry);
    } catch (err) {
      // Fenced out (deposed, or this store is behind the log): nothing was appended.
      if (err instanceof StrataError) throw err;
      // Unknown outcome: the entry may be in the log although this transaction rolls back.
      this.logger.error({ seq, ...errorFields(err) }, 'database log append failed with an unknown outcome; stepping aside');
      this.candidacy.stepAside('database log append outcome unknown');
      throw new StrataError('unavailable', 'The write could not be confirmed by the coordinator; retry.', {
        retryAfterSeconds: 1,
        cause: err,
      });
    }
    this.pending = { seq, bytes: entry.length };
  }

  afterCommit(committed: boolean): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending === undefined) return;
    const { seq } = pending;
    if (committed) {
      this.position = { logId: this.position.logId, seq };
      this.logged += pending.bytes;
      databaseLogEntry().set(seq);
      return;
    }
    // The entry is in the log but not in this store: it must not take more writes.
    this.logger.error({ seq }, 'local COMMIT failed after the database log append; stepping aside');
    this.candidacy.stepAside('local commit failed after the log append');
  }
}
