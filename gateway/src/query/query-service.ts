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
import { QueryCoverage } from './query-coverage.js';
import type { SchemaCatalog } from './types.js';

export interface QueryRunOptions {
  /** Whose rows the fragments read. */
  accountId: string;
  /** Run time limit of the whole query and each worker call. */
  timeoutMs: number;
  /** Aborts the query (the client went away). */
  signal?: AbortSignal;
  /** Which workers must answer (placements): 503 naming missing holders, or a partial answer. */
  coverage?: QueryCoverage;
  /** Values of `declare query_parameters(…)`, by name (the request's variables). */
  parameters?: ReadonlyMap<string, unknown>;
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

  /**
   * Which workers a query of the account must hear from, read once for the request (one
   * coordinator read): 503 naming holders that are not registered, unless `allowPartial`.
   */
  coverage(accountId: string, allowPartial: boolean): Promise<QueryCoverage> {
    return QueryCoverage.resolve(this.coordinator, accountId, allowPartial);
  }

  /** Every table the workers hold for the account (not yet restricted to what a caller may see). */
  catalog(accountId: string, options: { fresh?: boolean; coverage?: QueryCoverage } = {}): Promise<SchemaCatalog> {
    return this.catalogs.get(accountId, options);
  }

  /** A runner sending one query's fragments to the workers of `coverage` (default: resolved per query). */
  runner(accountId: string, timeoutMs: number, coverage?: QueryCoverage): FragmentRunner {
    return distributedRunner({
      coordinator: this.coordinator,
      channels: this.channels,
      accountId,
      timeoutMs,
      ...(coverage ? { coverage } : {}),
    });
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
    // The workers' scans apply the time conjuncts exactly (segments wholly inside read no
    // timestamps), when every worker asked says it does (an older one would ignore the bounds).
    const storageTime = options.coverage?.workers.every((w) => w.scanTimeBounds === true) === true;
    const planOptions: PlanOptions = {
      ...options.plan,
      ...(options.parameters ? { parameters: options.parameters } : {}),
      storageTime,
    };
    let plan: ReturnType<typeof planQuery>;
    try {
      plan = planQuery(query, await catalogFor(false), planOptions);
    } catch {
      plan = planQuery(query, await catalogFor(true), planOptions);
    }
    return executePlanColumnar(plan, this.runner(options.accountId, options.timeoutMs, options.coverage), {
      mergeDatabase: this.merge,
      timeoutMs: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  async close(): Promise<void> {
    await this.merge.close();
  }
}
