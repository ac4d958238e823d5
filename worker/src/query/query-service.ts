/**
 * QueryService of a worker (proto/strata/query/v1/query.proto): runs query fragments planned by a
 * gateway over this worker's rows and lists the account's schemas here.
 *
 * A fragment is admitted by the executor limits (executor-limits.ts), then reads one snapshot of
 * the schema (`StorageEngine.openScan`: hot rows plus the segments overlapping the time range)
 * and streams its result as column batches. The call's deadline or cancellation interrupts the
 * statement; the scan is always released.
 */
import {
  type ColumnBatch,
  type ExecutorLimits,
  encodeBatch,
  errorFields,
  FragmentChecker,
  type FragmentStatement,
  implementService,
  type Logger,
  MAX_QUERY_SECONDS,
  type ParamValue,
  type QueryValueType,
  queryTimeoutMessage,
  runFragment,
  StrataError,
  type WireType,
} from '@strata/common';
import {
  type ExecuteFragmentRequest,
  type ExecuteFragmentResponse,
  WireType as ProtoWireType,
  QueryServiceService,
  ValueType,
} from '@strata/proto/query/v1/query';
import type { ColumnTypeName } from '../storage/column-types.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import { ExecutorLimiter } from './executor-limits.js';

const WIRE_BY_PROTO: Partial<Record<ProtoWireType, WireType>> = {
  [ProtoWireType.WIRE_TYPE_VARCHAR]: 'VARCHAR',
  [ProtoWireType.WIRE_TYPE_BIGINT]: 'BIGINT',
  [ProtoWireType.WIRE_TYPE_DOUBLE]: 'DOUBLE',
  [ProtoWireType.WIRE_TYPE_BOOLEAN]: 'BOOLEAN',
  [ProtoWireType.WIRE_TYPE_TIMESTAMP]: 'TIMESTAMP',
};

const VALUE_BY_PROTO: Partial<Record<ValueType, QueryValueType>> = {
  [ValueType.VALUE_TYPE_STRING]: 'string',
  [ValueType.VALUE_TYPE_LONG]: 'long',
  [ValueType.VALUE_TYPE_REAL]: 'real',
  [ValueType.VALUE_TYPE_BOOL]: 'bool',
  [ValueType.VALUE_TYPE_DATETIME]: 'datetime',
  [ValueType.VALUE_TYPE_TIMESPAN]: 'timespan',
  [ValueType.VALUE_TYPE_GUID]: 'guid',
  [ValueType.VALUE_TYPE_DYNAMIC]: 'dynamic',
};

/** Storage column types as the query language sees them. */
const VALUE_OF_STORAGE: Record<ColumnTypeName, ValueType> = {
  Int64: ValueType.VALUE_TYPE_LONG,
  Float64: ValueType.VALUE_TYPE_REAL,
  Boolean: ValueType.VALUE_TYPE_BOOL,
  DateTime: ValueType.VALUE_TYPE_DATETIME,
  String: ValueType.VALUE_TYPE_STRING,
  Dynamic: ValueType.VALUE_TYPE_DYNAMIC,
  Guid: ValueType.VALUE_TYPE_GUID,
};

function wireType(t: ProtoWireType): WireType {
  const w = WIRE_BY_PROTO[t];
  if (!w) throw new StrataError('invalid', 'A fragment uses an unknown wire type.');
  return w;
}

function paramValue(p: ExecuteFragmentRequest['params'][number]): ParamValue {
  const type = wireType(p.type);
  if (p.isNull) return { type, value: null };
  switch (type) {
    case 'VARCHAR':
      return { type, value: p.value };
    case 'BOOLEAN':
      return { type, value: p.value === 'true' };
    case 'DOUBLE':
      return { type, value: Number(p.value) };
    default:
      if (!/^-?\d+$/.test(p.value)) throw new StrataError('invalid', 'A fragment parameter is not an integer.');
      return { type, value: BigInt(p.value) };
  }
}

export function fragmentStatement(req: ExecuteFragmentRequest): FragmentStatement {
  return {
    sql: req.sql,
    params: req.params.map(paramValue),
    sourceColumns: req.sourceColumns.map((c) => {
      const type = VALUE_BY_PROTO[c.type];
      if (!type) throw new StrataError('invalid', `The column '${c.name}' has an unknown type.`);
      return { name: c.name, type };
    }),
    columns: req.columns.map((c) => ({ id: c.id, type: wireType(c.type) })),
    ...(req.maxRows !== undefined ? { maxRows: BigInt(req.maxRows) } : {}),
  };
}

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
}

/** The executor limits, kept in step with the settings poller. */
export interface LiveLimits {
  current(): Readonly<ExecutorLimits>;
  onChange(listener: (limits: Readonly<ExecutorLimits>) => void): unknown;
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
  let appliedThreads: number | undefined;

  async function* execute(req: ExecuteFragmentRequest, signal: AbortSignal): AsyncGenerator<ColumnBatch> {
    if (!req.accountId || !req.schema) throw new StrataError('invalid', 'A fragment needs an account and a schema.');
    const statement = fragmentStatement(req);
    const release = await limiter.admit(signal);
    // The snapshot is closed (a round trip) after the answer has gone: the caller does not wait
    // for it, while the admission slot is held until it is done.
    let scanClosed: Promise<void> | undefined;
    try {
      const range: { fromMs?: number; toMs?: number } = {};
      if (req.fromMs !== undefined) range.fromMs = req.fromMs;
      if (req.toMs !== undefined) range.toMs = req.toMs;
      const scan = await storage.openScan(req.accountId, req.schema, range);
      if (!scan) return; // no rows of this schema here
      try {
        // Whoever sent it: one read-only SELECT over the scan bound below and nothing else.
        await checker?.check(scan.connection, statement.sql);
        const threads = limiter.threads();
        if (threads !== appliedThreads) {
          // Instance-wide: DuckDB's threads bound the row groups read at once (Rowgroup.MaxConcurrentRead).
          await scan.connection.run(`SET threads = ${threads}`);
          appliedThreads = threads;
        }
        yield* runFragment(
          scan.connection,
          scan.relation,
          scan.columns.map((c) => c.name),
          statement,
          signal,
          batchRows,
        );
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
          const types = req.columns.map((c) => wireType(c.type));
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
            columns: s.columns.map((c) => ({ name: c.name, type: VALUE_OF_STORAGE[c.type] })),
          })),
        }),
      },
      log,
    ),
  };
}
