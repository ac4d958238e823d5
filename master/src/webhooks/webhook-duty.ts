import { componentLogger, errorFields } from '@strata/common';
import { CycleDuty, type DutyCycle } from '../cycle-duty.js';
import type { LeaderState } from '../leader-state.js';
import { WebhookSender } from './webhook-sender.js';

const CYCLE_MS = 1000;
/** Finished deliveries stay in the delivery log this long. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;
const PURGE_EVERY_MS = 3600_000;

/**
 * The leader's webhook queue: a cycle every second, until leadership ends. Stopping waits for the
 * running cycle (it stops between deliveries), so no delivery overlaps a new leader's.
 */
export class WebhookDuty extends CycleDuty {
  readonly name = 'webhooks';

  protected cycleFor(state: LeaderState): DutyCycle {
    const log = componentLogger(state.log, 'webhooks');
    const sender = new WebhookSender(state.store, state.config.webhooks, log);
    let lastPurge = 0;
    return {
      run: async (signal) => {
        try {
          await sender.runCycle(signal);
          if (!signal.aborted && Date.now() - lastPurge > PURGE_EVERY_MS) {
            lastPurge = Date.now();
            await sender.purge(KEEP_FINISHED_MS);
          }
        } catch (err) {
          log.warn(errorFields(err), 'webhook cycle failed; trying again');
        }
      },
      nextDelayMs: async () => CYCLE_MS,
    };
  }
}
