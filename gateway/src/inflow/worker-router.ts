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
import { firstForKey, KeyRankingCache, previousOwners } from './key-ranking.js';
import type { OutgoingAppend } from './outgoing-append.js';
import { storedAtPreviousOwner } from './previous-owners.js';

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

/**
 * The same method, for an unkeyed batch the route encoded once (outgoing-append.ts): its bytes are
 * the request as it goes on the wire, to each worker tried.
 */
const ENCODED_INGEST_SERVICE = {
  append: {
    ...IngestServiceService.append,
    requestSerialize: (encoded: Buffer): Buffer => encoded,
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
 * - With a key, the owner is the writable worker the key ranks first (key-ranking.ts), and the
 *   batch goes to it only: when it cannot be reached, or its answer is lost, the answer is 503
 *   with Retry-After and the client's retry (same key) meets the stored key there. Failing over to
 *   another worker (as this router once did) stored 2 of 8,342 keyed batches twice. When the set
 *   of writable workers changes (a worker gone past its lease, joined, draining, full), a key may
 *   rank to a new owner while an earlier attempt is stored on its previous one: every set routed
 *   by is recorded, and before storing, the previous owners of the key are asked and fenced
 *   (previous-owners.ts; a previous owner that is down answers 503 until it returns or is written
 *   off). docs/decisions/0029-keyed-batches-across-owners.md. Only a refusal the owner itself
 *   sent (no space) moves a keyed batch on: to the owner of the set without it, recorded likewise.
 * - With no writable worker: 507 when workers exist but all are short of space, 503 when none is
 *   registered; both with Retry-After, and nothing was written.
 */
export class WorkerRouter {
  private workers: WorkerRegistration[] = [];
  private unsubscribe: Unsubscribe | undefined;
  private next = 0;
  private readonly keyRankings: KeyRankingCache;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly log: Logger,
  ) {
    this.keyRankings = new KeyRankingCache(coordinator);
  }

  start(): void {
    this.unsubscribe ??= this.coordinator.watchWorkers((workers) => {
      this.workers = workers;
    });
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** Writable worker endpoints in the order an unkeyed batch tries them (round-robin). */
  private candidates(): string[] {
    const writable = this.workers.filter((w) => w.writable).map((w) => w.endpoint);
    if (writable.length <= 1) return writable;
    const start = this.next++ % writable.length;
    return [...writable.slice(start), ...writable.slice(0, start)];
  }

  /** Stores a batch (`keyViewRevision` is set here, for keyed batches). */
  async append(batch: OutgoingAppend): Promise<AppendResponse> {
    if (this.workers.length === 0) this.workers = await this.coordinator.listWorkers();
    if (batch.keyed) return this.appendKeyed(batch.request);
    const candidates = this.candidates();
    let lastRefusal: StrataError | undefined;
    for (const endpoint of candidates) {
      try {
        return await this.channels
          .client(ENCODED_INGEST_SERVICE, endpoint)
          .append(batch.encoded, { timeoutMs: APPEND_TIMEOUT_MS });
      } catch (err) {
        if (!(err instanceof StrataError)) throw err;
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
    throw this.noWritableWorker();
  }

  /** A keyed batch: to its owner only, after its previous owners (if any) said they do not hold it. */
  private async appendKeyed(request: AppendRequest): Promise<AppendResponse> {
    const key = request.idempotencyKey;
    // Workers that refused this batch for lack of space: the key is routed over the others.
    const full = new Set<string>();
    for (let round = 0; round <= this.workers.length; round++) {
      const workers = this.workers;
      const members = workers
        .filter((w) => w.writable && !full.has(w.endpoint))
        .map((w) => ({ endpoint: w.endpoint, workerId: w.workerId ?? '' }));
      const owner = firstForKey(key, members);
      if (!owner) break;
      const history = await this.keyRankings.historyFor(members);
      const previous = previousOwners(key, history, owner);
      const stored = await storedAtPreviousOwner({
        request,
        previous,
        revision: history.revision,
        workers,
        coordinator: this.coordinator,
        channels: this.channels,
        log: this.log,
      });
      if (stored) return { rowsStored: 0, duplicate: true };
      try {
        return await this.send(owner.endpoint, { ...request, keyViewRevision: history.revision });
      } catch (err) {
        if (!(err instanceof StrataError)) throw err;
        if (err.kind === 'insufficient_storage') {
          this.log.warn(
            { worker: owner.endpoint, ...errorFields(err) },
            'the owner of a keyed batch has no space; ranking it over the others',
          );
          full.add(owner.endpoint);
          continue;
        }
        if (err.kind !== 'unavailable' && err.kind !== 'timeout') throw err;
        this.log.warn({ worker: owner.endpoint, ...errorFields(err) }, 'the worker of a keyed inflow batch did not answer');
        throw new StrataError(
          'unavailable',
          'The worker for this Idempotency-Key did not answer; the batch may or may not be stored. Retry with the same Idempotency-Key: it is stored once.',
          { retryAfterSeconds: 2 },
        );
      }
    }
    throw this.noWritableWorker();
  }

  private send(endpoint: string, request: AppendRequest): Promise<AppendResponse> {
    return this.channels.client(INGEST_SERVICE, endpoint).append(request, { timeoutMs: APPEND_TIMEOUT_MS });
  }

  private noWritableWorker(): StrataError {
    if (this.workers.length === 0)
      return new StrataError('unavailable', 'No worker is available to store inflow; nothing was stored.', {
        retryAfterSeconds: 5,
      });
    return new StrataError(
      'insufficient_storage',
      'No worker can accept writes: every worker is below its minimum free space; nothing was stored.',
      { retryAfterSeconds: 30 },
    );
  }
}
