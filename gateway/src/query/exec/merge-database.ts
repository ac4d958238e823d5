/**
 * The gateway's in-memory DuckDB where fragment rows are merged. One instance per process; each
 * query gets its own connection (DuckDB connections must not be shared by concurrent async calls)
 * and its fragment tables are TEMP tables of that connection, gone when it closes.
 *
 * A connection whose query left nothing behind (its fragments' rows went into the statement
 * itself, no temp table, and the statement ended normally) is kept for the next query: opening
 * one took ~0.6 ms of the main thread per query, a tenth of a two-worker count (decision 0043).
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { confineDuckDB, registerKustoFunctions } from '@strata/common';

export interface MergeDatabaseOptions {
  /** DuckDB worker threads for merges (default: DuckDB's own choice, the core count). */
  threads?: number;
  /** DuckDB memory limit for merges, e.g. '1GB'. */
  memoryLimit?: string;
}

/** Idle connections kept for reuse (each is small; concurrent merges beyond this open new ones). */
const MAX_IDLE = 8;

export class MergeDatabase {
  private instance: Promise<DuckDBInstance> | undefined;
  private readonly idle: DuckDBConnection[] = [];

  constructor(private readonly options: MergeDatabaseOptions = {}) {}

  private open(): Promise<DuckDBInstance> {
    this.instance ??= (async () => {
      // Spill files go to the OS temp directory: DuckDB's default (`.tmp` under the working
      // directory) is read-only in the chart's pods.
      const spill = path.join(tmpdir(), 'strata-merge');
      const config: Record<string, string> = { temp_directory: spill };
      if (this.options.threads) config.threads = String(this.options.threads);
      if (this.options.memoryLimit) config.memory_limit = this.options.memoryLimit;
      const instance = await DuckDBInstance.create(':memory:', config);
      // Merges read only their connection's temp tables: no file but the spill directory is
      // reachable and no statement can change the configuration (docs/decisions/0008-fragment-safety.md).
      const setup = await instance.connect();
      try {
        // The engine's JS functions, as on the workers (results do not depend on where a function
        // runs): once per instance, visible to every connection, before the lock.
        registerKustoFunctions(setup);
        await confineDuckDB(setup, { allowedDirectories: [spill] });
      } finally {
        setup.closeSync();
      }
      return instance;
    })();
    return this.instance;
  }

  /** A connection of its own for one query; give it back with `release`. */
  async connect(): Promise<DuckDBConnection> {
    const kept = this.idle.pop();
    if (kept) return kept;
    const instance = await this.open();
    // No session settings are needed: the engine's SQL does not depend on the time zone; the JS
    // functions were registered for the whole instance when it opened.
    return instance.connect();
  }

  /**
   * Ends a query's use of its connection. `clean`: it created nothing (no temp table) and its
   * statement ended normally, so the next query may use it as new; otherwise it is closed.
   */
  release(connection: DuckDBConnection, clean: boolean): void {
    if (clean && this.instance && this.idle.length < MAX_IDLE) this.idle.push(connection);
    else connection.closeSync();
  }

  async close(): Promise<void> {
    const instance = this.instance;
    this.instance = undefined;
    for (const c of this.idle.splice(0)) c.closeSync();
    if (instance) (await instance).closeSync();
  }
}
