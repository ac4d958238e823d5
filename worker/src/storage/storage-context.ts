import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '@strata/common';
import type { TableDirectory } from './catalog.js';
import type { CatalogChanges } from './catalog-changes.js';
import type { FreeSpaceGuard } from './free-space-guard.js';
import type { KeyedMutex } from './keyed-mutex.js';
import type { RetentionRules } from './retention-rules.js';
import type { ScanConnections } from './scan-connections.js';
import type { SegmentReclaimer } from './segment-reclaimer.js';
import type { AccountPaths } from './storage-layout.js';

/**
 * What the parts of one account's storage (writer, sealer, compactor, scans) share. Everything
 * here belongs to that account alone: its DuckDB instance, catalog and directories
 * (account-store.ts); only the free-space guard and the retention rules are the worker's.
 */
export interface StorageContext {
  accountId: string;
  instance: DuckDBInstance;
  /** Connections for query snapshots, kept between queries (scan.ts). */
  scanConnections: ScanConnections;
  tables: TableDirectory;
  /** Per table id: schema changes, seals and compaction swaps of one table never overlap. */
  tableLocks: KeyedMutex<number>;
  reclaimer: SegmentReclaimer;
  /** Catalog commits go through it; scans reuse catalog reads while it reports no change. */
  catalogChanges: CatalogChanges;
  guard: FreeSpaceGuard;
  /** Retention in force: scans never return older rows, maintenance deletes them. */
  retention: RetentionRules;
  paths: AccountPaths;
  log: Logger;
}
