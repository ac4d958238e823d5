/**
 * Real query workers for the query tests: a StorageEngine in a temporary directory serving the
 * query service over gRPC (mutual TLS, as a backend), and an embedded coordinator recording them as
 * holders of an account. One harness for distributed-query, single-worker-top-n and stored-term-fold; each test
 * fills the storage its own way between `openStorage` and `serveQueries`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type Coordinator,
  createLogger,
  EmbeddedCoordinator,
  type ExecutorLimits,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import type { ExecuteFragmentRequest } from '@strata/proto/query/v1/query';
import { type AppendPart, FreeSpaceGuard, queryService, StorageEngine } from '@strata/worker';

const log = createLogger('test', { level: 'silent' });

export const DEFAULT_LIMITS: ExecutorLimits = {
  queryMaxConcurrent: 10,
  fileMaxConcurrentRead: 10,
  rowgroupMaxConcurrentRead: 100,
};

export interface QueryWorker {
  dir: string;
  storage: StorageEngine;
  server: Awaited<ReturnType<typeof startGrpcServer>>['server'];
  endpoint: string;
  service: ReturnType<typeof queryService>;
  limits: ExecutorLimits;
}

/** A storage engine in a fresh temporary directory; maintenance and age seals kept out of the way. */
export async function openStorage(prefix: string): Promise<{ dir: string; storage: StorageEngine }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const guard = new FreeSpaceGuard({ path: dir, minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
  await guard.check();
  const storage = await StorageEngine.open({
    dataPath: dir,
    log,
    guard,
    tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000 },
  });
  return { dir, storage };
}

/** Serves the storage's query service on 127.0.0.1; `onFragment` sees each fragment request first. */
export async function serveQueries(
  opened: { dir: string; storage: StorageEngine },
  limits: ExecutorLimits = DEFAULT_LIMITS,
  onFragment?: (req: ExecuteFragmentRequest) => void,
): Promise<QueryWorker> {
  const live = { current: () => limits, onChange: () => undefined };
  const service = queryService(opened.storage, live, log, { batchRows: 500 });
  if (onFragment) {
    const impl = service.implementation as Record<string, (call: { request: ExecuteFragmentRequest }) => unknown>;
    const execute = impl.executeFragment as (call: { request: ExecuteFragmentRequest }) => unknown;
    impl.executeFragment = (call) => {
      onFragment(call.request);
      return execute(call);
    };
  }
  const { server, port } = await startGrpcServer('127.0.0.1:0', [service], testIdentity(['backend']));
  return { ...opened, server, endpoint: `127.0.0.1:${port}`, service, limits };
}

/**
 * A worker whose storage got each batch of `sealed` for `account` sealed into a segment of its
 * own, then `hot` appended and left unsealed: the three kinds of rows a scan unions. `toPart`
 * turns a test's rows into the append part of its schema.
 */
export async function startSealedWorker<R>(
  prefix: string,
  account: string,
  toPart: (rows: R[]) => AppendPart,
  sealed: R[][],
  hot: R[],
  onFragment?: (req: ExecuteFragmentRequest) => void,
): Promise<QueryWorker> {
  const opened = await openStorage(prefix);
  const append = (rows: R[]) =>
    opened.storage.append({
      accountId: account,
      parts: [toPart(rows)],
      inflowTimestampUs: Date.now() * 1000,
      inflowHost: 'test',
      sourceAddress: '127.0.0.1',
      agent: null,
    });
  for (const batch of sealed) {
    await append(batch);
    await opened.storage.sealAll();
  }
  if (hot.length > 0) await append(hot);
  return serveQueries(opened, DEFAULT_LIMITS, onFragment);
}

export async function stopWorker(w: QueryWorker): Promise<void> {
  await stopGrpcServer(w.server, 0);
  await w.storage.close();
  rmSync(w.dir, { recursive: true, force: true });
}

/** A real (embedded) coordinator with the workers registered and recorded as holders of `account`. */
export async function coordinatorOf(account: string, workers: QueryWorker[]): Promise<Coordinator> {
  const coordinator = new EmbeddedCoordinator(log);
  for (const w of workers) {
    await coordinator.registerWorker({ endpoint: w.endpoint, workerId: w.endpoint, freeBytes: 1e12, writable: true });
    await coordinator.recordPlacement({ accountId: account, workerId: w.endpoint, endpoint: w.endpoint });
  }
  return coordinator;
}
