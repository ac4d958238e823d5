import {
  type ChannelPool,
  type Coordinator,
  errorFields,
  type KeyRankingMember,
  type Logger,
  StrataError,
  type WorkerRegistration,
} from '@strata/common';
import { type AppendRequest, IngestServiceService } from '@strata/proto/ingest/v1/ingest';
import { sameWorker } from './key-ranking.js';

/** How long a previous owner may take to answer FenceKey. */
const FENCE_TIMEOUT_MS = 10_000;

export interface PreviousOwnerCheck {
  request: AppendRequest;
  /** Workers other than the owner the key ranked first in a recorded set (key-ranking.ts). */
  previous: KeyRankingMember[];
  /** The revision of the history `previous` was computed from. */
  revision: number;
  /** The registered workers (any state: a draining or full worker still holds its keys). */
  workers: WorkerRegistration[];
  coordinator: Coordinator;
  channels: ChannelPool;
  log: Logger;
}

/**
 * Asks every previous owner of a keyed batch's key whether it stored the batch, fencing the key
 * there when it did not (FenceKey; docs/decisions/0029-keyed-batches-across-owners.md). Resolves
 * `true` when one of them holds it (the batch is a duplicate), `false` when none does and the
 * batch may be stored by its owner now. Throws `unavailable` (503, nothing stored) when a previous
 * owner that may hold it cannot answer: it is registered and fails, or it is not registered but
 * holds data of the account (a placement) and was not written off. A previous owner without a
 * placement for the account never stored anything of it and is skipped.
 */
export async function storedAtPreviousOwner(check: PreviousOwnerCheck): Promise<boolean> {
  const { request, previous, workers } = check;
  if (previous.length === 0) return false;
  let unregistered: KeyRankingMember[] = [];
  const answers = await Promise.allSettled(
    previous.map(async (member) => {
      const registration = workers.find((w) => sameWorker(member, { endpoint: w.endpoint, workerId: w.workerId ?? '' }));
      if (!registration) {
        unregistered.push(member);
        return false;
      }
      try {
        const res = await check.channels.client(IngestServiceService, registration.endpoint).fenceKey(
          {
            accountId: request.accountId,
            idempotencyKey: request.idempotencyKey,
            contentHash: request.contentHash,
            keyViewRevision: check.revision,
          },
          { timeoutMs: FENCE_TIMEOUT_MS },
        );
        return res.stored;
      } catch (err) {
        if (err instanceof StrataError && (err.kind === 'unavailable' || err.kind === 'timeout')) {
          check.log.warn(
            { worker: registration.endpoint, ...errorFields(err) },
            'a worker that may hold an Idempotency-Key did not answer; refusing the batch for now',
          );
          throw cannotCheck(member);
        }
        throw err;
      }
    }),
  );
  if (answers.some((a) => a.status === 'fulfilled' && a.value)) return true;
  const failed = answers.find((a) => a.status === 'rejected');
  if (failed) throw failed.reason;
  unregistered = await holdersOf(check, unregistered);
  if (unregistered.length > 0) {
    check.log.warn(
      { workers: unregistered.map((m) => m.workerId || m.endpoint), accountId: request.accountId },
      'a worker that may hold an Idempotency-Key is down; refusing the batch until it returns or is written off',
    );
    throw cannotCheck(unregistered[0]!);
  }
  return false;
}

/** The members that hold data of the request's account and were not written off. */
async function holdersOf(check: PreviousOwnerCheck, members: KeyRankingMember[]): Promise<KeyRankingMember[]> {
  if (members.length === 0) return [];
  let placements: string[];
  let lost: string[];
  try {
    [placements, lost] = await Promise.all([
      check.coordinator.listPlacements(check.request.accountId).then((ps) => ps.map((p) => p.workerId)),
      check.coordinator.listLost(),
    ]);
  } catch (err) {
    throw new StrataError(
      'unavailable',
      'The workers that may hold this Idempotency-Key cannot be looked up; nothing was stored. Retry with the same Idempotency-Key.',
      { retryAfterSeconds: 2, cause: err },
    );
  }
  // A member without an id (a worker from before worker ids) cannot be matched: it may hold the key.
  return members.filter((m) => m.workerId === '' || (placements.includes(m.workerId) && !lost.includes(m.workerId)));
}

function cannotCheck(member: KeyRankingMember): StrataError {
  return new StrataError(
    'unavailable',
    `Worker ${member.workerId || member.endpoint}, which may already hold this Idempotency-Key, cannot be reached; nothing was stored. Retry with the same Idempotency-Key: it is stored once.`,
    { retryAfterSeconds: 5 },
  );
}
