import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * Tells scans whether the catalog (strata_tables, strata_columns, strata_segments) may have
 * changed since they last read it, so they can reuse what they read instead of asking DuckDB on
 * every query (three small catalog queries cost ~3–4 ms a scan on 2 cores, more than many whole
 * queries).
 *
 * Only this process writes the database file, and every transaction that changes the catalog
 * commits through `commit()`: the sealer, the compactor's swap, and group commits of the hot
 * writer that create tables or change columns. A new writer of those tables must do the same,
 * or scans would keep reading an old catalog.
 *
 * `stable()` is the number of catalog commits finished, or undefined while one is committing. A
 * scan that reads the same defined value before its transaction starts and after its snapshot is
 * fixed saw no catalog commit in between, so its snapshot holds exactly the catalog of that
 * generation (see scan.ts).
 */
export class CatalogChanges {
  private started = 0;
  private finished = 0;
  /** Catalog reads of generation `memoGeneration`, by key (dropped when the generation moves on). */
  private memo = new Map<string, unknown>();
  private memoGeneration = -1;
  private static readonly MEMO_MAX = 1_000;

  stable(): number | undefined {
    return this.started === this.finished ? this.finished : undefined;
  }

  /** COMMITs a transaction that changed the catalog. A failed COMMIT still counts (harmless). */
  async commit(conn: DuckDBConnection): Promise<void> {
    this.started++;
    try {
      await conn.run('COMMIT');
    } finally {
      this.finished++;
    }
  }

  /** What `remember` stored under `key` for exactly this generation. */
  recall<T>(generation: number, key: string): T | undefined {
    return generation === this.memoGeneration ? (this.memo.get(key) as T | undefined) : undefined;
  }

  /** Keeps a catalog read made in a snapshot known to hold generation `generation`. */
  remember(generation: number, key: string, value: unknown): void {
    if (generation < this.memoGeneration) return;
    if (generation > this.memoGeneration) {
      this.memo = new Map();
      this.memoGeneration = generation;
    }
    if (this.memo.size >= CatalogChanges.MEMO_MAX) this.memo.delete(this.memo.keys().next().value as string);
    this.memo.set(key, value);
  }
}
