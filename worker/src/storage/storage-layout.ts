import path from 'node:path';
import { StrataError } from '@strata/common';

/**
 * Where everything of a worker's storage lives under `backend.dataPath`. Every path the storage
 * code uses is computed here, so the layout is written down once:
 *
 *   <data>/worker-id                          the worker's identity (worker-identity.ts)
 *   <data>/storage-policy.json                the last storage policy read (storage-policy-poller.ts)
 *   <data>/accounts/<accountId>/hot.duckdb    the account's hot tables, catalog, idempotency keys
 *   <data>/accounts/<accountId>/segments/<tableId>/<segmentId>.duckdb    its sealed segments
 *                                                       (.parquet: written before decision 0025)
 *   <data>/accounts/<accountId>/tmp/          its batch files in flight, spill files
 *
 * One directory per account because each account's DuckDB instance is confined to its own
 * directory (docs/decisions/0015-account-isolation-in-workers.md): a query fragment of one
 * account runs on an instance that neither holds nor may open anything of another.
 *
 * Before that decision, all accounts shared `<data>/hot.duckdb` and `<data>/segments/`; those are
 * the `legacy*` paths, read once by the migration at start-up (legacy-migration.ts).
 */
export interface AccountPaths {
  /** The account's directory. */
  dir: string;
  /** The DuckDB file of the account's hot buffer and catalog. */
  database: string;
  /** Segment files (segment-format.ts), one directory per table id. */
  segments: string;
  /** Batch files in flight, unfinished segment files, DuckDB spill files. */
  tmp: string;
}

/** Account ids are lower-case GUIDs: nothing else may become a directory name. */
const ACCOUNT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isAccountId(value: string): boolean {
  return ACCOUNT_ID.test(value);
}

export class StorageLayout {
  /** Absolute `backend.dataPath`. */
  readonly data: string;
  /** One directory per account. */
  readonly accounts: string;

  constructor(dataPath: string) {
    this.data = path.resolve(dataPath);
    this.accounts = path.join(this.data, 'accounts');
  }

  /** The paths of one account. Refuses anything but a GUID, so no id can name another directory. */
  account(accountId: string): AccountPaths {
    if (!isAccountId(accountId)) throw new StrataError('invalid', 'Account id must be a lower-case GUID.');
    const dir = path.join(this.accounts, accountId);
    return {
      dir,
      database: path.join(dir, 'hot.duckdb'),
      segments: path.join(dir, 'segments'),
      tmp: path.join(dir, 'tmp'),
    };
  }

  /** The file of a segment (`fileName` is relative to its account's segments directory). */
  segmentFile(accountId: string, fileName: string): string {
    return path.join(this.account(accountId).segments, fileName);
  }

  /** A file of the worker itself (identity, policy), never reachable by an account's instance. */
  workerFile(name: string): string {
    return path.join(this.data, name);
  }

  /** The shared DuckDB file of the layout before per-account directories (migrated at start-up). */
  get legacyDatabase(): string {
    return path.join(this.data, 'hot.duckdb');
  }

  /** The shared segments directory of the old layout. */
  get legacySegments(): string {
    return path.join(this.data, 'segments');
  }

  /** The shared tmp directory of the old layout. */
  get legacyTmp(): string {
    return path.join(this.data, 'tmp');
  }

  /** Where the migration builds an account's new directory before it is complete. */
  migratingAccount(accountId: string): string {
    return `${this.account(accountId).dir}.migrating`;
  }
}
