/**
 * The schema catalog of an account: the union of what every worker stores (QueryService
 * ListSchemas; holders that cannot be reached follow the request's QueryCoverage), cached for a
 * few seconds when complete. A new schema or column is still queryable as soon as its inflow
 * request answered 200 (docs/api.md): this gateway's inflow routes report what they wrote
 * (`noteWritten`), which drops a cached catalog lacking it, and a query that fails to plan against
 * a cached catalog is planned once more against a fresh one (a write through another gateway). A
 * column written with different types on different workers takes the type both fit
 * in, as storage widens: long + real → real, any other pair → string. Names match
 * case-insensitively (DuckDB identifiers do); the first spelling seen is kept.
 */
import { type ChannelPool, type Coordinator, StrataError, valueTypeFromProto, type WorkerRegistration } from '@strata/common';
import { QueryServiceService } from '@strata/proto/query/v1/query';
import { QueryCoverage } from '../query-coverage.js';
import type { CatalogTable, KqlType, SchemaCatalog } from '../types.js';

export function widen(a: KqlType, b: KqlType): KqlType {
  if (a === b) return a;
  if ((a === 'long' && b === 'real') || (a === 'real' && b === 'long')) return 'real';
  return 'string';
}

function mergeSchemas(perWorker: CatalogTable[][]): SchemaCatalog {
  const tables = new Map<string, { name: string; columns: Map<string, { name: string; type: KqlType }> }>();
  for (const list of perWorker) {
    for (const t of list) {
      let table = tables.get(t.name);
      if (!table) {
        table = { name: t.name, columns: new Map() };
        tables.set(t.name, table);
      }
      for (const c of t.columns) {
        const key = c.name.toLowerCase();
        const seen = table.columns.get(key);
        if (seen) seen.type = widen(seen.type, c.type);
        else table.columns.set(key, { name: c.name, type: c.type });
      }
    }
  }
  return {
    tables: [...tables.values()]
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
      .map((t) => ({ name: t.name, columns: [...t.columns.values()] })),
  };
}

/** Only the tables a set of schema patterns allows (undefined: all). */
export function restrictCatalog(catalog: SchemaCatalog, allowed: ((schema: string) => boolean) | undefined): SchemaCatalog {
  return allowed ? { tables: catalog.tables.filter((t) => allowed(t.name)) } : catalog;
}

/** A schema and the columns an inflow request wrote into it. */
export interface WrittenSchema {
  schema: string;
  columns: { name: string }[];
}

/** Whether a catalog already lists every written schema and column (columns match without case). */
export function catalogCovers(catalog: SchemaCatalog, written: WrittenSchema[]): boolean {
  return written.every((w) => {
    const table = catalog.tables.find((t) => t.name === w.schema);
    if (!table) return false;
    const names = new Set(table.columns.map((c) => c.name.toLowerCase()));
    return w.columns.every((c) => names.has(c.name.toLowerCase()));
  });
}

/** One loading of the catalog: what the workers listed, and who failed to. */
interface CatalogLoad {
  catalog: SchemaCatalog;
  failed: { worker: WorkerRegistration; err: StrataError }[];
}

interface CacheEntry {
  at: number;
  load: Promise<CatalogLoad>;
  /** The catalog once the load finished complete (for noteWritten). */
  resolved?: SchemaCatalog;
}

export class SchemaCatalogSource {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly ttlMs = 5_000,
  ) {}

  /**
   * The account's catalog as the workers of `coverage` (default: resolved now, no partial
   * answers) list it, from the cache unless `fresh`. A holder that fails to list is handled by the
   * coverage: 503, or left out and listed as missing. Only complete loads are cached.
   */
  async get(accountId: string, options: { fresh?: boolean; coverage?: QueryCoverage } = {}): Promise<SchemaCatalog> {
    const scope = options.coverage ?? (await QueryCoverage.resolve(this.coordinator, accountId, false));
    const { catalog, failed } = await this.load(accountId, scope, options.fresh === true);
    for (const f of failed) scope.workerFailed(f.worker, f.err);
    return catalog;
  }

  /**
   * Called after an inflow request stored `written` (and before it answers 200): a cached catalog
   * that lacks any of it is dropped, so the next query loads the new schema or column. A load
   * still in flight may have started before the write: it is dropped too.
   */
  noteWritten(accountId: string, written: WrittenSchema[]): void {
    const hit = this.cache.get(accountId);
    if (hit && !(hit.resolved && catalogCovers(hit.resolved, written))) this.cache.delete(accountId);
  }

  private load(accountId: string, coverage: QueryCoverage, fresh: boolean): Promise<CatalogLoad> {
    const now = Date.now();
    const hit = this.cache.get(accountId);
    // A cached load was complete; the coverage of this request already checked the holders.
    if (hit && !fresh && now - hit.at < this.ttlMs) return hit.load;
    const load = this.loadFrom(accountId, coverage.workers);
    const entry: CacheEntry = { at: now, load };
    this.cache.set(accountId, entry);
    const forget = () => {
      if (this.cache.get(accountId) === entry) this.cache.delete(accountId);
    };
    load.then((l) => {
      if (l.failed.length > 0) forget();
      else entry.resolved = l.catalog;
    }, forget);
    if (this.cache.size > 1_000) this.cache.delete(this.cache.keys().next().value as string);
    return load;
  }

  private async loadFrom(accountId: string, workers: WorkerRegistration[]): Promise<CatalogLoad> {
    const failed: CatalogLoad['failed'] = [];
    const lists = await Promise.all(
      workers.map(async (w): Promise<CatalogTable[]> => {
        try {
          const res = await this.channels
            .client(QueryServiceService, w.endpoint)
            .listSchemas({ accountId }, { timeoutMs: 10_000 });
          return res.schemas.map(
            (s): CatalogTable => ({
              name: s.schema,
              columns: s.columns.flatMap((c) => {
                const type = valueTypeFromProto(c.type);
                return type ? [{ name: c.name, type }] : [];
              }),
            }),
          );
        } catch (err) {
          const cause = err instanceof StrataError ? err : undefined;
          failed.push({
            worker: w,
            err: new StrataError(
              cause?.kind === 'internal' ? 'internal' : 'unavailable',
              `Worker ${w.endpoint} did not list its schemas.`,
              {
                cause: err,
                retryAfterSeconds: 5,
              },
            ),
          });
          return [];
        }
      }),
    );
    return { catalog: mergeSchemas(lists), failed };
  }
}
