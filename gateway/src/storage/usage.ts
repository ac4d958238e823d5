/**
 * What an account stores, per worker and schema, from every worker that may hold its data
 * (WorkerStorageService.DescribeStorage). Read by the usage route and the `schema.usage` table.
 */
import type { ChannelPool, Coordinator } from '@strata/common';
import { type SchemaUsage, WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { QueryCoverage } from '../query/query-coverage.js';

const WORKER_CALL_MS = 10_000;

export interface WorkerUsage {
  worker: string;
  freeBytes: number;
  schemas: SchemaUsage[];
}

/**
 * Every registered worker's usage of an account. A worker that does not answer makes the answer
 * incomplete: it is listed in `unreachable`, never silently left out of the totals.
 */
export async function usageByWorker(
  coordinator: Coordinator,
  channels: ChannelPool,
  accountId: string,
): Promise<{ workers: WorkerUsage[]; unreachable: string[] }> {
  // Holders of the account's data that are not registered are missing from the figures, and said so.
  const coverage = await QueryCoverage.resolve(coordinator, accountId, true);
  const registered = coverage.workers;
  const answers = await Promise.allSettled(
    registered.map((w) =>
      channels.client(WorkerStorageServiceService, w.endpoint).describeStorage({ accountId }, { timeoutMs: WORKER_CALL_MS }),
    ),
  );
  const workers: WorkerUsage[] = [];
  const unreachable: string[] = coverage.missing.map((m) => m.endpoint);
  answers.forEach((a, i) => {
    const worker = registered[i]!.endpoint;
    if (a.status === 'fulfilled') workers.push({ worker, freeBytes: Number(a.value.freeBytes), schemas: a.value.schemas });
    else unreachable.push(worker);
  });
  return { workers, unreachable };
}

const iso = (us: number) => (us > 0 ? new Date(Math.floor(us / 1000)).toISOString() : null);

/** One schema's figures, as the API shows them (timestamps ISO 8601 UTC, null without rows). */
export function usageView(
  u: Pick<SchemaUsage, 'hotRows' | 'segmentRows' | 'segments' | 'segmentBytes' | 'minTimestampUs' | 'maxTimestampUs'>,
) {
  return {
    rows: Number(u.hotRows) + Number(u.segmentRows),
    hotRows: Number(u.hotRows),
    segments: Number(u.segments),
    bytes: Number(u.segmentBytes),
    oldest: iso(Number(u.minTimestampUs)),
    newest: iso(Number(u.maxTimestampUs)),
  };
}

/** Totals per schema over workers. */
export function totalsBySchema(workers: WorkerUsage[]): Map<string, ReturnType<typeof usageView>> {
  const sums = new Map<string, SchemaUsage>();
  for (const w of workers) {
    for (const s of w.schemas) {
      const t = sums.get(s.schema);
      if (!t) {
        sums.set(s.schema, { ...s });
        continue;
      }
      t.hotRows = Number(t.hotRows) + Number(s.hotRows);
      t.segmentRows = Number(t.segmentRows) + Number(s.segmentRows);
      t.segments = Number(t.segments) + Number(s.segments);
      t.segmentBytes = Number(t.segmentBytes) + Number(s.segmentBytes);
      const lo = [Number(t.minTimestampUs), Number(s.minTimestampUs)].filter((v) => v > 0);
      t.minTimestampUs = lo.length ? Math.min(...lo) : 0;
      t.maxTimestampUs = Math.max(Number(t.maxTimestampUs), Number(s.maxTimestampUs));
    }
  }
  return new Map([...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, usageView(v)]));
}
