import type { Etcd3, Watcher } from 'etcd3';
import { errorFields, type Logger } from '../logging.js';
import { backoffDelay } from './backoff.js';

export interface PrefixWatchOptions<T> {
  client: Etcd3;
  /** Full key prefix to watch. */
  prefix: string;
  /** Reads the current state (one etcd range request). */
  load: () => Promise<T>;
  /** Whether two states are the same (no callback then). */
  equal: (a: T, b: T) => boolean;
  emit: (state: T) => void;
  log: Logger;
}

/**
 * Mirrors the keys under a prefix into a callback: watch the prefix, then read the state, and read
 * it again after every change the watch reports (coalesced: one read in flight at a time). The
 * watch starts before the first read, so no change between the two is missed. Re-reads after a
 * watch reconnect too, and restarts a watch that failed, with backoff. Calls back only when the
 * state differs from the last one delivered; the first read is always delivered.
 */
export class PrefixWatch<T> {
  private watcher: Watcher | undefined;
  private stopped = false;
  private dirty = true;
  private reading = false;
  private delivered: { state: T } | undefined;
  private failures = 0;
  private readonly retryTimers = new Set<NodeJS.Timeout>();

  constructor(private readonly options: PrefixWatchOptions<T>) {
    void this.startWatch();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.cancel().catch(() => undefined);
  }

  private async startWatch(): Promise<void> {
    const { client, prefix, log } = this.options;
    try {
      const watcher = await client.watch().prefix(prefix).create();
      if (this.stopped) {
        await watcher.cancel().catch(() => undefined);
        return;
      }
      this.watcher = watcher;
      watcher.on('data', () => this.refresh());
      watcher.on('connected', () => this.refresh());
      watcher.on('error', (err) => {
        log.warn({ ...errorFields(err), prefix }, 'etcd watch failed; restarting it');
        if (this.watcher === watcher) this.watcher = undefined;
        void watcher.cancel().catch(() => undefined);
        this.retry(() => this.startWatch());
      });
      this.refresh();
    } catch (err) {
      log.warn({ ...errorFields(err), prefix }, 'cannot start etcd watch; retrying');
      this.retry(() => this.startWatch());
    }
  }

  private refresh(): void {
    this.dirty = true;
    if (!this.reading) void this.readLoop();
  }

  private async readLoop(): Promise<void> {
    this.reading = true;
    try {
      while (this.dirty && !this.stopped) {
        this.dirty = false;
        try {
          const state = await this.options.load();
          this.failures = 0;
          if (this.stopped) return;
          if (!this.delivered || !this.options.equal(this.delivered.state, state)) {
            this.delivered = { state };
            try {
              this.options.emit(state);
            } catch (err) {
              this.options.log.error({ ...errorFields(err), prefix: this.options.prefix }, 'watch callback failed');
            }
          }
        } catch (err) {
          this.options.log.warn({ ...errorFields(err), prefix: this.options.prefix }, 'etcd read failed; retrying');
          this.retry(() => this.refresh());
          return;
        }
      }
    } finally {
      this.reading = false;
    }
  }

  private retry(action: () => void | Promise<void>): void {
    if (this.stopped) return;
    const timer = setTimeout(
      () => {
        this.retryTimers.delete(timer);
        if (!this.stopped) void action();
      },
      backoffDelay(this.failures++),
    );
    this.retryTimers.add(timer);
  }
}
