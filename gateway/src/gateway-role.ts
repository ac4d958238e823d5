import type { Server } from 'node:http';
import { hostname } from 'node:os';
import { componentLogger, LoginThrottle, type RoleHandle, type RoleStarter, tuneHeapGrowth } from '@strata/common';
import { AlertEvaluator } from './alerting/alert-evaluator.js';
import { PrincipalLoader } from './auth/principal-loader.js';
import { TokenService } from './auth/token-service.js';
import type { GatewayDeps } from './gateway-deps.js';
import { buildApp } from './http/app.js';
import { ClientAddressResolver } from './inflow/client-address.js';
import { WorkerRouter } from './inflow/worker-router.js';
import { MasterClient } from './master-client.js';
import { SchemaCatalogSource } from './query/cluster/schema-catalog.js';
import { warmQueryEngine } from './query/engine.js';
import { QueryService } from './query/query-service.js';
import { allRoutes } from './routes.js';

/** A started gateway also reports the port it listens on (port 0 in tests). */
export interface GatewayHandle extends RoleHandle {
  readonly port: number;
}

/**
 * The gateway role: the stateless HTTP API. Finds the master through the coordinator, checks every
 * request's token and permission, and serves the route table.
 */
export const startGateway: RoleStarter = async (ctx): Promise<GatewayHandle> => {
  const log = componentLogger(ctx.log, 'http');
  tuneHeapGrowth();
  const jwtConfig = ctx.config.auth.jwt;
  if (!jwtConfig.signingKey) throw new Error('auth.jwt.signingKey is required by the gateway');
  const master = new MasterClient(ctx.coordinator, ctx.channels);
  master.start();
  const workers = new WorkerRouter(ctx.coordinator, ctx.channels, componentLogger(ctx.log, 'inflow'));
  workers.start();
  // One schema catalog source: queries plan against it, inflow routes report what they wrote.
  const schemas = new SchemaCatalogSource(ctx.coordinator, ctx.channels);
  const deps: GatewayDeps = {
    config: ctx.config,
    log,
    coordinator: ctx.coordinator,
    channels: ctx.channels,
    master,
    tokens: new TokenService({
      signingKey: jwtConfig.signingKey,
      issuer: jwtConfig.issuer,
      audience: jwtConfig.audience,
      sessionLifetimeSeconds: jwtConfig.sessionLifetimeSeconds,
    }),
    principals: new PrincipalLoader(master, ctx.coordinator),
    loginThrottle: new LoginThrottle(),
    inflow: { router: workers, addresses: new ClientAddressResolver(ctx.config.gateway.trustedProxies), host: hostname() },
    schemas,
    query: new QueryService(ctx.coordinator, ctx.channels, schemas),
  };
  // The KQL parser builds its grammar on first use (~2 s): do it before accepting requests.
  const warmMs = await warmQueryEngine();
  log.info({ warmMs: Math.round(warmMs) }, 'query engine warmed');
  let handle: GatewayHandle;
  const app = buildApp(allRoutes(), deps, () => [handle]);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(ctx.config.gateway.port, ctx.config.gateway.host, () => resolve(s));
    s.once('error', reject);
  });
  server.requestTimeout = 5 * 60_000;
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : ctx.config.gateway.port;
  log.info({ host: ctx.config.gateway.host, port }, 'gateway listening');
  // Alert evaluations the master leader hands out run here, through this gateway's query service.
  const evaluator = new AlertEvaluator(master, deps.query, componentLogger(ctx.log, 'alerts'));
  evaluator.start();
  handle = {
    name: 'gateway',
    port,
    readiness: () =>
      master.leaderEndpoint
        ? { ready: true, detail: `master at ${master.leaderEndpoint}` }
        : { ready: false, detail: 'no database leader known' },
    stop: async () => {
      evaluator.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Idle keep-alive connections would hold close() open; in-flight requests finish first.
        server.closeIdleConnections();
      });
      master.stop();
      workers.stop();
      await deps.query.close();
    },
  };
  return handle;
};
