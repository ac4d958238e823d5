import { createHash } from 'node:crypto';
import {
  type Coordinator,
  type KeyRankingHistory,
  type KeyRankingMember,
  keyRankingId,
  StrataError,
  sortMembers,
} from '@strata/common';

/**
 * How long a set of workers stays in the key-ranking history after a gateway last recorded it:
 * workers keep idempotency keys 24 hours (StorageTuning.idempotencyRetentionMs), and a gateway
 * re-records the set it routes by every hour, so a set routed by until T is known until T + 24 h.
 */
export const KEY_RANKING_TTL_SECONDS = 25 * 3600;
const RERECORD_MS = 3600 * 1000;
/** How stale the history a keyed batch is routed by may be (the worker's fence covers the rest). */
const REFRESH_MS = 1000;

/** The member a key ranks first (rendezvous hashing over the endpoints; ties by endpoint). */
export function firstForKey<T extends { endpoint: string }>(key: string, members: readonly T[]): T | undefined {
  let best: { m: T; s: number } | undefined;
  for (const m of members) {
    const s = keyScore(key, m.endpoint);
    if (!best || s > best.s || (s === best.s && m.endpoint < best.m.endpoint)) best = { m, s };
  }
  return best?.m;
}

function keyScore(key: string, endpoint: string): number {
  return createHash('sha256').update(key).update('\0').update(endpoint).digest().readUInt32BE(0);
}

/** Whether two members are the same worker: by id when both have one, else by endpoint. */
export function sameWorker(a: KeyRankingMember, b: KeyRankingMember): boolean {
  return a.workerId !== '' && b.workerId !== '' ? a.workerId === b.workerId : a.endpoint === b.endpoint;
}

/**
 * Every worker other than `owner` that ranked first for `key` in a recorded set: where an earlier
 * attempt of a keyed batch may have been stored (docs/decisions/0029-keyed-batches-across-owners.md).
 */
export function previousOwners(key: string, history: KeyRankingHistory, owner: KeyRankingMember): KeyRankingMember[] {
  const out: KeyRankingMember[] = [];
  for (const ranking of history.rankings) {
    const first = firstForKey(key, ranking.workers);
    if (first && !sameWorker(first, owner) && !out.some((o) => sameWorker(o, first))) out.push(first);
  }
  return out;
}

/**
 * The gateway's view of the key-ranking history: records each set of workers before the first keyed
 * batch is routed by it (and again every hour while it is routed by), and reads the history at
 * most once a second, at once after recording a set. Concurrent callers share one write and one read.
 * While etcd cannot be read, the last history that holds the current set is used; a set that is
 * not recorded yet cannot be routed by (503).
 */
export class KeyRankingCache {
  private readonly recordedAt = new Map<string, number>();
  private readonly recording = new Map<string, Promise<void>>();
  private cached: { history: KeyRankingHistory; readAt: number } | undefined;
  private reading: Promise<KeyRankingHistory> | undefined;

  constructor(private readonly coordinator: Coordinator) {}

  /** The history, including `members` (recorded first when needed). */
  async historyFor(members: readonly KeyRankingMember[]): Promise<KeyRankingHistory> {
    const id = keyRankingId(members);
    const at = this.recordedAt.get(id);
    if (at === undefined) await this.record(id, members);
    // A renewal that fails is tried again by the next batch: the record itself lives for a day more.
    else if (Date.now() - at > RERECORD_MS) await this.record(id, members).catch(() => undefined);
    const cached = this.cached;
    const usable = cached?.history.rankings.some((r) => r.id === id) ? cached : undefined;
    if (usable && Date.now() - usable.readAt <= REFRESH_MS) return usable.history;
    // A read already under way may have started before the record; the next one cannot have.
    for (let attempt = 0; attempt < 3; attempt++) {
      let history: KeyRankingHistory;
      try {
        history = await this.read();
      } catch (err) {
        // etcd unreachable: the last history that holds this set still names every previous owner
        // (no set can be recorded without etcd, and the workers' fences cover attempts under way).
        if (usable) return usable.history;
        throw err;
      }
      if (history.rankings.some((r) => r.id === id)) return history;
      this.recordedAt.delete(id);
      await this.record(id, members);
    }
    throw new StrataError(
      'unavailable',
      'The set of workers for Idempotency-Keys is not in the key-ranking history; nothing was stored. Retry with the same Idempotency-Key.',
      { retryAfterSeconds: 2 },
    );
  }

  private record(id: string, members: readonly KeyRankingMember[]): Promise<void> {
    let pending = this.recording.get(id);
    if (!pending) {
      const started = Date.now();
      pending = this.coordinator
        .recordKeyRanking({ id, workers: sortMembers(members) }, KEY_RANKING_TTL_SECONDS)
        .then(() => {
          this.recordedAt.set(id, started);
          // Read again: the history must hold this set at a revision after its record.
          this.cached = undefined;
        })
        .catch((err) => {
          throw new StrataError(
            'unavailable',
            'The set of workers for Idempotency-Keys cannot be recorded; nothing was stored. Retry with the same Idempotency-Key.',
            { retryAfterSeconds: 2, cause: err },
          );
        })
        .finally(() => this.recording.delete(id));
      this.recording.set(id, pending);
    }
    return pending;
  }

  private read(): Promise<KeyRankingHistory> {
    if (!this.reading) {
      const started = Date.now();
      this.reading = this.coordinator
        .listKeyRankings()
        .then((history) => {
          this.cached = { history, readAt: started };
          return history;
        })
        .catch((err) => {
          throw new StrataError(
            'unavailable',
            'The workers an Idempotency-Key may have been stored on cannot be read; nothing was stored. Retry with the same Idempotency-Key.',
            { retryAfterSeconds: 2, cause: err },
          );
        })
        .finally(() => {
          this.reading = undefined;
        });
    }
    return this.reading;
  }
}
