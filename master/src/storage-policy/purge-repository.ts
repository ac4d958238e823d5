import { randomUUID } from 'node:crypto';
import { invalid, notFound } from '@strata/common';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

export interface PurgeWorkerProgress {
  worker: string;
  rowsExamined: number;
  rowsRemoved: number;
  segmentsDone: number;
  segmentsTotal: number;
  finished: boolean;
  lastError: string;
}

export interface PurgeJob {
  jobId: string;
  accountId: string;
  schema: string;
  predicate: string;
  requestedBy: string;
  requestedAt: string;
  state: 'running' | 'succeeded' | 'failed';
  finishedAt: string;
  error: string;
  workers: PurgeWorkerProgress[];
}

type JobRow = {
  job_id: string;
  account_id: string;
  schema_name: string;
  predicate: string;
  requested_by: string;
  requested_at: string;
  state: string;
  finished_at: string | null;
  error: string | null;
  workers: string;
};

const COLUMNS = 'job_id, account_id, schema_name, predicate, requested_by, requested_at, state, finished_at, error, workers';

function jobOf(r: JobRow): PurgeJob {
  return {
    jobId: r.job_id,
    accountId: r.account_id,
    schema: r.schema_name,
    predicate: r.predicate,
    requestedBy: r.requested_by,
    requestedAt: r.requested_at,
    state: r.state as PurgeJob['state'],
    finishedAt: r.finished_at ?? '',
    error: r.error ?? '',
    workers: JSON.parse(r.workers) as PurgeWorkerProgress[],
  };
}

/**
 * Purge jobs in the relational store (who asked, when, what, and how far each worker got). The
 * leader's purge runner reads running jobs and records every step: its writes are fenced like
 * every leader write, so a deposed leader's progress never lands.
 */
export class PurgeRepository {
  constructor(private readonly store: RelationalStore) {}

  async start(input: {
    accountId: string;
    schema: string;
    predicate: string;
    fragment: Uint8Array;
    requestedBy: string;
    workers: string[];
  }): Promise<PurgeJob> {
    const accountId = input.accountId.toLowerCase();
    if (input.predicate.trim() === '') throw invalid('A purge needs a predicate.');
    const jobId = randomUUID();
    const workers: PurgeWorkerProgress[] = [...new Set(input.workers)].sort().map((worker) => ({
      worker,
      rowsExamined: 0,
      rowsRemoved: 0,
      segmentsDone: 0,
      segmentsTotal: 0,
      finished: false,
      lastError: '',
    }));
    const done = workers.length === 0;
    const now = new Date().toISOString();
    await this.store.transaction(async (tx) => {
      const account = await tx.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [accountId]);
      if (!account) throw notFound(`Account ${accountId} does not exist.`);
      await tx.run('INSERT INTO purge_jobs VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, NULL, $10)', [
        jobId,
        accountId,
        input.schema,
        input.predicate,
        Buffer.from(input.fragment).toString('base64'),
        input.requestedBy,
        now,
        done ? 'succeeded' : 'running',
        done ? now : null,
        JSON.stringify(workers),
      ]);
    });
    return (await this.get(accountId, jobId))!;
  }

  async get(accountId: string, jobId: string): Promise<PurgeJob | undefined> {
    const row = await this.store.read((x) =>
      x.one<JobRow>(`SELECT ${COLUMNS} FROM purge_jobs WHERE account_id = $1 AND job_id = $2`, [accountId.toLowerCase(), jobId]),
    );
    return row ? jobOf(row) : undefined;
  }

  async list(accountId: string): Promise<PurgeJob[]> {
    const rows = await this.store.read((x) =>
      x.all<JobRow>(`SELECT ${COLUMNS} FROM purge_jobs WHERE account_id = $1 ORDER BY requested_at DESC`, [
        accountId.toLowerCase(),
      ]),
    );
    return rows.map(jobOf);
  }

  /** Running jobs with their fragments, oldest first. */
  async running(): Promise<(PurgeJob & { fragment: Uint8Array })[]> {
    const rows = await this.store.read((x) =>
      x.all<JobRow & { fragment: string }>(
        `SELECT ${COLUMNS}, fragment FROM purge_jobs WHERE state = 'running' ORDER BY requested_at`,
      ),
    );
    return rows.map((r) => ({ ...jobOf(r), fragment: Buffer.from(r.fragment, 'base64') }));
  }

  /** Records one worker's step; the job succeeds once every worker finished. */
  async recordStep(jobId: string, progress: PurgeWorkerProgress): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await tx.one<JobRow>(`SELECT ${COLUMNS} FROM purge_jobs WHERE job_id = $1`, [jobId]);
      if (!row || row.state !== 'running') return;
      const job = jobOf(row);
      const workers = job.workers.map((w) =>
        w.worker === progress.worker
          ? {
              ...progress,
              // Totals add up over steps; a restarted worker re-examines, which only adds to examined.
              rowsExamined: w.rowsExamined + progress.rowsExamined,
              rowsRemoved: w.rowsRemoved + progress.rowsRemoved,
            }
          : w,
      );
      const done = workers.every((w) => w.finished);
      await tx.run('UPDATE purge_jobs SET workers = $1, state = $2, finished_at = $3 WHERE job_id = $4', [
        JSON.stringify(workers),
        done ? 'succeeded' : 'running',
        done ? new Date().toISOString() : null,
        jobId,
      ]);
    });
  }

  /** Notes a failed step of a worker (the runner retries). */
  async recordError(jobId: string, worker: string, message: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const row = await tx.one<JobRow>(`SELECT ${COLUMNS} FROM purge_jobs WHERE job_id = $1`, [jobId]);
      if (!row || row.state !== 'running') return;
      const workers = jobOf(row).workers.map((w) => (w.worker === worker ? { ...w, lastError: message.slice(0, 500) } : w));
      await tx.run('UPDATE purge_jobs SET workers = $1 WHERE job_id = $2', [JSON.stringify(workers), jobId]);
    });
  }

  /** Ends a job that cannot succeed (its fragment is refused by every worker, for example). */
  async fail(jobId: string, message: string): Promise<void> {
    await this.store.transaction((tx: SqlExecutor) =>
      tx.run("UPDATE purge_jobs SET state = 'failed', error = $1, finished_at = $2 WHERE job_id = $3 AND state = 'running'", [
        message.slice(0, 1000),
        new Date().toISOString(),
        jobId,
      ]),
    );
  }
}
