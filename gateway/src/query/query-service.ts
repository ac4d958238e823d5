/**
 * The gateway's query runtime, built once by the gateway role and closed when it stops: the merge
 * database (an in-memory DuckDB shared by all queries), the schema catalogs of the accounts (the
 * union of the workers' ListSchemas, cached), and a fragment runner per query that fans out to
 * the workers. The HTTP routes (query-routes.ts) only map requests and answers onto it.
 */
import type { ChannelPool, Coordinator } from '@strata/common';
import { distributedRunner } from './cluster/distributed-runner.js';
import type { SchemaCatalogSource } from './cluster/schema-catalog.js';
import {
  type ColumnarResult,
  executePlanColumnar,
  type FragmentRunner,
  MergeDatabase,
  type PlanOptions,
  planQuery,
} from './engine.js';
import type { SchemaCatalog } from './types.js';

export interface QueryRunOptions {
  /** Whose rows the fragments read. */
  accountId: string;
  /** Run time limit of the whole query and each worker call. */
  timeoutMs: number;
  /** Aborts the query (the client went away). */
  signal?: AbortSignal;
  /** The query's now() and a window on every table read (alert evaluations). */
  plan?: Pick<PlanOptions, 'now' | 'window'>;
}

export class QueryService {
  private readonly merge = new MergeDatabase();

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    /** Shared with the inflow routes, which report what they wrote (the gateway role builds it). */
    private readonly catalogs: SchemaCatalogSource,
  ) {}

  /** Every table the workers hold for the account (not yet restricted to what a caller may see). */
  catalog(accountId: string, options: { fresh?: boolean } = {}): Promise<SchemaCatalog> {
    return this.catalogs.get(accountId, options);
  }

  /** A runner sending one query's fragments to every registered worker. */
  runner(accountId: string, timeoutMs: number): FragmentRunner {
    return distributedRunner({ coordinator: this.coordinator, channels: this.channels, accountId, timeoutMs });
  }

  /**
   * Plans `query` against the catalog `catalogFor` gives and runs it on the workers, merging here.
   * A query that does not plan against the cached catalog is planned once more against a fresh
   * one (`catalogFor(true)`); its error is the answer if it fails again.
   */
  async run(
    query: string,
    catalogFor: (fresh: boolean) => Promise<SchemaCatalog>,
    options: QueryRunOptions,
  ): Promise<ColumnarResult> {
    let plan: ReturnType<typeof planQuery>;
    try {
      plan = planQuery(query, await catalogFor(false), options.plan);
    } catch {
      plan = planQuery(query, await catalogFor(true), options.plan);
    }
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
