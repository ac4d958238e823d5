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
import { AppendRequest, type AppendResponse, IngestServiceService } from '@strata/proto/ingest/v1/ingest';

/**
 * IngestService as generated, except that a request's encoding is handed to gRPC as it is: the
 * generated serializer copies the megabyte message once more into a new Buffer
 * (`Buffer.from(Uint8Array)`), and each such Buffer brings V8's next full heap collection closer
 * (decision 0028). Same bytes on the wire.
 */
const INGEST_SERVICE = {
  ...IngestServiceService,
  append: {
    ...IngestServiceService.append,
    requestSerialize: (value: AppendRequest): Buffer => {
      const bytes = AppendRequest.encode(value).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  },
} as const;

/** How long one Append may take before the gateway gives up on it. */
const APPEND_TIMEOUT_MS = 120_000;

/**
 * Sends inflow batches to writable workers found through the coordinator's worker registry.
 *
 * - Without an idempotency key, requests go round-robin over the writable workers, so a schema's
 *   data spreads over all of them. A worker that refuses (insufficient storage, unreachable,
 *   shutting down) is skipped and the next one is tried; a connection lost after that worker
 *   committed cannot be told from one lost before, so such a batch may be stored twice (a batch
 *   without a key has no way to be recognised anyway: a client retry would do the same).
 * - With a key, the worker is chosen by rendezvous hashing of the key over the writable workers,
 *   so a retry of the same request reaches the worker that stored it and is recognised there. The
 *   batch goes to that worker only: when it cannot be reached, or its answer is lost, the answer is
 *   503 with Retry-After and the client's retry (same key) goes to the same worker once it is back.
 *   Failing over to another worker there (as this router once did) stored 2 of 8,342 keyed batches
 *   twice: the first worker had committed before its connection dropped. Only a refusal the worker
 *   itself sent (no space) moves a keyed batch on to the next worker. A worker gone longer than its
 *   lease leaves the registry and the key then ranks over the others (docs/operations.md says what
 *   that leaves).
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
    const keyed = request.idempotencyKey !== '';
    const candidates = this.candidates(request.idempotencyKey || undefined);
    let lastRefusal: StrataError | undefined;
    for (const endpoint of candidates) {
      try {
        return await this.channels.client(INGEST_SERVICE, endpoint).append(request, { timeoutMs: APPEND_TIMEOUT_MS });
      } catch (err) {
        if (!(err instanceof StrataError)) throw err;
        if (keyed && err.kind !== 'insufficient_storage') {
          if (err.kind !== 'unavailable' && err.kind !== 'timeout') throw err;
          this.log.warn({ worker: endpoint, ...errorFields(err) }, 'the worker of a keyed inflow batch did not answer');
          throw new StrataError(
            'unavailable',
            'The worker for this Idempotency-Key did not answer; the batch may or may not be stored. Retry with the same Idempotency-Key: it is stored once.',
            { retryAfterSeconds: 2 },
          );
        }
        // Both are refusals before anything was written (no space; unreachable or shutting down).
        if (err.kind === 'insufficient_storage' || err.kind === 'unavailable') {
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
