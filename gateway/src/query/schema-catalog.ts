/**
 * The schema catalog of an account: the union of what every worker stores (QueryService
 * ListSchemas; holders that cannot be reached follow the request's QueryCoverage), cached for a
 * few seconds when complete (the spec allows a new schema up to a minute to become
 * queryable). A column written with different types on different workers takes the type both fit
 * in, as storage widens: long + real → real, any other pair → string. Names match
 * case-insensitively (DuckDB identifiers do); the first spelling seen is kept.
 */
import { type ChannelPool, type Coordinator, StrataError, type WorkerRegistration } from '@strata/common';
import { QueryServiceService } from '@strata/proto/query/v1/query';
import { QueryCoverage } from './query-coverage.js';
import type { CatalogTable, KqlType, SchemaCatalog } from './types.js';
import { kqlTypeOfProto } from './worker-protocol.js';

export function widen(a: KqlType, b: KqlType): KqlType {
  if (a === b) return a;
  if ((a === 'long' && b === 'real') || (a === 'real' && b === 'long')) return 'real';
  return 'string';
}

export function mergeSchemas(perWorker: CatalogTable[][]): SchemaCatalog {
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

/** One loading of the catalog: what the workers listed, and who failed to. */
interface CatalogLoad {
  catalog: SchemaCatalog;
  failed: { worker: WorkerRegistration; err: StrataError }[];
}

export class SchemaCatalogSource {
  private readonly cache = new Map<string, { at: number; load: Promise<CatalogLoad> }>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly ttlMs = 5_000,
  ) {}

  /**
   * The account's catalog as the workers of `coverage` (default: resolved now, no partial
   * answers) list it. A holder that fails to list is handled by the coverage: 503, or left out
   * and listed as missing. Only complete loads are cached.
   */
  async get(accountId: string, coverage?: QueryCoverage): Promise<SchemaCatalog> {
    const scope = coverage ?? (await QueryCoverage.resolve(this.coordinator, accountId, false));
    const { catalog, failed } = await this.load(accountId, scope);
    for (const f of failed) scope.workerFailed(f.worker, f.err);
    return catalog;
  }

  private load(accountId: string, coverage: QueryCoverage): Promise<CatalogLoad> {
    const now = Date.now();
    const hit = this.cache.get(accountId);
    // A cached load was complete; the coverage of this request already checked the holders.
    if (hit && now - hit.at < this.ttlMs) return hit.load;
    const load = this.loadFrom(accountId, coverage.workers);
    this.cache.set(accountId, { at: now, load });
    const forget = () => {
      if (this.cache.get(accountId)?.load === load) this.cache.delete(accountId);
    };
    load.then((l) => l.failed.length > 0 && forget(), forget);
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
                const type = kqlTypeOfProto(c.type);
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
