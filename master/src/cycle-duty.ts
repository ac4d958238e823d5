import type { LeaderDuty, LeaderState } from './leader-state.js';

/** What a cycle duty does each time: one round of work, and how long to wait before the next. */
export interface DutyCycle {
  /** One round; `signal` aborts when leadership ends (stop between items). Failures are its own to log. */
  run(signal: AbortSignal): Promise<void>;
  /** Wait after a round (read afresh each time, e.g. from a setting). */
  nextDelayMs(): Promise<number>;
}

/**
 * A leader duty that runs a round of work at once (a new leader picks up the backlog) and then
 * after each round waits `nextDelayMs()`, until leadership ends. Stopping aborts the running
 * round and waits for it, so no work overlaps a new leader's. Start-up does not wait for the
 * first round. The mailer, the webhook sender and the purge runner are cycle duties.
 */
export abstract class CycleDuty implements LeaderDuty {
  abstract readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private abort = new AbortController();

  /** The cycle of this leadership term. */
  protected abstract cycleFor(state: LeaderState): DutyCycle;

  async start(state: LeaderState): Promise<void> {
    const cycle = this.cycleFor(state);
    this.stopped = false;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    const schedule = async () => {
      if (this.stopped) return;
      const delay = await cycle.nextDelayMs();
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = cycle.run(signal).then(schedule);
      }, delay);
      this.timer.unref();
    };
    this.running = cycle.run(signal).then(schedule);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
