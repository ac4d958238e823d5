import { mkdir } from 'node:fs/promises';
import {
  componentLogger,
  errorFields,
  implementService,
  type Logger,
  type RoleContext,
  type RoleHandle,
  type RoleStarter,
  startGrpcServer,
  stopGrpcServer,
  tuneHeapGrowth,
  type WorkerLease,
} from '@strata/common';
import { WorkerServiceService } from '@strata/proto/worker/v1/worker';
import { workerCores } from './cpu-budget.js';
import { Rebalancer } from './drain/rebalancer.js';
import { SegmentMover } from './drain/segment-mover.js';
import { segmentTransferService } from './drain/segment-transfer-service.js';
import { WorkerDrain } from './drain/worker-drain.js';
import { ExecutorSettingsPoller } from './executor-settings-poller.js';
import { widenServerFlowControl } from './grpc-flow-control.js';
import { ingestService } from './ingest/ingest-service.js';
import { PlacementRecorder } from './ingest/placement-recorder.js';
import { segmentService } from './ingest/segment-service.js';
import { queryService } from './query/query-service.js';
import { Replicator } from './replication/replicator.js';
import { FreeSpaceGuard, type StatFreeBytes } from './storage/free-space-guard.js';
import { StorageEngine, type StorageTuning } from './storage/storage-engine.js';
import { workerIdentity } from './storage/worker-identity.js';
import { workerStorageService } from './storage/worker-storage-service.js';
import { StoragePolicyPoller } from './storage-policy-poller.js';
import { workerMetrics } from './worker-metrics.js';

/** A gRPC service the worker serves on its endpoint. */
export interface WorkerServiceEntry {
  definition: Record<string, unknown>;
  implementation: ReturnType<typeof implementService>;
}

/** What a service factory gets: the worker's storage, live executor limits and a logger. */
export interface WorkerServiceDeps {
  storage: StorageEngine;
  /** Records this worker as a holder of an account before its first write is acknowledged. */
  placements: PlacementRecorder;
  /** Cores this worker may use (cpu-budget.ts). */
  cores: number;
  /** Live Service.Search.Executor.* limits (`executorSettings.current()`). */
  executorSettings: ExecutorSettingsPoller;
  /** The storage policy from the master (retention, schema drops). */
  storagePolicy: StoragePolicyPoller;
  /** This worker's identity (worker-identity.ts). */
  workerId: string;
  log: Logger;
  ctx: RoleContext;
}

/**
 * Services of the worker endpoint besides WorkerService. The query engine adds its factory here
 * (one line), so every service shares the one gRPC server and the one storage engine.
 */
export const WORKER_SERVICE_FACTORIES: ((deps: WorkerServiceDeps) => WorkerServiceEntry)[] = [
  ({ storage, placements, log }) => ingestService(storage, placements, log),
  ({ storage, log }) => segmentService(storage, log),
  ({ storage, executorSettings, log, cores, workerId }) => queryService(storage, executorSettings, log, { cores, workerId }),
  ({ storage, storagePolicy, log }) => workerStorageService(storage, storagePolicy, log),
  ({ storage, placements, ctx, log }) => segmentTransferService(storage, placements, ctx.channels, log),
];

/** Test hooks: faster intervals and a simulated file system. Not part of the configuration. */
export interface WorkerTestOptions {
  tuning?: Partial<StorageTuning>;
  freeSpaceIntervalMs?: number;
  statFreeBytes?: StatFreeBytes;
}

/** A running worker role with access to its storage (for in-process tests and the query engine). */
export interface WorkerHandle extends RoleHandle {
  readonly storage: StorageEngine;
  readonly executorSettings: ExecutorSettingsPoller;
  readonly storagePolicy: StoragePolicyPoller;
  /** The endpoint registered with the coordinator (the bound port when the config said 0). */
  readonly endpoint: string;
  /** This worker's identity (worker-identity.ts). */
  readonly workerId: string;
  /** Carries out a drain when one is asked for. */
  readonly drain: WorkerDrain;
}

/** Replaces a :0 port with the bound one. */
function endpointWithPort(configured: string, port: number): string {
  const host = configured.slice(0, configured.lastIndexOf(':'));
  const configuredPort = Number(configured.slice(configured.lastIndexOf(':') + 1));
  return `${host}:${configuredPort === 0 ? port : configuredPort}`;
}

/**
 * The backend role: opens storage under `backend.dataPath`, serves WorkerService, IngestService
 * and SegmentService on `backend.endpoint`, registers with the coordinator (endpoint, free bytes,
 * writable) and keeps the registration current as free space changes.
 */
export async function startWorkerWith(ctx: RoleContext, test: WorkerTestOptions = {}): Promise<WorkerHandle> {
  const log = componentLogger(ctx.log, 'worker');
  tuneHeapGrowth();
  const { dataPath, minimumFreeSpaceBytes } = ctx.config.backend;
  const cores = workerCores(ctx.config.backend.cores);
  await mkdir(dataPath, { recursive: true });
  const startedAt = Date.now();
  const metrics = workerMetrics();

  const guard = new FreeSpaceGuard({
    path: dataPath,
    minimumFreeBytes: minimumFreeSpaceBytes,
    intervalMs: test.freeSpaceIntervalMs,
    statFreeBytes: test.statFreeBytes,
    log: componentLogger(ctx.log, 'free-space'),
  });
  await guard.start();
  // Live Service.Search.Executor.* limits; the query executor reads executorSettings.current().
  const executorSettings = new ExecutorSettingsPoller(
    ctx.coordinator,
    ctx.channels,
    componentLogger(ctx.log, 'executor-settings'),
  );
  let storage: StorageEngine | undefined;
  let storagePolicy: StoragePolicyPoller | undefined;
  let server: Awaited<ReturnType<typeof startGrpcServer>>['server'] | undefined;
  let lease: WorkerLease | undefined;
  try {
    storage = await StorageEngine.open({
      dataPath,
      log: componentLogger(ctx.log, 'storage'),
      guard,
      tuning: { sealAgeMs: ctx.config.backend.sealAgeSeconds * 1000, ...test.tuning },
      cores,
    });
    const opened = storage;
    let endpoint = '';
    const health = {
      definition: WorkerServiceService,
      implementation: implementService(
        WorkerServiceService,
        {
          health: async () => ({
            endpoint,
            freeBytes: guard.freeBytes,
            writable: guard.writable,
            uptimeMs: Date.now() - startedAt,
          }),
        },
        log,
      ),
    };
    const workerId = await workerIdentity(dataPath);
    // A worker written off as lost must not come back: its segments were restored elsewhere from
    // replicas, so its own copies would be read twice.
    if ((await ctx.coordinator.listLost()).includes(workerId))
      throw new Error(
        `worker ${workerId} was written off as lost (strata placements write-off); empty ${dataPath} to start a new worker there`,
      );
    const placements = new PlacementRecorder(ctx.coordinator, componentLogger(ctx.log, 'placement'));
    storagePolicy = new StoragePolicyPoller(ctx.coordinator, ctx.channels, opened, componentLogger(ctx.log, 'storage-policy'));
    const policy = storagePolicy;
    const services = [
      health,
      ...WORKER_SERVICE_FACTORIES.map((f) =>
        f({ storage: opened, placements, cores, executorSettings, storagePolicy: policy, workerId, log, ctx }),
      ),
    ];
    const started = await startGrpcServer(ctx.config.backend.endpoint, services, ctx.identity, (refusal) =>
      log.warn(refusal, 'refused an internal call: the caller lacks the role'),
    );
    server = started.server;
    if (!widenServerFlowControl(server)) log.warn('could not widen the gRPC flow-control windows; large batches arrive slower');
    endpoint = endpointWithPort(ctx.config.backend.advertiseEndpoint ?? ctx.config.backend.endpoint, started.port);

    const publish = (state: { freeBytes: number; writable: boolean }) => {
      metrics.freeBytes.set(state.freeBytes);
      metrics.writable.set(state.writable ? 1 : 0);
    };
    publish(guard.state);
    placements.identify(workerId, endpoint);
    // A drained worker stays out of the cluster: no placements, no registration (it holds nothing).
    const drainRecord = await ctx.coordinator.getDrain(workerId);
    const drained = drainRecord?.phase === 'done';
    let draining = drainRecord !== undefined;
    if (drained) {
      await opened.stopWrites('This worker was drained and takes no writes.');
    } else {
      // Every account already on disk is recorded before gateways can find this worker (data written
      // before placements existed, or a record written off by mistake, is known again).
      for (const accountId of opened.listAccounts()) await placements.ensure(accountId);
      lease = await ctx.coordinator.registerWorker({
        endpoint,
        workerId,
        freeBytes: guard.freeBytes,
        writable: guard.writable && !draining,
        ...(draining ? { draining } : {}),
        scanTimeBounds: true,
      });
    }
    const registered = lease;
    let last = guard.state;
    guard.onChange((state) => {
      publish(state);
      // Publish a flip at once; free-byte drift only when it moved by more than 1 %.
      const drift = Math.abs(state.freeBytes - last.freeBytes) > last.freeBytes * 0.01;
      if (state.writable === last.writable && !drift) return;
      last = state;
      registered
        ?.update({ freeBytes: state.freeBytes, writable: state.writable && !draining })
        .catch((err) => log.warn(errorFields(err), 'could not update the worker registration'));
    });
    let publishedBytes: number | undefined;
    const drain = new WorkerDrain({
      coordinator: ctx.coordinator,
      channels: ctx.channels,
      storage: opened,
      workerId,
      endpoint,
      graceMs: ctx.config.backend.drainGraceSeconds * 1000,
      markDraining: async () => {
        draining = true;
        await registered?.update({ draining: true, writable: false });
      },
      deregister: async () => {
        await registered?.revoke();
      },
      log: componentLogger(ctx.log, 'drain'),
    });
    if (!drained) drain.start();
    const replicator = new Replicator({
      coordinator: ctx.coordinator,
      channels: ctx.channels,
      storage: opened,
      workerId,
      endpoint,
      factor: ctx.config.backend.replicationFactor,
      draining: () => draining,
      log: componentLogger(ctx.log, 'replication'),
      publishSegmentBytes: (bytes) => {
        if (bytes === publishedBytes) return;
        publishedBytes = bytes;
        registered
          ?.update({ segmentBytes: bytes })
          .catch((err) => log.warn(errorFields(err), 'could not update the worker registration'));
      },
    });
    if (!drained) replicator.start();
    const rebalancer = new Rebalancer({
      coordinator: ctx.coordinator,
      storage: opened,
      mover: new SegmentMover({ coordinator: ctx.coordinator, channels: ctx.channels, storage: opened, workerId, endpoint }),
      workerId,
      graceMs: ctx.config.backend.drainGraceSeconds * 1000,
      draining: () => draining,
      log: componentLogger(ctx.log, 'rebalance'),
    });
    if (!drained) rebalancer.start();
    executorSettings.start();
    policy.start();
    log.info({ endpoint, workerId, dataPath, writable: guard.writable, freeBytes: guard.freeBytes }, 'worker started');

    let stopping = false;
    return {
      name: 'backend',
      storage: opened,
      executorSettings,
      storagePolicy: policy,
      endpoint,
      workerId,
      drain,
      readiness: () =>
        stopping
          ? { ready: false, detail: 'stopping' }
          : drained || drain.state?.phase === 'done'
            ? { ready: true, detail: 'drained: holds no data and is out of the cluster' }
            : draining
              ? { ready: true, detail: 'draining' }
              : guard.writable
                ? { ready: true, detail: 'writable' }
                : { ready: true, detail: `not writable: free space under ${minimumFreeSpaceBytes} bytes` },
      stop: async () => {
        if (stopping) return;
        stopping = true;
        guard.stop();
        await drain.stop();
        await replicator.stop();
        await rebalancer.stop();
        await executorSettings.stop();
        await policy.stop();
        await registered?.revoke().catch((err) => log.warn(errorFields(err), 'could not revoke the worker registration'));
        if (server) await stopGrpcServer(server);
        await opened.close();
        log.info({ endpoint }, 'worker stopped');
      },
    };
  } catch (err) {
    guard.stop();
    await executorSettings.stop();
    await storagePolicy?.stop();
    await lease?.revoke().catch(() => undefined);
    if (server) await stopGrpcServer(server, 0);
    await storage?.close().catch(() => undefined);
    throw err;
  }
}

export const startWorker: RoleStarter = (ctx) => startWorkerWith(ctx);
