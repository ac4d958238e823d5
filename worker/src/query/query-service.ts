/**
 * QueryService of a worker (proto/strata/query/v1/query.proto): runs query fragments planned by a
 * gateway over this worker's rows and lists the account's schemas here.
 *
 * A fragment is admitted by the executor limits (executor-limits.ts), then reads one snapshot of
 * the schema (`StorageEngine.openScan`: hot rows plus the segments overlapping the time range)
 * and streams its result as column batches. It runs on the DuckDB instance of the request's
 * account, which holds and may open nothing of any other account (account-instance.ts), so
 * even a fragment the check let through cannot reach another account's rows. The call's deadline or cancellation interrupts the
 * statement; the scan is always released.
 */

import {
  type ColumnBatch,
  type ColumnTypeName,
  decodeFragmentStatement,
  decodeFragmentTarget,
  type ExecutorLimits,
  encodeBatch,
  errorFields,
  FragmentChecker,
  type FragmentView,
  foldedColumn,
  implementService,
  isBareCount,
  type Logger,
  MAX_QUERY_SECONDS,
  type QueryValueType,
  queryTimeoutMessage,
  runFragment,
  StrataError,
  valueTypeToProto,
  wireTypeFromProto,
} from '@strata/common';
import type { ExecuteFragmentRequest, ExecuteFragmentResponse } from '@strata/proto/query/v1/query';
import { QueryServiceService } from '@strata/proto/query/v1/query';
import { countedByBlocks } from '../storage/counted-blocks.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import { countWithCatalog } from './catalog-count.js';
import { ExecutorLimiter } from './executor-limits.js';

/** Storage column types as the query language sees them. */
const VALUE_OF_STORAGE: Record<ColumnTypeName, QueryValueType> = {
  Int64: 'long',
  Float64: 'real',
  Boolean: 'bool',
  DateTime: 'datetime',
  String: 'string',
  Dynamic: 'dynamic',
  Guid: 'guid',
};

export interface QueryServiceOptions {
  /** Rows per streamed batch (default 16,384). */
  batchRows?: number;
  /** The worker's CPU budget (cpu-budget.ts): DuckDB threads never exceed it. */
  cores?: number;
  /**
   * Tests only: run fragments without the whitelist check (fragment-check.ts), to prove the
   * DuckDB confinement alone refuses what the check would have. Neither the config nor the wire
   * can set it; the backend role never passes it.
   */
  unsafeSkipFragmentCheckForTests?: boolean;
  /** Longest a fragment runs whatever the caller's deadline (default MAX_QUERY_SECONDS). */
  maxFragmentMs?: number;
  /** This worker's id: a fragment's view names the owners of handed-off segments by it. */
  workerId?: string;
}

/** The executor limits, kept in step with the settings poller. */
export interface LiveLimits {
  current(): Readonly<ExecutorLimits>;
  onChange(listener: (limits: Readonly<ExecutorLimits>) => void): unknown;
}

/** A fragment's view as the storage reads it: which handed-off segments are this worker's. */
function segmentView(view: FragmentView, workerId: string | undefined) {
  const owned = new Set<string>();
  const elsewhere = new Set<string>();
  for (const o of view.owners) (o.workerId === workerId ? owned : elsewhere).add(o.segmentId);
  return { owned, elsewhere, revision: view.revision };
}

export function queryService(storage: StorageEngine, settings: LiveLimits, log: Logger, options: QueryServiceOptions = {}) {
  const limiter = new ExecutorLimiter(settings.current(), options.cores);
  settings.onChange((limits) => limiter.apply(limits));
  const batchRows = options.batchRows ?? 16_384;
  const checker = options.unsafeSkipFragmentCheckForTests ? undefined : new FragmentChecker();
  const maxFragmentMs = options.maxFragmentMs ?? MAX_QUERY_SECONDS * 1000;

  /** The call's signal, also aborted once the worker's own budget has passed. */
  function budgeted(signal: AbortSignal): { signal: AbortSignal; done(): void } {
    const controller = new AbortController();
    const seconds = Math.round(maxFragmentMs / 1000);
    const timer = setTimeout(() => controller.abort(new StrataError('timeout', queryTimeoutMessage(seconds))), maxFragmentMs);
    timer.unref();
    const onAbort = () => controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return {
      signal: controller.signal,
      done: () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
      },
    };
  }

  async function* execute(req: ExecuteFragmentRequest, signal: AbortSignal): AsyncGenerator<ColumnBatch> {
    if (!req.accountId || !req.schema) throw new StrataError('invalid', 'A fragment needs an account and a schema.');
    const statement = decodeFragmentStatement(req);
    const release = await limiter.admit(signal);
    // The snapshot is closed (a round trip) after the answer has gone: the caller does not wait
    // for it, while the admission slot is held until it is done.
    let scanClosed: Promise<void> | undefined;
    try {
      const { accountId, schema, view, ...range } = decodeFragmentTarget(req);
      // The term folds the statement reads (source columns `#fold:c`, decision 0045): the scan
      // gives the stored ones where segment files have them.
      const folds = statement.sourceColumns.flatMap((c) => foldedColumn(c.name) ?? []);
      const scan = await storage.openScan(
        accountId,
        schema,
        folds.length > 0 ? { ...range, folds } : range,
        view && segmentView(view, options.workerId),
      );
      if (!scan) return; // no rows of this schema here
      try {
        // Whoever sent it: one read-only SELECT over the scan bound below and nothing else.
        await checker?.check(scan.connection, statement.sql);
        // Per account instance, set only when it changed (DuckDB's threads bound the row groups read at once).
        await scan.applyThreads(limiter.threads());
        const available = scan.columns.map((c) => c.name);
        // A bare count reads the catalog's row counts of the segments it would read whole.
        if (isBareCount(statement))
          yield* countWithCatalog(
            scan.connection,
            await countedByBlocks(scan.connection, scan.counted),
            available,
            statement,
            signal,
          );
        else
          yield* runFragment(scan.connection, scan.relation, available, statement, signal, batchRows, scan.branches, scan.whole);
      } finally {
        scanClosed = scan.release();
      }
    } finally {
      if (scanClosed) {
        scanClosed.then(release, (err: unknown) => {
          release();
          log.warn(errorFields(err), 'closing a query snapshot failed');
        });
      } else {
        release();
      }
    }
  }

  return {
    definition: QueryServiceService,
    limiter,
    implementation: implementService(
      QueryServiceService,
      {
        executeFragment: async (req, send, ctx) => {
          const types = req.columns.map((c) => wireTypeFromProto(c.type));
          const budget = budgeted(ctx.signal);
          try {
            for await (const batch of execute(req, budget.signal)) {
              const encoded = encodeBatch(batch, types);
              await send({ rowCount: encoded.rowCount, columns: encoded.columns } satisfies ExecuteFragmentResponse);
            }
          } finally {
            budget.done();
          }
        },
        listSchemas: async (req) => ({
          schemas: storage.listSchemas(req.accountId).map((s) => ({
            schema: s.schema,
            columns: s.columns.map((c) => ({ name: c.name, type: valueTypeToProto(VALUE_OF_STORAGE[c.type]) })),
          })),
        }),
      },
      log,
    ),
  };
}
