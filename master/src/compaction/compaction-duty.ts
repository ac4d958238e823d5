import { componentLogger } from '@strata/common';
import type { LeaderDuty, LeaderState } from '../leader-state.js';
import { CompactionScheduler } from './compaction-scheduler.js';

export interface CompactionDutyOptions {
  /** Service.Storage.Compaction.MaxFileSize of an account in bytes (default: 1 GB for all). */
  maxFileSize?: (accountId: string, state: LeaderState) => Promise<number>;
  intervalMs?: number;
}

/**
 * Leader duty running the compaction scheduler while this master leads; jobs carry the
 * leadership's fencing term. Listed in leaderDuties() with the settings reader for MaxFileSize.
 */
export class CompactionDuty implements LeaderDuty {
  readonly name = 'compaction';
  private scheduler: CompactionScheduler | undefined;

  constructor(private readonly options: CompactionDutyOptions = {}) {}

  async start(state: LeaderState): Promise<void> {
    const { maxFileSize } = this.options;
    this.scheduler = new CompactionScheduler({
      listWorkers: () => state.coordinator.listWorkers(),
      channels: state.channels,
      term: () => state.term,
      maxFileSize: maxFileSize ? (accountId) => maxFileSize(accountId, state) : undefined,
      intervalMs: this.options.intervalMs,
      log: componentLogger(state.log, 'compaction'),
    });
    this.scheduler.start();
  }

  async stop(): Promise<void> {
    await this.scheduler?.stop();
    this.scheduler = undefined;
  }
}
