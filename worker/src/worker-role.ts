import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { componentLogger, implementService, type RoleStarter, startGrpcServer, stopGrpcServer } from '@strata/common';
import { WorkerServiceService } from '@strata/proto/worker/v1/worker';
import { ExecutorSettingsPoller } from './executor-settings-poller.js';

/**
 * The backend role (skeleton): serves WorkerService on `backend.endpoint` and registers with the
 * coordinator under a lease, publishing free bytes and the writable flag. Storage, ingest and query
 * fragments are added by their own modules.
 */
export const startWorker: RoleStarter = async (ctx) => {
  const log = componentLogger(ctx.log, 'worker');
  const { dataPath, minimumFreeSpaceBytes } = ctx.config.backend;
  mkdirSync(dataPath, { recursive: true });
  const startedAt = Date.now();
  const freeBytes = async () => {
    const s = await statfs(dataPath);
    return Number(s.bavail) * Number(s.bsize);
  };
  let free = await freeBytes();
  let endpoint = '';
  const { server, port } = await startGrpcServer(ctx.config.backend.endpoint, [
    {
      definition: WorkerServiceService,
      implementation: implementService(
        WorkerServiceService,
        {
          health: async () => ({
            endpoint,
            freeBytes: free,
            writable: free >= minimumFreeSpaceBytes,
            uptimeMs: Date.now() - startedAt,
          }),
        },
        log,
      ),
    },
  ]);
  const configured = ctx.config.backend.advertiseEndpoint ?? ctx.config.backend.endpoint;
  endpoint = `${configured.slice(0, configured.lastIndexOf(':'))}:${port}`;
  const lease = await ctx.coordinator.registerWorker({ endpoint, freeBytes: free, writable: free >= minimumFreeSpaceBytes });
  const timer = setInterval(async () => {
    free = await freeBytes().catch(() => free);
    await lease.update({ freeBytes: free, writable: free >= minimumFreeSpaceBytes }).catch(() => undefined);
  }, 5_000);
  timer.unref();
  // Live Service.Search.Executor.* limits; the query executor reads executorSettings.current().
  const executorSettings = new ExecutorSettingsPoller(
    ctx.coordinator,
    ctx.channels,
    componentLogger(ctx.log, 'executor-settings'),
  );
  executorSettings.start();
  log.info({ endpoint }, 'worker started');
  return {
    name: 'backend',
    readiness: () => ({ ready: true, detail: free >= minimumFreeSpaceBytes ? 'writable' : 'not writable: low free space' }),
    stop: async () => {
      clearInterval(timer);
      await executorSettings.stop();
      await lease.revoke().catch(() => undefined);
      await stopGrpcServer(server);
    },
  };
};
