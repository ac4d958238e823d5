import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { quoteIdentifier, quoteLiteral } from '@strata/common';
import { RelationalStore } from '../relational-store.js';
import { type ReplicaPosition, readPosition } from './replica-position.js';

/**
 * A whole copy of the store at one log position, as bytes (a gzipped DuckDB file). Taken with
 * `COPY FROM DATABASE` into a scratch file inside one read transaction: DuckDB copies that
 * transaction's snapshot (tried: writes committed during the copy are not in it), and the
 * position row read in the same transaction says which entry it stands at. Writes go on meanwhile,
 * and the file is compact (a logical copy, no free blocks).
 */
export async function takeSnapshot(store: RelationalStore): Promise<{ position: ReplicaPosition; data: Buffer }> {
  const scratch = path.join(path.dirname(store.file), `snapshot-${randomUUID()}.duckdb`);
  const alias = `snapshot_${randomUUID().replaceAll('-', '')}`;
  try {
    const position = await store.unlogged(async (x) => {
      await x.run('BEGIN TRANSACTION');
      try {
        const db = await x.one<{ name: string }>('SELECT current_database() AS name');
        const at = await readPosition(x);
        await x.run(`ATTACH ${quoteLiteral(scratch)} AS ${alias}`);
        await x.run(`COPY FROM DATABASE ${quoteIdentifier(db!.name)} TO ${alias}`);
        await x.run('COMMIT');
        return at;
      } catch (err) {
        await x.run('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        await x.run(`DETACH DATABASE IF EXISTS ${alias}`).catch(() => undefined);
      }
    });
    return { position, data: gzipSync(readFileSync(scratch)) };
  } finally {
    rmSync(scratch, { force: true });
    rmSync(`${scratch}.wal`, { force: true });
  }
}

/**
 * Replaces the store file of `dir` with a snapshot's bytes (the store must be closed): written
 * next to it, made durable, then renamed over it, so a crash leaves the old file or the new one.
 * A file that followed another log (or none) is kept once as `strata.duckdb.replaced` for operators.
 */
export function restoreSnapshot(dir: string, data: Buffer, keepReplaced: boolean): void {
  const file = RelationalStore.fileIn(dir);
  const incoming = `${file}.incoming`;
  writeFileSync(incoming, gunzipSync(data));
  const fd = openSync(incoming, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  if (keepReplaced && existsSync(file)) renameSync(file, `${file}.replaced`);
  // A write-ahead log belongs to the file it was written for.
  rmSync(`${file}.wal`, { force: true });
  renameSync(incoming, file);
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}
