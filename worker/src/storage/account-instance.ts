import { totalmem } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { confineDuckDB, registerKustoFunctions } from '@strata/common';
import type { AccountPaths } from './storage-layout.js';

/**
 * How much of the machine one account's DuckDB instance may take. Every account has an instance
 * of its own (docs/decisions/0015-account-isolation-in-workers.md), so these are per instance and
 * are chosen so that many accounts do not multiply the worker's footprint:
 *
 * - `threads`: the worker's DuckDB thread budget (its cores but one), as the single instance had,
 *   but only while the account is active. DuckDB keeps `threads − 1` OS threads per instance, so
 *   an instance opens with one thread (none in the background) and the store raises it to the
 *   budget on the account's next write or query and lowers it again once the account has been idle
 *   a while (account-store.ts): a worker holding many accounts has background threads for the
 *   active ones only. What runs at once is bounded worker-wide by the executor's admission
 *   (executor-limits.ts) and the one hot writer per account. The query service lowers the budget
 *   live (executor settings).
 * - `memory_limit`: a share of what DuckDB takes by default for one instance (80 % of RAM):
 *   `ACCOUNT_MEMORY_SHARE` of it, at least `MIN_ACCOUNT_MEMORY`. An instance's hot rows and scans
 *   stay within it and spill to the account's tmp directory beyond; four accounts working at their
 *   limit at once reach what the single instance could use before.
 */
export interface AccountInstancePolicy {
  /** DuckDB threads while the account is active (the instance opens with one). */
  threads: number;
  /** DuckDB `memory_limit`, e.g. '4GB'. */
  memoryLimit: string;
  /** Extra DuckDB settings (tests, tuning). */
  settings: Record<string, string>;
}

const ACCOUNT_MEMORY_SHARE = 0.25;
const MIN_ACCOUNT_MEMORY = 256 * 1024 * 1024;

/** The default memory_limit of an account instance on this machine. */
export function defaultAccountMemoryLimit(): string {
  const bytes = Math.max(MIN_ACCOUNT_MEMORY, Math.floor(totalmem() * 0.8 * ACCOUNT_MEMORY_SHARE));
  return `${Math.floor(bytes / (1024 * 1024))}MB`;
}

export interface AccountInstance {
  instance: DuckDBInstance;
  /** The first connection: the hot writer's. */
  writerConn: DuckDBConnection;
}

/**
 * Opens the DuckDB instance of one account over its own file, set up and then confined to the
 * account's segments and tmp directories (plus its database file), with the configuration locked:
 * whatever SQL later runs on it can neither open another account's file nor change that.
 */
export async function openAccountInstance(paths: AccountPaths, policy: AccountInstancePolicy): Promise<AccountInstance> {
  const instance = await DuckDBInstance.create(paths.database, {
    temp_directory: path.join(paths.tmp, 'spill'),
    // Hot rows live in the write-ahead log until they are sealed, and are checkpointed only
    // after the seal deleted them: compressing them into the database file first cost ~2 µs
    // a row for data that leaves for Parquet within a minute (bench/ingest). The WAL stays
    // bounded by the seal thresholds; DuckDB checkpoints by itself beyond this size.
    checkpoint_threshold: '256MB',
    // One until the account is active (see above); then all cores of the budget but one: the JS
    // thread (gRPC, batch files) and co-located roles keep a core. On 2 cores a second DuckDB
    // thread cost ~35 % more CPU per ingested row (coordination and spinning) for no more
    // throughput (bench/ingest, docs/decisions/0004-worker-storage.md).
    threads: '1',
    memory_limit: policy.memoryLimit,
    ...policy.settings,
  });
  try {
    const writerConn = await instance.connect();
    // Naive TIMESTAMP columns hold UTC: conversions from TIMESTAMPTZ (now(), query functions)
    // must use UTC, not the host's zone. ICU is built in but loads lazily.
    await writerConn.run('LOAD icu');
    await writerConn.run("SET GLOBAL TimeZone = 'UTC'");
    // Segment files never change once written (a compaction writes new ones), so their footers
    // can be parsed once instead of on every query: ~1.5 ms less on a small query over 10
    // segments (bench/query). DuckDB bounds this cache (LRU by estimated memory) and checks a
    // file's modification time before using its entry. The setting belongs to the parquet
    // extension, which must be loaded first.
    await writerConn.run('LOAD parquet');
    await writerConn.run('SET GLOBAL parquet_metadata_cache = true');
    // The engine's JS functions (kusto-udfs.ts), for every fragment connection of this instance:
    // registered once here, before the configuration is locked — a registration is a catalog
    // write, and one per fragment connection inside its snapshot transaction conflicted with
    // the other open snapshots ("Failed to register scalar function").
    registerKustoFunctions(writerConn);
    // Last: from here on this instance reaches only this account's segments and batch/spill
    // files, and no statement (query fragments included) can change that. `threads` follows the
    // executor settings live (query-service.ts).
    await confineDuckDB(writerConn, { allowedDirectories: [paths.segments, paths.tmp], allowedConfigs: ['threads'] });
    return { instance, writerConn };
  } catch (err) {
    instance.closeSync();
    throw err;
  }
}
