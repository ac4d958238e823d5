/**
 * The fragment runner of a real cluster: each fragment goes to every registered worker
 * (a worker that refuses writes still holds data), their result streams are merged as they
 * arrive, and a failure or an abort cancels every worker's call (the worker interrupts its
 * statement). Which workers must answer is the query's QueryCoverage: a holder of the account's
 * data that does not answer fails the query with 503 naming it, unless the request allowed a
 * partial answer (then its rows are left out and it is listed); a worker that holds nothing of
 * the account may fail without changing the answer.
 */
import { setMaxListeners } from 'node:events';
import {
  type ChannelPool,
  type ColumnBatch,
  type Coordinator,
  QUERY_FINISHED,
  StrataError,
  type WorkerRegistration,
} from '@strata/common';
import { QueryServiceService } from '@strata/proto/query/v1/query';
import type { FragmentRunner } from '../exec/executor.js';
import type { FragmentSpec, SingleWorkerSpec } from '../plan/planner.js';
import { QueryCoverage } from '../query-coverage.js';
import { fragmentRequest, responseBatch } from './worker-protocol.js';

export interface DistributedRunnerOptions {
  coordinator: Coordinator;
  channels: ChannelPool;
  accountId: string;
  /** gRPC deadline of each worker call (the query's own timeout also aborts them). */
  timeoutMs: number;
  /** Who must answer; default: resolved once for this query, no partial answers. */
  coverage?: QueryCoverage;
}

/**
 * Yields from several async iterables as values arrive. On the first failure, or when the
 * consumer stops, `stop` is called first (so sources blocked on I/O end), then every source is
 * closed.
 */
async function* mergeStreams<T>(sources: AsyncIterable<T>[], stop: () => void): AsyncGenerator<T> {
  const iterators = sources.map((s) => s[Symbol.asyncIterator]());
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<T> }>>();
  const pull = (i: number) =>
    pending.set(
      i,
      (iterators[i] as AsyncIterator<T>).next().then((r) => ({ i, r })),
    );
  for (let i = 0; i < iterators.length; i++) pull(i);
  try {
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      if (r.done) {
        pending.delete(i);
        continue;
      }
      pull(i);
      yield r.value;
    }
  } finally {
    if (pending.size > 0) {
      stop();
      // Outstanding reads now fail or end; nobody waits for their values any more.
      for (const p of pending.values()) p.catch(() => undefined);
      await Promise.allSettled([...pending.values()]);
      await Promise.allSettled([...pending.keys()].map((i) => iterators[i]?.return?.()));
    }
  }
}

export function distributedRunner(options: DistributedRunnerOptions): FragmentRunner {
  // One runner serves one query: its fragments all go to the same workers, resolved once.
  let resolved: Promise<QueryCoverage> | undefined;
  const coverage = () => {
    resolved ??= options.coverage
      ? Promise.resolve(options.coverage)
      : QueryCoverage.resolve(options.coordinator, options.accountId, false);
    return resolved;
  };
  const runner: FragmentRunner = async function* (fragment: FragmentSpec, signal: AbortSignal) {
    const c = await coverage();
    yield* run(options, fragment, signal, c.workers, c);
  };
  runner.single = async (statement, signal) => {
    // One registered worker holds every row: it can answer the whole query itself.
    const c = await coverage();
    if (c.workers.length !== 1) return undefined;
    return run(options, statement, signal, c.workers, c);
  };
  return runner;
}

async function* run(
  options: DistributedRunnerOptions,
  fragment: SingleWorkerSpec,
  signal: AbortSignal,
  workers: WorkerRegistration[],
  coverage: QueryCoverage,
): AsyncGenerator<ColumnBatch> {
  if (workers.length === 0) return;
  const request = fragmentRequest(options.accountId, fragment, coverage.view);
  const calls = new AbortController();
  // One listener per worker call on this signal: more than Node's default 10 with many workers.
  setMaxListeners(workers.length + 10, calls.signal);
  const onAbort = () => calls.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const streams = workers.map((w) =>
    (async function* () {
      const client = options.channels.client(QueryServiceService, w.endpoint);
      try {
        for await (const message of client.executeFragment(request, { timeoutMs: options.timeoutMs, signal: calls.signal })) {
          yield responseBatch(message, fragment);
        }
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        if (err instanceof StrataError && (err.kind === 'unavailable' || err.kind === 'internal')) {
          // Returns when the answer may go on without this worker; throws the 503 otherwise.
          coverage.workerFailed(w, err);
          return;
        }
        throw err;
      }
    })(),
  );
  try {
    yield* mergeStreams(streams, () => calls.abort(new StrataError('cancelled', 'The query stopped.')));
  } finally {
    signal.removeEventListener('abort', onAbort);
    calls.abort(QUERY_FINISHED);
  }
}
