import { statfs } from 'node:fs/promises';
import { errorFields, type Logger, StrataError } from '@strata/common';

export type StatFreeBytes = (path: string) => Promise<number>;

/** Bytes available to an unprivileged writer on the file system of `path`. */
export const statFreeBytes: StatFreeBytes = async (path) => {
  const s = await statfs(path);
  return Number(s.bavail) * Number(s.bsize);
};

export interface FreeSpaceGuardOptions {
  path: string;
  minimumFreeBytes: number;
  /** How often free space is measured. */
  intervalMs?: number;
  statFreeBytes?: StatFreeBytes;
  log: Logger;
}

export interface FreeSpaceState {
  freeBytes: number;
  writable: boolean;
}

/**
 * Watches free space of the worker's data path. Below `minimumFreeBytes` the worker refuses
 * writes (assertWritable throws 'insufficient_storage') and reports itself not writable; it
 * becomes writable again by itself when a later measurement is back above the minimum.
 *
 * Between measurements the bytes the worker wrote are subtracted from the last measurement, so a
 * burst of writes cannot run far past the threshold unnoticed.
 */
export class FreeSpaceGuard {
  private readonly intervalMs: number;
  private readonly stat: StatFreeBytes;
  private timer: NodeJS.Timeout | undefined;
  private measured = Number.POSITIVE_INFINITY;
  private writtenSinceMeasure = 0;
  private lastWritable: boolean | undefined;
  private readonly listeners: ((state: FreeSpaceState) => void)[] = [];

  constructor(private readonly options: FreeSpaceGuardOptions) {
    this.intervalMs = options.intervalMs ?? 5_000;
    this.stat = options.statFreeBytes ?? statFreeBytes;
  }

  get freeBytes(): number {
    return Math.max(0, this.measured - this.writtenSinceMeasure);
  }

  get writable(): boolean {
    return this.freeBytes >= this.options.minimumFreeBytes;
  }

  get state(): FreeSpaceState {
    return { freeBytes: this.freeBytes, writable: this.writable };
  }

  /** Called with the new state whenever `writable` flips, and after each measurement. */
  onChange(listener: (state: FreeSpaceState) => void): void {
    this.listeners.push(listener);
  }

  /** Measures now. */
  async check(): Promise<FreeSpaceState> {
    try {
      this.measured = await this.stat(this.options.path);
      this.writtenSinceMeasure = 0;
    } catch (err) {
      this.options.log.warn({ path: this.options.path, ...errorFields(err) }, 'free space measurement failed');
    }
    this.notify(true);
    return this.state;
  }

  async start(): Promise<void> {
    await this.check();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Accounts for bytes just written to the data path. */
  noteWritten(bytes: number): void {
    this.writtenSinceMeasure += bytes;
    this.notify(false);
  }

  /** Throws the refusal every write path gives while free space is under the minimum. */
  assertWritable(): void {
    if (this.writable) return;
    throw new StrataError(
      'insufficient_storage',
      `Insufficient storage: the worker has ${this.freeBytes} bytes free, below its minimum of ${this.options.minimumFreeBytes} bytes; writes are refused until space is freed.`,
      { retryAfterSeconds: 30 },
    );
  }

  private notify(measured: boolean): void {
    const writable = this.writable;
    const flipped = writable !== this.lastWritable;
    if (flipped) {
      const fields = { path: this.options.path, freeBytes: this.freeBytes, minimumFreeBytes: this.options.minimumFreeBytes };
      if (writable) this.options.log.info(fields, 'free space above the minimum: accepting writes');
      else this.options.log.warn(fields, 'free space below the minimum: refusing writes');
    }
    this.lastWritable = writable;
    if (flipped || measured) for (const l of this.listeners) l(this.state);
  }
}
