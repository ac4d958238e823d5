/**
 * The worker's query executor limits (`Service.Search.Executor.*`), applied live:
 *
 * - `Query.MaxConcurrent`: fragments executing at once on this worker. More wait in a FIFO queue
 *   of bounded length (4 × the limit, at least 16); beyond it a fragment is refused with
 *   RESOURCE_EXHAUSTED. Waiting ends with the call's deadline or cancellation.
 * - `File.MaxConcurrentRead`: segment files read at once by this worker process. DuckDB reads a
 *   scan's Parquet files with its worker threads, one file per thread at a time, so an executing
 *   fragment can read up to `threads` files at once and holds that many read permits (at most all
 *   of them). The effective number of concurrent fragments is therefore also bounded by
 *   File.MaxConcurrentRead / threads.
 * - `File.Rowgroup.MaxConcurrentRead`: row groups read at once by this worker. Each DuckDB thread
 *   scans one row group at a time, so the value maps onto the storage instance's `threads`
 *   setting, capped by the core count (more threads than cores add no reads, only contention):
 *   threads = min(value, cores). With the default (100) DuckDB keeps one thread per core.
 */
import { availableParallelism } from 'node:os';
import { type ExecutorLimits, StrataError } from '@strata/common';

/** A counting semaphore whose size can change while permits are held. */
export class Permits {
  private inUse = 0;
  private readonly waiters: { weight: number; resolve: () => void; reject: (err: unknown) => void; cleanup: () => void }[] = [];

  constructor(
    private limit: number,
    /** Most waiters allowed; undefined for no bound. */
    private readonly maxWaiting: (limit: number) => number | undefined = () => undefined,
    private readonly fullMessage = 'Too many queries are waiting.',
  ) {}

  get size(): number {
    return this.limit;
  }

  get used(): number {
    return this.inUse;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  setLimit(limit: number): void {
    this.limit = Math.max(1, Math.floor(limit));
    this.drain();
  }

  /** Waits for `weight` permits (capped at the limit); resolves to the release function. */
  acquire(signal: AbortSignal, weight = 1): Promise<() => void> {
    signal.throwIfAborted();
    const w = Math.max(1, Math.min(weight, this.limit));
    const release = () => {
      let released = false;
      return () => {
        if (released) return;
        released = true;
        this.inUse -= w;
        this.drain();
      };
    };
    if (this.waiters.length === 0 && this.inUse + w <= this.limit) {
      this.inUse += w;
      return Promise.resolve(release());
    }
    const bound = this.maxWaiting(this.limit);
    if (bound !== undefined && this.waiters.length >= bound) {
      return Promise.reject(new StrataError('resource_exhausted', this.fullMessage));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal.reason ?? new StrataError('cancelled', 'The query was cancelled.'));
        this.drain();
      };
      const waiter = {
        weight: w,
        resolve: () => resolve(release()),
        reject,
        cleanup: () => signal.removeEventListener('abort', onAbort),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private drain(): void {
    while (this.waiters.length > 0) {
      const next = this.waiters[0] as (typeof this.waiters)[0];
      const w = Math.min(next.weight, this.limit);
      if (this.inUse + w > this.limit) return;
      this.waiters.shift();
      next.cleanup();
      this.inUse += w;
      next.weight = w;
      next.resolve();
    }
  }
}

/** DuckDB threads for a Rowgroup.MaxConcurrentRead value. */
export function threadsFor(rowgroupMaxConcurrentRead: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(Math.floor(rowgroupMaxConcurrentRead), cores));
}

/** The three limits of one worker, updated from the settings poller. */
export class ExecutorLimiter {
  readonly queries: Permits;
  readonly fileReads: Permits;
  private rowgroups: number;

  /** `cores`: the worker's CPU budget (cpu-budget.ts); DuckDB never gets more threads. */
  constructor(
    limits: Readonly<ExecutorLimits>,
    private readonly cores = availableParallelism(),
  ) {
    this.queries = new Permits(
      limits.queryMaxConcurrent,
      (limit) => Math.max(16, 4 * limit),
      'Too many queries are waiting on this worker; try again shortly.',
    );
    this.fileReads = new Permits(limits.fileMaxConcurrentRead);
    this.rowgroups = limits.rowgroupMaxConcurrentRead;
  }

  apply(limits: Readonly<ExecutorLimits>): void {
    this.queries.setLimit(limits.queryMaxConcurrent);
    this.fileReads.setLimit(limits.fileMaxConcurrentRead);
    this.rowgroups = limits.rowgroupMaxConcurrentRead;
  }

  /** DuckDB threads the storage instance should run with. */
  threads(): number {
    return threadsFor(this.rowgroups, this.cores);
  }

  /**
   * Admits one fragment: a query slot, then `threads` file-read permits. Resolves to the release
   * of both.
   */
  async admit(signal: AbortSignal): Promise<() => void> {
    const releaseQuery = await this.queries.acquire(signal);
    try {
      const releaseFiles = await this.fileReads.acquire(signal, this.threads());
      return () => {
        releaseFiles();
        releaseQuery();
      };
    } catch (err) {
      releaseQuery();
      throw err;
    }
  }
}
