import { unlink } from 'node:fs/promises';
import type { DuckDBConnection } from '@duckdb/node-api';
import { detachSegmentFile } from './segment-format.js';

/**
 * Removes a segment file that never became listed (a seal, rewrite or adoption that failed
 * before its commit): detached first when it was attached, and never failing the caller, who is
 * already handling an error; start-up deletes whatever is left unlisted.
 */
export async function discardSegmentFile(conn: DuckDBConnection, file: string): Promise<void> {
  await detachSegmentFile(conn, file).catch(() => undefined);
  await unlink(file).catch(() => undefined);
  // A 'duckdb' file being written may have a write-ahead log beside it.
  await unlink(`${file}.wal`).catch(() => undefined);
}
