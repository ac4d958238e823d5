import { createHash } from 'node:crypto';

/**
 * One set of workers that keyed inflow was routed over: a key goes to the member that ranks first
 * for it (rendezvous hashing over the endpoints). Recorded by a gateway before it routes the first
 * keyed batch by that set and kept as long as workers keep idempotency keys, so a later gateway
 * knows every worker a key may have been stored on (docs/decisions/0029-keyed-batches-across-owners.md).
 */
export interface KeyRanking {
  /** `keyRankingId(workers)`: the same set of workers always has the same id. */
  id: string;
  /** The members, by endpoint. */
  workers: KeyRankingMember[];
  /** ISO time the record was (last) written. */
  recordedAt: string;
}

/** A worker as a key ranks it: the endpoint is what is hashed, the id says whose data it is. */
export interface KeyRankingMember {
  endpoint: string;
  /** `WorkerRegistration.workerId`; empty for a worker that published none. */
  workerId: string;
}

/** The key rankings recorded, and the etcd revision they were read at (0 in one process). */
export interface KeyRankingHistory {
  rankings: KeyRanking[];
  revision: number;
}

/** Members sorted by endpoint, then id. */
export function sortMembers(workers: readonly KeyRankingMember[]): KeyRankingMember[] {
  return [...workers].sort((a, b) =>
    a.endpoint === b.endpoint ? a.workerId.localeCompare(b.workerId) : a.endpoint < b.endpoint ? -1 : 1,
  );
}

/** The identity of a set of workers: sha256 over its sorted members. */
export function keyRankingId(workers: readonly KeyRankingMember[]): string {
  const hash = createHash('sha256');
  for (const w of sortMembers(workers)) hash.update(w.endpoint).update('\0').update(w.workerId).update('\n');
  return hash.digest('hex').slice(0, 32);
}
