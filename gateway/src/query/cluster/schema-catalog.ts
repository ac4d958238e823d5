/**
 * The schema catalog of an account: the union of what every worker stores (QueryService
 * ListSchemas), cached for a few seconds (a new schema may take up to a minute to become
 * queryable, docs/api.md). A column written with different types on different workers takes the type both fit
 * in, as storage widens: long + real → real, any other pair → string. Names match
 * case-insensitively (DuckDB identifiers do); the first spelling seen is kept.
 */
import { type ChannelPool, type Coordinator, StrataError, valueTypeFromProto } from '@strata/common';
import { QueryServiceService } from '@strata/proto/query/v1/query';
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

export class SchemaCatalogSource {
  private readonly cache = new Map<string, { at: number; catalog: Promise<SchemaCatalog> }>();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    private readonly ttlMs = 5_000,
  ) {}

  get(accountId: string): Promise<SchemaCatalog> {
    const now = Date.now();
    const hit = this.cache.get(accountId);
    if (hit && now - hit.at < this.ttlMs) return hit.catalog;
    const catalog = this.load(accountId);
    this.cache.set(accountId, { at: now, catalog });
    catalog.catch(() => this.cache.delete(accountId));
    if (this.cache.size > 1_000) this.cache.delete(this.cache.keys().next().value as string);
    return catalog;
  }

  private async load(accountId: string): Promise<SchemaCatalog> {
    const workers = await this.coordinator.listWorkers();
    const lists = await Promise.all(
      workers.map(async (w) => {
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
          throw new StrataError('unavailable', `Worker ${w.endpoint} did not list its schemas.`, {
            cause: err,
            retryAfterSeconds: 5,
          });
        }
      }),
    );
    return mergeSchemas(lists);
  }
}
