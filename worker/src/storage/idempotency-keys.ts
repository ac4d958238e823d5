/**
 * Idempotency bookkeeping of appends: a request with a key is stored once per account and key.
 * The key is inserted in the request's own write transaction (`recordIdempotencyKey`), so a retry
 * finds it exactly when the data is there; `pruneIdempotencyKeys` keeps keys for a retention time
 * and at most a number of them, oldest pruned first. The table lives in hot.duckdb beside the
 * catalog (catalog.ts creates it with the other `strata_*` tables).
 *
 * A key can also be *fenced* here (`fenceKey`): a gateway about to store it on another worker
 * (the key ranks elsewhere now) asked this worker, which may have been its owner before, and it
 * was not stored. The row then holds `fenced:<revision>` instead of a content hash, and an append
 * of the key routed by a key-ranking history older than that revision is refused (it was sent
 * without knowing the key moved) — docs/decisions/0029-keyed-batches-across-owners.md.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { StrataError } from '@strata/common';

export const IDEMPOTENCY_DDL = `CREATE TABLE IF NOT EXISTS strata_idempotency (
     account_id VARCHAR NOT NULL,
     idempotency_key VARCHAR NOT NULL,
     content_hash VARCHAR NOT NULL,
     created_at TIMESTAMP NOT NULL,
     PRIMARY KEY (account_id, idempotency_key))`;

/** What idempotency needs of a request. */
export interface KeyedRequest {
  accountId: string;
  idempotencyKey?: string;
  /** Hash of the request's content: a key reused for different content is a conflict. */
  contentHash?: string;
  /** The etcd revision of the key-ranking history the gateway routed by (0 or absent: none). */
  keyViewRevision?: number;
}

/** The content_hash of a fenced key: `fenced:<revision>` (a real hash is hex or empty). */
const FENCED_PREFIX = 'fenced:';

function fencedRevision(storedHash: string): number | undefined {
  return storedHash.startsWith(FENCED_PREFIX) ? Number(storedHash.slice(FENCED_PREFIX.length)) : undefined;
}

async function storedHashOf(conn: DuckDBConnection, accountId: string, key: string): Promise<string | undefined> {
  const rows = (
    await conn.runAndReadAll('SELECT content_hash FROM strata_idempotency WHERE account_id = $1 AND idempotency_key = $2', [
      accountId,
      key,
    ])
  ).getRowObjectsJS() as { content_hash: string }[];
  return rows[0]?.content_hash;
}

function assertSameContent(key: string, storedHash: string, hash: string): void {
  if (storedHash !== '' && hash !== '' && storedHash !== hash)
    throw new StrataError('conflict', `Idempotency-Key ${key} was already used for a different request.`);
}

/**
 * The indexes of `requests` still to write: those without a key, or whose key is neither stored
 * nor repeated earlier in the group; the others are duplicates. A key stored with a different
 * content hash is refused (`conflict`). Only the hot writer inserts keys, so reading them outside
 * its write transaction is consistent.
 */
export async function requestsToWrite(conn: DuckDBConnection, requests: readonly KeyedRequest[]): Promise<number[]> {
  const toWrite: number[] = [];
  const inGroup = new Map<string, string>();
  for (const [i, request] of requests.entries()) {
    const key = request.idempotencyKey;
    if (!key) {
      toWrite.push(i);
      continue;
    }
    const hash = request.contentHash ?? '';
    const groupKey = `${request.accountId}\u0000${key}`;
    let storedHash = inGroup.get(groupKey);
    if (storedHash === undefined) {
      storedHash = await storedHashOf(conn, request.accountId, key);
      const fencedAt = storedHash === undefined ? undefined : fencedRevision(storedHash);
      if (fencedAt !== undefined) {
        // Routed by a history that already knew the key moved (and whose gateway asked the other
        // owners first): this worker is the key's owner again and stores it, replacing the fence.
        if ((request.keyViewRevision ?? 0) < fencedAt)
          throw new StrataError(
            'unavailable',
            `Idempotency-Key ${key} moved to another worker while this request was on its way; nothing was stored. Retry with the same Idempotency-Key.`,
            { retryAfterSeconds: 1 },
          );
        storedHash = undefined;
      }
    }
    if (storedHash === undefined) {
      inGroup.set(groupKey, hash);
      toWrite.push(i);
      continue;
    }
    assertSameContent(key, storedHash, hash);
  }
  return toWrite;
}

/**
 * Whether `request`'s key is stored here; when it is not, fences it at `keyViewRevision` (a higher
 * fence stays). Runs in the writer's order (HotWriter.fenceKey), so an append of the key that
 * committed before is seen, and one that commits after meets the fence. A stored key with a
 * different content hash is a `conflict`.
 */
export async function fenceKey(
  conn: DuckDBConnection,
  request: Required<Pick<KeyedRequest, 'accountId' | 'idempotencyKey' | 'keyViewRevision'>> & { contentHash: string },
): Promise<{ stored: boolean }> {
  const { accountId, idempotencyKey: key, contentHash, keyViewRevision } = request;
  const storedHash = await storedHashOf(conn, accountId, key);
  const fencedAt = storedHash === undefined ? undefined : fencedRevision(storedHash);
  if (storedHash !== undefined && fencedAt === undefined) {
    assertSameContent(key, storedHash, contentHash);
    return { stored: true };
  }
  if (fencedAt === undefined || fencedAt < keyViewRevision)
    await conn.run('INSERT OR REPLACE INTO strata_idempotency VALUES ($1, $2, $3, make_timestamp($4::BIGINT))', [
      accountId,
      key,
      `${FENCED_PREFIX}${keyViewRevision}`,
      BigInt(Date.now()) * 1000n,
    ]);
  return { stored: false };
}

/** Records a stored request's key (replacing a fence); runs inside the transaction that stores its rows. */
export async function recordIdempotencyKey(conn: DuckDBConnection, request: KeyedRequest): Promise<void> {
  if (!request.idempotencyKey) return;
  await conn.run('INSERT OR REPLACE INTO strata_idempotency VALUES ($1, $2, $3, make_timestamp($4::BIGINT))', [
    request.accountId,
    request.idempotencyKey,
    request.contentHash ?? '',
    BigInt(Date.now()) * 1000n,
  ]);
}

/** Deletes keys older than `retentionMs`, then all but the newest `maxKeys`. */
export async function pruneIdempotencyKeys(conn: DuckDBConnection, retentionMs: number, maxKeys: number): Promise<void> {
  const cutoffUs = BigInt(Date.now() - retentionMs) * 1000n;
  await conn.run('DELETE FROM strata_idempotency WHERE created_at < make_timestamp($1::BIGINT)', [cutoffUs]);
  await conn.run(
    `DELETE FROM strata_idempotency WHERE created_at <= (
       SELECT created_at FROM strata_idempotency ORDER BY created_at DESC LIMIT 1 OFFSET ${Number(maxKeys)})`,
  );
}
