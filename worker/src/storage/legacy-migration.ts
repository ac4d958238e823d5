/**
 * Moves a data directory of the layout before per-account storage (one `hot.duckdb` with every
 * account's hot tables and catalog, one `segments/` directory) into per-account directories
 * (storage-layout.ts, docs/decisions/0015-account-isolation-in-workers.md). Runs at start-up,
 * before any account store opens; a directory in the new layout is left alone.
 *
 * Crash-safe by construction: the old files are the source of truth and are not changed until
 * every account is complete.
 *  1. Per account: its directory is built as `accounts/<id>.migrating` (hot tables, catalog rows
 *     and idempotency keys copied through an ATTACH of its new file; segment files hard-linked,
 *     so the old ones stay in place), checked (row counts), made durable, then renamed to
 *     `accounts/<id>` in one step. A rerun skips accounts already renamed and rebuilds a
 *     half-built `.migrating` directory from scratch.
 *  2. When every account is in place, the old `hot.duckdb` is deleted: that is the commit point.
 *     Its write-ahead log, `segments/` and `tmp/` are then removed; a crash in between leaves only
 *     these, which the next start removes (no old database means nothing is left to migrate).
 */
import { copyFile, link, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { type Logger, quoteIdentifier, quoteLiteral } from '@strata/common';
import { CATALOG_DDL, hotTableName } from './catalog.js';
import { DUCKDB_TYPE } from './column-sql.js';
import { isAccountId, type StorageLayout } from './storage-layout.js';

/** Catalog name the old database is attached under in the migration's instance. */
const OLD = 'legacy';
/** Catalog name of the account file being built. */
const NEW = 'account';

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

async function fsyncPath(p: string): Promise<void> {
  const handle = await open(p, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function rows<T>(conn: DuckDBConnection, sql: string, params: string[] = []): Promise<T[]> {
  return (await conn.runAndReadAll(sql, params)).getRowObjectsJS() as T[];
}

/** Hard-links a segment file into the new directory (a copy where links are not possible), durably. */
async function linkSegment(from: string, to: string): Promise<void> {
  await mkdir(path.dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') await unlink(to);
    else if (code !== 'EXDEV' && code !== 'EPERM' && code !== 'ENOTSUP') throw err;
    await copyFile(from, to);
    await fsyncPath(to);
  }
}

/** Builds one account's new directory from the old database (attached as OLD) and the old segments. */
async function migrateAccount(conn: DuckDBConnection, layout: StorageLayout, accountId: string, log: Logger): Promise<void> {
  const work = layout.migratingAccount(accountId);
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const database = path.join(work, path.basename(layout.account(accountId).database));
  const tables = await rows<{ table_id: number }>(
    conn,
    `SELECT table_id FROM ${OLD}.strata_tables WHERE account_id = $1 ORDER BY table_id`,
    [accountId],
  );
  await conn.run(`ATTACH ${quoteLiteral(database)} AS ${NEW}`);
  let hotRows = 0;
  try {
    await conn.run(`USE ${NEW}`);
    for (const ddl of CATALOG_DDL) await conn.run(ddl);
    await conn.run(`USE ${OLD}`);
    await conn.run('BEGIN TRANSACTION');
    const ids = tables.map((t) => t.table_id);
    const inTables = `table_id IN (${ids.length ? ids.join(', ') : 'NULL'})`;
    for (const { table_id } of tables) {
      const hot = quoteIdentifier(hotTableName(table_id));
      const columns = await rows<{ name: string; type: keyof typeof DUCKDB_TYPE }>(
        conn,
        `SELECT name, type FROM ${OLD}.strata_columns WHERE table_id = ${table_id} ORDER BY position`,
      );
      // The same definitions the hot writer creates (column-sql.ts), in the same order.
      const defs = columns.map((c) => `${quoteIdentifier(c.name)} ${DUCKDB_TYPE[c.type]}`).join(', ');
      await conn.run(`CREATE TABLE ${NEW}.${hot} (${defs})`);
      const list = columns.map((c) => quoteIdentifier(c.name)).join(', ');
      const copied = (await conn.run(`INSERT INTO ${NEW}.${hot} (${list}) SELECT ${list} FROM ${OLD}.${hot}`)).rowsChanged;
      const [old] = await rows<{ n: bigint }>(conn, `SELECT count(*) AS n FROM ${OLD}.${hot}`);
      if (BigInt(copied) !== old!.n) throw new Error(`migration copied ${copied} of ${old!.n} hot rows of table ${table_id}`);
      hotRows += copied;
    }
    await conn.run(`INSERT INTO ${NEW}.strata_tables SELECT * FROM ${OLD}.strata_tables WHERE account_id = $1`, [accountId]);
    await conn.run(`INSERT INTO ${NEW}.strata_columns SELECT * FROM ${OLD}.strata_columns WHERE ${inTables}`);
    // By name: the new catalog has columns the old one lacks (their defaults fill them).
    await conn.run(`INSERT INTO ${NEW}.strata_segments BY NAME SELECT * FROM ${OLD}.strata_segments WHERE ${inTables}`);
    await conn.run(`INSERT INTO ${NEW}.strata_idempotency SELECT * FROM ${OLD}.strata_idempotency WHERE account_id = $1`, [
      accountId,
    ]);
    await conn.run('COMMIT');
    await conn.run(`CHECKPOINT ${NEW}`);
  } catch (err) {
    await conn.run('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await conn.run(`USE ${OLD}`).catch(() => undefined);
    await conn.run(`DETACH ${NEW}`);
  }
  const segments = await rows<{ file_name: string }>(
    conn,
    `SELECT s.file_name FROM ${OLD}.strata_segments s JOIN ${OLD}.strata_tables t USING (table_id) WHERE t.account_id = $1`,
    [accountId],
  );
  const segmentsDir = path.join(work, path.basename(layout.account(accountId).segments));
  await mkdir(segmentsDir, { recursive: true });
  const dirs = new Set<string>();
  for (const s of segments) {
    const to = path.join(segmentsDir, s.file_name);
    await linkSegment(path.join(layout.legacySegments, s.file_name), to);
    dirs.add(path.dirname(to));
  }
  for (const d of dirs) await fsyncPath(d);
  for (const f of await readdir(work)) if (f.startsWith(path.basename(database))) await fsyncPath(path.join(work, f));
  await fsyncPath(segmentsDir);
  await fsyncPath(work);
  await rename(work, layout.account(accountId).dir);
  await fsyncPath(layout.accounts);
  log.info(
    { accountId, tables: tables.length, hotRows, segments: segments.length },
    'account storage migrated to its own directory',
  );
}

/** Removes what a finished (or never needed) migration leaves: the old WAL, segments, tmp, half-built directories. */
async function removeLeftovers(layout: StorageLayout): Promise<void> {
  await rm(`${layout.legacyDatabase}.wal`, { force: true });
  await rm(layout.legacySegments, { recursive: true, force: true });
  await rm(layout.legacyTmp, { recursive: true, force: true });
  for (const name of await readdir(layout.accounts)) {
    if (name.endsWith('.migrating')) await rm(path.join(layout.accounts, name), { recursive: true, force: true });
  }
}

/** Tests only: called after each account's directory is in place (a throw stands for a crash there). */
export interface MigrationHooks {
  afterAccount?(accountId: string): void;
}

/** See the file comment. Resolves once the data directory is in the per-account layout. */
export async function migrateLegacyLayout(layout: StorageLayout, log: Logger, hooks: MigrationHooks = {}): Promise<void> {
  await mkdir(layout.accounts, { recursive: true });
  if (!(await exists(layout.legacyDatabase))) {
    await removeLeftovers(layout);
    return;
  }
  log.info({ data: layout.data }, 'migrating the data directory to per-account storage');
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  try {
    const conn = await instance.connect();
    try {
      // Opening the old file replays its write-ahead log: hot rows not yet checkpointed are copied too.
      await conn.run(`ATTACH ${quoteLiteral(layout.legacyDatabase)} AS ${OLD}`);
      await conn.run(`USE ${OLD}`);
      const accounts = (
        await rows<{ account_id: string }>(
          conn,
          `SELECT account_id FROM ${OLD}.strata_tables UNION SELECT account_id FROM ${OLD}.strata_idempotency ORDER BY account_id`,
        )
      ).map((r) => r.account_id);
      for (const accountId of accounts) {
        // The old writer refused other ids; one that is not a GUID cannot become a directory.
        if (!isAccountId(accountId)) throw new Error(`cannot migrate account id '${accountId}': not a lower-case GUID`);
        if (await exists(layout.account(accountId).dir)) continue; // done by an earlier, interrupted run
        await migrateAccount(conn, layout, accountId, log);
        hooks.afterAccount?.(accountId);
      }
      await conn.run('USE memory');
      await conn.run(`DETACH ${OLD}`);
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
  // The commit point: from here on the per-account directories are the data.
  await unlink(layout.legacyDatabase);
  await fsyncPath(layout.data);
  await removeLeftovers(layout);
  log.info({ data: layout.data }, 'data directory migrated to per-account storage');
}
