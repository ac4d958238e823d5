import { type ChannelPool, errorFields, type Logger, StrataError, type WorkerRegistration } from '@strata/common';
import { SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import { type CompactionJob, planCompaction } from './planner.js';

/** Service.Storage.Compaction.MaxFileSize default: 1 GB. */
export const DEFAULT_COMPACTION_MAX_FILE_SIZE = 1024 ** 3;

export interface CompactionSchedulerOptions {
  /** Workers to plan for (the coordinator's registry). */
  listWorkers: () => Promise<Pick<WorkerRegistration, 'endpoint' | 'writable'>[]>;
  channels: ChannelPool;
  /** The account's Service.Storage.Compaction.MaxFileSize in bytes. Default: 1 GB for every account. */
  maxFileSize?: (accountId: string) => Promise<number>;
  /** The leader's fencing term, sent with every job; undefined stops the cycle (not leader). */
  term?: () => number | undefined;
  /** Time between cycles. Default 5 minutes. */
  intervalMs?: number;
  /** Deadline of one Compact call. Default 30 minutes (a job may merge 1 GB). */
  jobTimeoutMs?: number;
  minSegmentsPerPartialJob?: number;
  log: Logger;
}

export interface CompactionCycleReport {
  workers: number;
  planned: number;
  completed: number;
  failed: number;
}

/**
 * Runs compaction periodically while this master leads: for each writable worker it lists the
 * segment catalog, plans jobs (planner.ts) with each account's MaxFileSize and asks the worker to
 * run them one after the other. A failed job is logged and retried by a later cycle from a fresh
 * catalog; a stale plan fails on the worker without changing anything.
 *
 * The master role starts it when elected and stops it when demoted.
 */
export class CompactionScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private abort: AbortController | undefined;
  private stopped = true;

  constructor(private readonly o: CompactionSchedulerOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    this.schedule();
  }

  /** Stops planning; an in-flight Compact call is cancelled. Resolves when the cycle has ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.abort?.abort();
    await this.running.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(
      () => {
        this.running = this.runOnce()
          .catch((err) => this.o.log.error(errorFields(err), 'compaction cycle failed'))
          .finally(() => this.schedule());
      },
      this.o.intervalMs ?? 5 * 60_000,
    );
    this.timer.unref();
  }

  /** One planning cycle over every writable worker. */
  async runOnce(): Promise<CompactionCycleReport> {
    const signal = this.abort?.signal ?? new AbortController().signal;
    const report: CompactionCycleReport = { workers: 0, planned: 0, completed: 0, failed: 0 };
    const sizes = new Map<string, number>();
    const sizeOf = async (accountId: string) => {
      let size = sizes.get(accountId);
      if (size === undefined) {
        size = this.o.maxFileSize ? await this.o.maxFileSize(accountId) : DEFAULT_COMPACTION_MAX_FILE_SIZE;
        sizes.set(accountId, size);
      }
      return size;
    };
    for (const worker of await this.o.listWorkers()) {
      // A worker short of space refuses compaction anyway (it needs room for the merged file).
      if (!worker.writable || signal.aborted) continue;
      const term = this.o.term ? this.o.term() : 0;
      if (term === undefined) break;
      report.workers++;
      const client = this.o.channels.client(SegmentServiceService, worker.endpoint);
      let jobs: CompactionJob[];
      try {
        const { segments } = await client.listSegments({ accountId: '', includeReplicas: false }, { signal, timeoutMs: 30_000 });
        for (const s of segments) await sizeOf(s.accountId);
        jobs = planCompaction(
          segments.map((s) => ({
            segmentId: s.segmentId,
            accountId: s.accountId,
            schema: s.schema,
            byteSize: s.byteSize,
            minTimestampMs: s.minTimestampMs,
            createdAtMs: s.createdAtMs,
          })),
          { maxFileSize: (a) => sizes.get(a)!, minSegmentsPerPartialJob: this.o.minSegmentsPerPartialJob },
        );
      } catch (err) {
        this.o.log.warn({ worker: worker.endpoint, ...errorFields(err) }, 'could not list segments for compaction');
        continue;
      }
      report.planned += jobs.length;
      for (const job of jobs) {
        if (signal.aborted) break;
        try {
          await client.compact(
            { accountId: job.accountId, schema: job.schema, segmentIds: job.segmentIds, term },
            { signal, timeoutMs: this.o.jobTimeoutMs ?? 30 * 60_000 },
          );
          report.completed++;
        } catch (err) {
          report.failed++;
          const stale = err instanceof StrataError && err.kind === 'precondition_failed';
          this.o.log[stale ? 'info' : 'warn'](
            {
              worker: worker.endpoint,
              accountId: job.accountId,
              schema: job.schema,
              segments: job.segmentIds.length,
              ...errorFields(err),
            },
            stale ? 'compaction job skipped: plan was stale' : 'compaction job failed',
          );
        }
      }
    }
    if (report.planned > 0) this.o.log.info(report, 'compaction cycle done');
    return report;
  }
}
