import { componentLogger, errorFields } from '@strata/common';
import type { LeaderDuty, LeaderState } from '../leader-state.js';
import { WebhookSender } from './webhook-sender.js';

const CYCLE_MS = 1000;
/** Finished deliveries stay in the delivery log this long. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;
const PURGE_EVERY_MS = 3600_000;

/**
 * The leader's webhook queue: a cycle every second, until leadership ends. Stopping waits for the
 * running cycle (it stops between deliveries), so no delivery overlaps a new leader's.
 */
export class WebhookDuty implements LeaderDuty {
  readonly name = 'webhooks';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private abort = new AbortController();

  async start(state: LeaderState): Promise<void> {
    const log = componentLogger(state.log, 'webhooks');
    const sender = new WebhookSender(state.store, state.config.webhooks, log);
    this.stopped = false;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    let lastPurge = 0;
    const cycle = async () => {
      try {
        await sender.runCycle(signal);
        if (!signal.aborted && Date.now() - lastPurge > PURGE_EVERY_MS) {
          lastPurge = Date.now();
          await sender.purge(KEEP_FINISHED_MS);
        }
      } catch (err) {
        log.warn(errorFields(err), 'webhook cycle failed; trying again');
      }
    };
    const schedule = () => {
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = cycle().then(schedule);
      }, CYCLE_MS);
    };
    this.running = cycle().then(schedule);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
