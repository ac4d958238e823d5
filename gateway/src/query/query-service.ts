/**
 * The gateway's query runtime, built once by the gateway role and closed when it stops: the merge
 * database (an in-memory DuckDB shared by all queries), the schema catalogs of the accounts (the
 * union of the workers' ListSchemas, cached), and a fragment runner per query that fans out to
 * the workers. The HTTP routes (query-routes.ts) only map requests and answers onto it.
 */
import type { ChannelPool, Coordinator } from '@strata/common';
import { distributedRunner } from './cluster/distributed-runner.js';
import { SchemaCatalogSource } from './cluster/schema-catalog.js';
import { type ColumnarResult, executePlanColumnar, type FragmentRunner, MergeDatabase, planQuery } from './engine.js';
import type { SchemaCatalog } from './types.js';

export interface QueryRunOptions {
  /** Whose rows the fragments read. */
  accountId: string;
  /** Run time limit of the whole query and each worker call. */
  timeoutMs: number;
  /** Aborts the query (the client went away). */
  signal?: AbortSignal;
  /** Values of `declare query_parameters(…)`, by name (the request's variables). */
  parameters?: ReadonlyMap<string, unknown>;
}

export class QueryService {
  private readonly merge = new MergeDatabase();
  private readonly catalogs: SchemaCatalogSource;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
  ) {
    this.catalogs = new SchemaCatalogSource(coordinator, channels);
  }

  /** Every table the workers hold for the account (not yet restricted to what a caller may see). */
  catalog(accountId: string): Promise<SchemaCatalog> {
    return this.catalogs.get(accountId);
  }

  /** A runner sending one query's fragments to every registered worker. */
  runner(accountId: string, timeoutMs: number): FragmentRunner {
    return distributedRunner({ coordinator: this.coordinator, channels: this.channels, accountId, timeoutMs });
  }

  /** Plans `query` against `catalog` and runs it on the workers, merging here. */
  async run(query: string, catalog: SchemaCatalog, options: QueryRunOptions): Promise<ColumnarResult> {
    const plan = planQuery(query, catalog, options.parameters ? { parameters: options.parameters } : {});
    return executePlanColumnar(plan, this.runner(options.accountId, options.timeoutMs), {
      mergeDatabase: this.merge,
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async close(): Promise<void> {
    await this.merge.close();
  }
}
