import { errorFields } from '@strata/common';
import { CycleDuty, type DutyCycle } from '../../cycle-duty.js';
import type { LeaderState } from '../../leader-state.js';
import { snapshotIfDue } from './store-replication.js';

/** How often the leader checks whether a snapshot is due. */
const CHECK_EVERY_MS = 5_000;

/**
 * The leader duty that keeps the database log bounded: a snapshot after every
 * `database.snapshotEveryChanges` logged transactions (decision 0017). Nothing to do without
 * replication (embedded coordinator).
 */
export class SnapshotDuty extends CycleDuty {
  readonly name = 'database-snapshots';

  protected cycleFor(state: LeaderState): DutyCycle {
    return {
      run: async (signal) => {
        if (!state.replication || signal.aborted) return;
        try {
          await snapshotIfDue(state.store, state.replication, state.log);
        } catch (err) {
          state.log.warn(errorFields(err), 'publishing a database snapshot failed; retrying later');
        }
      },
      nextDelayMs: async () => CHECK_EVERY_MS,
    };
  }
}
