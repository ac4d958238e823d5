import {
  ChannelPool,
  componentLogger,
  createCoordinator,
  createLogger,
  errorFields,
  loadInternalIdentity,
  type ResolvedConfig,
  type RoleContext,
  type RoleHandle,
  type RoleName,
  type RoleStarter,
} from '@strata/common';
import { startGateway, warmQueryEngine } from '@strata/gateway';
import { startMaster } from '@strata/master';
import { startWorker } from '@strata/worker';
import { startOpsServer } from './ops-server.js';

export interface RunningProcess {
  roles: RoleHandle[];
  /** Port of the ops server (healthz/readyz/metrics), when enabled. */
  opsPort?: number;
  /** Stops roles in reverse start order, then the coordinator and channels. */
  stop(): Promise<void>;
}

/**
 * Starts every role the config enables, in dependency order (database, backend, gateway), in one
 * process. Roles still talk to each other only through gRPC.
 */
export async function startProcess(config: ResolvedConfig): Promise<RunningProcess> {
  const log = createLogger('process', { level: config.log.level });
  const coordinator = await createCoordinator(config, componentLogger(log, 'coordinator'));
  const enabled: RoleName[] = [];
  if (config.database.enable) enabled.push('database');
  if (config.backend.enable) enabled.push('backend');
  if (config.gateway.enable) enabled.push('gateway');
  const identity = loadInternalIdentity(config.internalTls, enabled);
  await identity.ready();
  log.info({ internalTls: identity.source }, 'internal gRPC traffic uses mutual TLS');
  const channels = new ChannelPool(identity);
  const roles: RoleHandle[] = [];
  const plan: [boolean, string, RoleStarter][] = [
    [config.database.enable, 'database', startMaster],
    [config.backend.enable, 'backend', startWorker],
    [config.gateway.enable, 'gateway', startGateway],
  ];
  const stopAll = async () => {
    for (const role of [...roles].reverse()) {
      await role.stop().catch((err) => log.error({ role: role.name, ...errorFields(err) }, 'role failed to stop cleanly'));
    }
    roles.length = 0;
    channels.close();
    await coordinator.close().catch(() => undefined);
  };
  let opsServer: Awaited<ReturnType<typeof startOpsServer>> | undefined;
  try {
    // The KQL parser's warm-up blocks the event loop for 1-2 s. Done after the database role had
    // been elected, it starved the lease keep-alives past 2/3 of the TTL and demoted the new
    // leader at every start of a process with both roles (etcd); so it goes first.
    if (config.gateway.enable && config.database.enable) await warmQueryEngine();
    for (const [enabled, name, start] of plan) {
      if (!enabled) continue;
      const ctx: RoleContext = { config, log: createLogger(name, { level: config.log.level }), coordinator, channels, identity };
      roles.push(await start(ctx));
    }
    if (config.ops.enable) opsServer = await startOpsServer(config.ops.host, config.ops.port, () => roles);
  } catch (err) {
    await stopAll();
    throw err;
  }
  log.info({ roles: roles.map((r) => r.name), opsPort: opsServer?.port }, 'strata process started');
  return {
    roles,
    opsPort: opsServer?.port,
    stop: async () => {
      opsServer?.server.close();
      await stopAll();
      log.info('strata process stopped');
    },
  };
}
