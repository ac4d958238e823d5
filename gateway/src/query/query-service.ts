/**
 * The gateway's query runtime, built once by the gateway role and closed when it stops: the merge
 * database (an in-memory DuckDB shared by all queries), the schema catalogs of the accounts (the
 * union of the workers' ListSchemas, cached), and a fragment runner per query that fans out to
 * the workers. The HTTP routes (query-routes.ts) only map requests and answers onto it.
 */
import { type ChannelPool, type Coordinator, isStrataError } from '@strata/common';
import { AccountViews } from './account-views.js';
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

/** What runCovered needs besides the query: QueryRunOptions without a coverage, which it resolves. */
export interface CoveredRunOptions extends Omit<QueryRunOptions, 'coverage'> {
  /** Answer without holders that cannot be reached (listed in the coverage's `missing`). */
  allowPartial: boolean;
}

export class QueryService {
  private readonly merge = new MergeDatabase();
  private readonly views: AccountViews;

  constructor(
    private readonly coordinator: Coordinator,
    private readonly channels: ChannelPool,
    /** Shared with the inflow routes, which report what they wrote (the gateway role builds it). */
    private readonly catalogs: SchemaCatalogSource,
  ) {
    this.views = new AccountViews(coordinator);
  }

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

  /**
   * Runs a read-only query (HTTP queries, alert evaluations) on the workers of the account's
   * current view, and answers what a run with that view answers (decision 0027). The current view
   * is read for every query; while it is read, the query already runs on the last view read for
   * the account. That run's answer is given only when the current view, once read, asks the same
   * workers the same way (QueryCoverage.sameView); otherwise, or when that run failed with a
   * failure a view could cause (unavailable: a holder missing, a worker that let go of a handed-off
   * segment), the query runs again on the current view (not after a timeout or a cancellation).
   * So an answer never rests on a view older than the request, and a changed view costs one more
   * run. Not for purges (their steps change data: lifecycle-routes.ts resolves its coverage first).
   */
  async runCovered(
    query: string,
    catalogFor: (coverage: QueryCoverage, fresh: boolean) => Promise<SchemaCatalog>,
    options: CoveredRunOptions,
  ): Promise<{ result: ColumnarResult; coverage: QueryCoverage }> {
    const { allowPartial, ...runOptions } = options;
    const { current, last } = this.views.read(options.accountId);
    // `reload`: the catalog is listed afresh by the coverage's workers (an early run on another
    // view may have cached one listed by other workers).
    const runWith = async (coverage: QueryCoverage, reload = false) => ({
      result: await this.run(query, (fresh) => catalogFor(coverage, fresh || reload), { ...runOptions, coverage }),
      coverage,
    });
    if (!last) return runWith(QueryCoverage.fromView(await current, allowPartial));
    current.catch(() => undefined); // awaited below, after the early run
    const early: { coverage?: QueryCoverage; answer?: Awaited<ReturnType<typeof runWith>>; error?: unknown } = {};
    try {
      early.coverage = QueryCoverage.fromView(last, allowPartial);
      early.answer = await runWith(early.coverage);
    } catch (error) {
      early.error = error;
    }
    // The answer stands only against the current view (a read that began after the request).
    const checked = QueryCoverage.fromView(await current, allowPartial);
    const kind = isStrataError(early.error) ? early.error.kind : undefined;
    if (early.coverage?.sameView(checked)) {
      if (early.answer) return early.answer;
      if (kind !== 'unavailable') throw early.error;
    }
    // A run that timed out or was cancelled is not run again whatever the view (an error holds no rows).
    if (kind === 'timeout' || kind === 'cancelled') throw early.error;
    options.signal?.throwIfAborted();
    return runWith(checked, !early.coverage?.sameView(checked));
  }

  async close(): Promise<void> {
    await this.merge.close();
  }
}
