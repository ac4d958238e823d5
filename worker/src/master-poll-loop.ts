import type { Coordinator, Unsubscribe } from '@strata/common';

/**
 * Calls `poll(endpoint)` with the master leader's endpoint now and then every `intervalMs`, one
 * call at a time, until stopped. The leader is followed through the coordinator's election; a
 * poll without a leader fails with a plain message. What a poll does with failures is its own
 * business (the pollers keep the last applied values in force).
 */
export class MasterPollLoop {
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private leaderEndpoint: string | undefined;
  private stopObserving: Unsubscribe | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly intervalMs: number,
    private readonly poll: (leaderEndpoint: string) => Promise<void>,
    private readonly onFailure: (err: unknown) => void,
  ) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.stopObserving = this.coordinator.observeLeader('database', (leader) => {
      this.leaderEndpoint = leader?.value;
    });
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.stopObserving?.();
    await this.inFlight;
  }

  /** Polls once now (also used by tests); never throws. */
  pollNow(): Promise<void> {
    this.inFlight ??= this.once().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async once(): Promise<void> {
    try {
      const endpoint = this.leaderEndpoint ?? (await this.coordinator.getLeader('database'))?.value;
      if (!endpoint) throw new Error('no database leader is elected');
      await this.poll(endpoint);
    } catch (err) {
      this.onFailure(err);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(async () => {
      await this.pollNow();
      this.schedule(this.intervalMs);
    }, delayMs);
    this.timer.unref();
  }
}
