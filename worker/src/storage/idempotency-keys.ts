/**
 * Idempotency bookkeeping of appends: a request with a key is stored once per account and key.
 * The key is inserted in the request's own write transaction (`recordIdempotencyKey`), so a retry
 * finds it exactly when the data is there; `pruneIdempotencyKeys` keeps keys for a retention time
 * and at most a number of them, oldest pruned first. The table lives in hot.duckdb beside the
 * catalog (catalog.ts creates it with the other `strata_*` tables).
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
      const rows = (
        await conn.runAndReadAll('SELECT content_hash FROM strata_idempotency WHERE account_id = $1 AND idempotency_key = $2', [
          request.accountId,
          key,
        ])
      ).getRowObjectsJS() as { content_hash: string }[];
      storedHash = rows[0]?.content_hash;
    }
    if (storedHash === undefined) {
      inGroup.set(groupKey, hash);
      toWrite.push(i);
      continue;
    }
    if (storedHash !== '' && hash !== '' && storedHash !== hash)
      throw new StrataError('conflict', `Idempotency-Key ${key} was already used for a different request.`);
  }
  return toWrite;
}

/** Records a stored request's key; runs inside the transaction that stores its rows. */
export async function recordIdempotencyKey(conn: DuckDBConnection, request: KeyedRequest): Promise<void> {
  if (!request.idempotencyKey) return;
  await conn.run('INSERT INTO strata_idempotency VALUES ($1, $2, $3, make_timestamp($4::BIGINT))', [
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
