import type { DuckDBInstance } from '@duckdb/node-api';
import type { Logger } from '@strata/common';
import type { TableDirectory } from './catalog.js';
import type { CatalogChanges } from './catalog-changes.js';
import type { FreeSpaceGuard } from './free-space-guard.js';
import type { KeyedMutex } from './keyed-mutex.js';
import type { RetentionRules } from './retention-rules.js';
import type { SegmentReclaimer } from './segment-reclaimer.js';

/** What the parts of the storage engine (writer, sealer, compactor, scans) share. */
export interface StorageContext {
  instance: DuckDBInstance;
  tables: TableDirectory;
  /** Per table id: schema changes, seals and compaction swaps of one table never overlap. */
  tableLocks: KeyedMutex<number>;
  reclaimer: SegmentReclaimer;
  /** Catalog commits go through it; scans reuse catalog reads while it reports no change. */
  catalogChanges: CatalogChanges;
  guard: FreeSpaceGuard;
  /** Retention in force: scans never return older rows, maintenance deletes them. */
  retention: RetentionRules;
  paths: StoragePaths;
  log: Logger;
}

export interface StoragePaths {
  /** backend.dataPath */
  data: string;
  /** The DuckDB file of the hot buffer and the catalog. */
  database: string;
  /** Parquet segments, one directory per table id. */
  segments: string;
  /** Batch files in flight, unfinished segment files, DuckDB spill files. */
  tmp: string;
}
