import type { ChannelPool, Coordinator, Logger, ResolvedConfig } from '@strata/common';
import type { RelationalStore } from './store/relational-store.js';
import type { StoreReplication } from './store/replication/store-replication.js';

/**
 * What the master holds while it is the elected leader. Every service handler that reads or writes
 * relational data gets it through `requireLeader()`, so a standby can never touch the store.
 */
export interface LeaderState {
  /** Fencing term of this leadership (strictly increasing across leaders). */
  term: number;
  store: RelationalStore;
  /** The store's journal into the database log and its snapshots; undefined without etcd. */
  replication?: StoreReplication;
  config: ResolvedConfig;
  coordinator: Coordinator;
  channels: ChannelPool;
  log: Logger;
  /** The time as the leader sees it: alert rules schedule ticks by it (tests inject one). */
  clock: () => Date;
  /**
   * Fencing check before a command whose effect must not come from a deposed leader (resolves
   * only while this term still leads; Candidacy.assertLeadership). Absent in tests without one.
   */
  assertLeadership?: () => Promise<void>;
}

/**
 * Work only the leader does (provisioning, mail outbox, compaction planning, settings
 * broadcasting). Started after election, stopped the moment leadership is lost.
 */
export interface LeaderDuty {
  readonly name: string;
  start(state: LeaderState): Promise<void>;
  stop(): Promise<void>;
}
