import { readFileSync } from 'node:fs';
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
  const { endpoints, prefix, leaseTtlSeconds, tls, auth } = config.etcd;
  coordLog.info(
    { endpoints, prefix, leaseTtlSeconds, tls: tls.caFile !== undefined, auth: auth.username !== undefined },
    'using etcd',
  );
  return new EtcdCoordinator(
    {
      endpoints,
      prefix,
      leaseTtlSeconds,
      tls: tls.caFile
        ? {
            ca: readFileSync(tls.caFile),
            cert: tls.certFile ? readFileSync(tls.certFile) : undefined,
            key: tls.keyFile ? readFileSync(tls.keyFile) : undefined,
          }
        : undefined,
      auth: auth.username !== undefined ? { username: auth.username, password: auth.password ?? '' } : undefined,
    },
    coordLog,
  );
}
