/**
 * Compaction planning: a pure function from a worker's segment catalog to compaction jobs.
 *
 * Per account and schema, segments smaller than the account's
 * `Service.Storage.Compaction.MaxFileSize` are "small". They are taken oldest first (earliest
 * entry time, then creation time) and added to a job until the job's total reaches MaxFileSize;
 * then the next job starts. A job that reached the size needs at least two segments. The last,
 * unfilled job is planned only when it gathers at least `minSegmentsPerPartialJob` segments, so a
 * merged file that is still small is not rewritten every cycle for each new small segment
 * (bounded write amplification).
 */

export interface PlannerSegment {
  segmentId: string;
  accountId: string;
  schema: string;
  byteSize: number;
  minTimestampMs: number;
  createdAtMs: number;
}

export interface CompactionJob {
  accountId: string;
  schema: string;
  /** Oldest first. */
  segmentIds: string[];
  totalBytes: number;
}

export interface PlanOptions {
  /** MaxFileSize in bytes of an account. */
  maxFileSize: (accountId: string) => number;
  /** Segments needed for a job that did not reach MaxFileSize. Default 8. */
  minSegmentsPerPartialJob?: number;
}

const DEFAULT_MIN_SEGMENTS_PER_PARTIAL_JOB = 8;

function oldestFirst(a: PlannerSegment, b: PlannerSegment): number {
  return a.minTimestampMs - b.minTimestampMs || a.createdAtMs - b.createdAtMs || (a.segmentId < b.segmentId ? -1 : 1);
}

export function planCompaction(segments: readonly PlannerSegment[], options: PlanOptions): CompactionJob[] {
  const minPartial = Math.max(2, options.minSegmentsPerPartialJob ?? DEFAULT_MIN_SEGMENTS_PER_PARTIAL_JOB);
  const groups = new Map<string, PlannerSegment[]>();
  for (const s of segments) {
    const key = `${s.accountId}\u0000${s.schema}`;
    const list = groups.get(key) ?? [];
    groups.set(key, list);
    list.push(s);
  }
  const jobs: CompactionJob[] = [];
  for (const list of groups.values()) {
    const { accountId, schema } = list[0]!;
    const maxFileSize = options.maxFileSize(accountId);
    if (!(maxFileSize > 0)) continue;
    const small = list.filter((s) => s.byteSize < maxFileSize).sort(oldestFirst);
    let current: PlannerSegment[] = [];
    let total = 0;
    for (const s of small) {
      current.push(s);
      total += s.byteSize;
      if (total >= maxFileSize) {
        if (current.length >= 2) jobs.push({ accountId, schema, segmentIds: current.map((c) => c.segmentId), totalBytes: total });
        current = [];
        total = 0;
      }
    }
    if (current.length >= minPartial)
      jobs.push({ accountId, schema, segmentIds: current.map((c) => c.segmentId), totalBytes: total });
  }
  return jobs;
}
