import { type Candidacy, errorFields, type RoleContext } from '@strata/common';
import { leaderDuties } from './leader-duties.js';
import type { LeaderDuty, LeaderState } from './leader-state.js';
import { ALL_MIGRATIONS } from './store/all-migrations.js';
import { runMigrations } from './store/migrations.js';
import { RelationalStore } from './store/relational-store.js';
import { openReplicatedStore, type StoreReplication } from './store/replication/store-replication.js';

/**
 * Everything one leadership term owns: the open relational store and the running leader duties.
 * It is torn down exactly once (`close()` is memoized): duties stop in reverse start order, then
 * the store closes. The master opens a new term only after the previous one's `close()` resolved,
 * so no two DuckDB instances of the store file ever exist in one process (a leaked instance that
 * is garbage-collected later deletes the write-ahead log the live one writes: acknowledged writes
 * were lost that way).
 */
export class LeaderTerm {
  private readonly running: LeaderDuty[] = [];
  private closing: Promise<void> | undefined;

  private constructor(readonly state: LeaderState) {}

  /**
   * Opens the store (fenced by `candidacy`) and starts every leader duty. On failure whatever was
   * opened is closed again before the error is thrown. With a replicated coordinator (etcd) the
   * store is this instance's own copy, first brought to the end of the database log, and every
   * write is logged before it commits (docs/decisions/0017-database-standbys.md).
   */
  static async open(term: number, ctx: RoleContext, candidacy: Candidacy, log: LeaderState['log']): Promise<LeaderTerm> {
    const dir = ctx.config.database.dataPath;
    const databaseLog = ctx.coordinator.replicatedLog('database');
    let store: RelationalStore;
    let replication: StoreReplication | undefined;
    if (databaseLog) {
      ({ store, replication } = await openReplicatedStore({
        dir,
        log: databaseLog,
        candidacy,
        term,
        snapshotEveryChanges: ctx.config.database.snapshotEveryChanges,
        logger: log,
      }));
      try {
        await runMigrations(store, ALL_MIGRATIONS);
      } catch (err) {
        await store.close();
        throw err;
      }
    } else {
      store = await RelationalStore.open(dir, {
        migrations: ALL_MIGRATIONS,
        // Fencing: a write commits only while this candidacy still holds the election (a lease
        // alone lets a paused old leader act for seconds: measured 3.5 s, docs/architecture.md).
        commitGuard: () => candidacy.assertLeadership(),
      });
    }
    const leaderTerm = new LeaderTerm({
      term,
      store,
      replication,
      config: ctx.config,
      coordinator: ctx.coordinator,
      channels: ctx.channels,
      log,
      clock: ctx.clock ?? (() => new Date()),
      assertLeadership: () => candidacy.assertLeadership(),
    });
    try {
      for (const duty of leaderDuties()) {
        await duty.start(leaderTerm.state);
        leaderTerm.running.push(duty);
      }
    } catch (err) {
      await leaderTerm.close();
      throw err;
    }
    return leaderTerm;
  }

  get term(): number {
    return this.state.term;
  }

  /** Stops the duties and closes the store; every later call returns the same promise. */
  close(): Promise<void> {
    this.closing ??= this.teardown();
    return this.closing;
  }

  private async teardown(): Promise<void> {
    const { log, store } = this.state;
    for (const duty of this.running.splice(0).reverse()) {
      await duty.stop().catch((err) => log.error({ duty: duty.name, ...errorFields(err) }, 'leader duty failed to stop'));
    }
    // Not caught: a store that could not be closed must not be opened again by this process.
    await store.close();
  }
}
