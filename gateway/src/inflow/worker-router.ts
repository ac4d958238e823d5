import { createHash } from 'node:crypto';
import {
  type ChannelPool,
  type Coordinator,
  errorFields,
  type Logger,
  StrataError,
  type Unsubscribe,
  type WorkerRegistration,
} from '@strata/common';
import { type AppendRequest, type AppendResponse, IngestServiceService } from '@strata/proto/ingest/v1/ingest';

/** How long one Append may take before the gateway gives up on it. */
const APPEND_TIMEOUT_MS = 120_000;

/**
 * Sends inflow batches to writable workers found through the coordinator's worker registry.
 *
 * - Without an idempotency key, requests go round-robin over the writable workers, so a schema's
 *   data spreads over all of them.
 * - With a key, the worker is chosen by rendezvous hashing of the key over the writable workers,
 *   so a retry of the same request reaches the worker that stored it and is recognised there (as
 *   long as the set of writable workers is unchanged).
 * - A worker that refuses (insufficient storage, unreachable, shutting down) is skipped and the next
 *   candidate is tried. Other failures are answered to the client as they are. A connection lost
 *   after the worker committed cannot be told from one lost before: that batch may then be stored
 *   twice (on two workers) even with an idempotency key; clients see no error in that case only
 *   if the second worker succeeds.
 * - With no writable worker: 507 when workers exist but all are short of space, 503 when none is
 *   registered; both with Retry-After, and nothing was written.
 */
export class WorkerRouter {
  private workers: WorkerRegistration[] = [];
  private unsubscribe: Unsubscribe | undefined;
  private next = 0;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.unsubscribe ??= this.coordinator.watchWorkers((workers) => {
      this.workers = workers;
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Writable worker endpoints in the order they are tried. */
  candidates(idempotencyKey?: string): string[] {
    const writable = this.workers.filter((w) => w.writable).map((w) => w.endpoint);
    if (writable.length <= 1) return writable;
    if (idempotencyKey) {
      const score = (endpoint: string) =>
        createHash('sha256').update(idempotencyKey).update('\0').update(endpoint).digest().readUInt32BE(0);
      return writable
        .map((e) => ({ e, s: score(e) }))
        .sort((a, b) => b.s - a.s || (a.e < b.e ? -1 : 1))
        .map((x) => x.e);
    }
    const start = this.next++ % writable.length;
    return [...writable.slice(start), ...writable.slice(0, start)];
  }

  async append(request: AppendRequest): Promise<AppendResponse> {
    if (this.workers.length === 0) this.workers = await this.coordinator.listWorkers();
    const candidates = this.candidates(request.idempotencyKey || undefined);
    let lastRefusal: StrataError | undefined;
    for (const endpoint of candidates) {
      try {
        return await this.channels.client(IngestServiceService, endpoint).append(request, { timeoutMs: APPEND_TIMEOUT_MS });
      } catch (err) {
        // Both are refusals before anything was written (no space; unreachable or shutting down).
        if (err instanceof StrataError && (err.kind === 'insufficient_storage' || err.kind === 'unavailable')) {
          this.log.warn({ worker: endpoint, ...errorFields(err) }, 'worker refused an inflow batch; trying the next one');
          lastRefusal = err;
          continue;
        }
        throw err;
      }
    }
    if (candidates.length > 0 && lastRefusal?.kind === 'unavailable')
      throw new StrataError('unavailable', 'No worker could be reached to store inflow; nothing was stored.', {
        retryAfterSeconds: 5,
      });
    if (this.workers.length === 0 && candidates.length === 0)
      throw new StrataError('unavailable', 'No worker is available to store inflow; nothing was stored.', {
        retryAfterSeconds: 5,
      });
    throw new StrataError(
      'insufficient_storage',
      'No worker can accept writes: every worker is below its minimum free space; nothing was stored.',
      { retryAfterSeconds: 30 },
    );
  }
}
