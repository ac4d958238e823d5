import { componentLogger, type Logger, StrataError } from '@strata/common';
import { ExecuteFragmentRequest } from '@strata/proto/query/v1/query';
import { WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { CycleDuty, type DutyCycle } from '../cycle-duty.js';
import type { LeaderState } from '../leader-state.js';
import { PurgeRepository } from './purge-repository.js';

/** Segments a worker rewrites per step: small steps keep progress visible and calls short. */
const SEGMENTS_PER_STEP = 4;
const STEP_TIMEOUT_MS = 120_000;

/**
 * Leader duty running purge jobs to the end: every `intervalMs`, for each running job, asks each
 * worker that has not finished for a PurgeStep and records the answer. Steps are idempotent on
 * the worker and progress is in the relational store, so a worker or master restart (or a
 * failover) only means the next step is asked again. A worker that is not registered (down) keeps
 * the job running until it is back: its rows are not given up on silently.
 */
export class PurgeDuty extends CycleDuty {
  readonly name = 'purge';

  constructor(private readonly intervalMs = 1_000) {
    super();
  }

  protected cycleFor(state: LeaderState): DutyCycle {
    const log = componentLogger(state.log, 'purge');
    return {
      run: (signal) =>
        this.runOnce(state, log, signal).catch((err) =>
          log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'purge round failed'),
        ),
      nextDelayMs: async () => this.intervalMs,
    };
  }

  private async runOnce(state: LeaderState, log: Logger, signal: AbortSignal): Promise<void> {
    const repo = new PurgeRepository(state.store);
    const jobs = await repo.running();
    if (jobs.length === 0) return;
    // Jobs name workers by id (placements do too): a worker back at another address is found again.
    const endpoints = new Map<string, string>();
    for (const w of await state.coordinator.listWorkers()) if (w.workerId) endpoints.set(w.workerId, w.endpoint);
    for (const job of jobs) {
      const fragment = ExecuteFragmentRequest.decode(job.fragment);
      for (const w of job.workers) {
        if (signal.aborted) return;
        const endpoint = endpoints.get(w.worker);
        if (w.finished || !endpoint) continue;
        try {
          const step = await state.channels
            .client(WorkerStorageServiceService, endpoint)
            .purgeStep({ jobId: job.jobId, fragment, maxSegments: SEGMENTS_PER_STEP }, { timeoutMs: STEP_TIMEOUT_MS });
          await repo.recordStep(job.jobId, {
            worker: w.worker,
            rowsExamined: Number(step.rowsExamined),
            rowsRemoved: Number(step.rowsRemoved),
            segmentsDone: step.segmentsDone,
            segmentsTotal: step.segmentsTotal,
            finished: step.finished,
            lastError: '',
          });
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          // A refused fragment will be refused again: the job cannot succeed.
          if (err instanceof StrataError && err.kind === 'invalid') await repo.fail(job.jobId, message);
          else await repo.recordError(job.jobId, w.worker, message);
          log.warn({ jobId: job.jobId, worker: w.worker, reason: message }, 'purge step failed');
        }
      }
    }
  }
}
