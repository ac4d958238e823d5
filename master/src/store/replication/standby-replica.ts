import { errorFields, type Logger, type ReplicatedLog } from '@strata/common';
import { applyLog, type LocalReplica, LogGap, openSynced } from './replica-sync.js';
import { databaseLogEntry, standbyFollowing } from './replication-metrics.js';

/** Longest wait between two checks of the log when no watch event arrives. */
const POLL_MS = 5_000;
/** Back-off after a failure (the file locked by a leader sharing the volume, etcd unreachable). */
const RETRY_MS = [250, 500, 1_000, 2_000, 5_000];

/**
 * A standby's own copy of the relational store, kept current while this instance does not lead:
 * it restores from the log's snapshot when it has to (a new, empty volume; a copy too far behind)
 * and applies every entry as it appears. So a takeover only reads the few entries the copy has not
 * seen yet. Started when the instance is not leading, stopped (and the store closed) before it
 * opens the store as leader.
 */
export class StandbyReplica {
  private replica: LocalReplica | undefined;
  private stopped = false;
  private dirty = true;
  private wake: (() => void) | undefined;
  private readonly done: Promise<void>;
  private failures = 0;
  /** What the copy did last (logged, and for tests and operators: `describe()`). */
  private state = 'starting';

  constructor(
    private readonly dir: string,
    private readonly log: ReplicatedLog,
    private readonly logger: Logger,
  ) {
    const unsubscribe = log.watch(() => this.poke());
    this.done = this.loop().finally(unsubscribe);
  }

  describe(): string {
    return this.state;
  }

  /** Stops following and closes the copy; resolves once the file is free. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.poke();
    await this.done;
  }

  private poke(): void {
    this.dirty = true;
    this.wake?.();
  }

  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wake = undefined;
  }

  private async loop(): Promise<void> {
    try {
      while (!this.stopped) {
        if (!this.dirty) await this.pause(POLL_MS);
        if (this.stopped) break;
        this.dirty = false;
        try {
          await this.sync();
          this.failures = 0;
          standbyFollowing().set(1);
          if (this.replica) databaseLogEntry().set(this.replica.position.seq);
        } catch (err) {
          await this.closeCopy();
          const delay = RETRY_MS[Math.min(this.failures, RETRY_MS.length - 1)]!;
          if (this.failures === 0 || this.failures % 20 === 0) {
            this.logger.warn({ ...errorFields(err), retryInMs: delay }, 'standby copy of the database cannot follow the log');
          }
          this.state = `not following the log: ${(err as Error).message}`;
          standbyFollowing().set(0);
          this.failures++;
          this.dirty = true;
          await this.pause(delay);
        }
      }
    } finally {
      await this.closeCopy();
    }
  }

  private async sync(): Promise<void> {
    if (!this.replica) {
      const { store, position, snapshot } = await openSynced(this.dir, this.log, this.logger);
      this.replica = { store, position };
      this.state = snapshot ? `following the log at entry ${position.seq}` : 'waiting for a leader to create the log';
      return;
    }
    try {
      await applyLog(this.replica, this.log);
      this.state = `following the log at entry ${this.replica.position.seq}`;
    } catch (err) {
      // Entries compacted away while this copy was behind: reopen from the snapshot.
      if (!(err instanceof LogGap)) throw err;
      await this.closeCopy();
      this.dirty = true;
    }
  }

  private async closeCopy(): Promise<void> {
    const replica = this.replica;
    this.replica = undefined;
    await replica?.store.close();
  }
}
