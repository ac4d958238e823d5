import type { ResolvedConfig } from '../config/load.js';
import { componentLogger, type Logger } from '../logging.js';
import type { Coordinator } from './coordinator.js';
import { EmbeddedCoordinator } from './embedded.js';
import { EtcdCoordinator } from './etcd.js';

/**
 * The coordinator the configuration asks for: embedded (one process, nothing to install) when
 * `etcd.endpoints` is empty, otherwise etcd.
 */
export async function createCoordinator(config: ResolvedConfig, log: Logger): Promise<Coordinator> {
  const coordLog = componentLogger(log, 'coordinator');
  if (config.etcd.endpoints.length === 0) {
    coordLog.info('using the embedded coordinator (etcd.endpoints is empty)');
    return new EmbeddedCoordinator(coordLog);
  }
  const { endpoints, prefix, leaseTtlSeconds } = config.etcd;
  coordLog.info({ endpoints, prefix, leaseTtlSeconds }, 'using etcd');
  return new EtcdCoordinator({ endpoints, prefix, leaseTtlSeconds }, coordLog);
}
