import type { ChannelPool, Coordinator, Logger, LoginThrottle, ResolvedConfig } from '@strata/common';
import type { PrincipalLoader } from './auth/principal-loader.js';
import type { TokenService } from './auth/token-service.js';
import type { ClientAddressResolver } from './inflow/client-address.js';
import type { WorkerRouter } from './inflow/worker-router.js';
import type { MasterClient } from './master-client.js';
import type { SchemaCatalogSource } from './query/cluster/schema-catalog.js';
import type { QueryService } from './query/query-service.js';

/** Everything route handlers may use; built once by the gateway role. */
export interface GatewayDeps {
  config: ResolvedConfig;
  log: Logger;
  coordinator: Coordinator;
  channels: ChannelPool;
  master: MasterClient;
  tokens: TokenService;
  principals: PrincipalLoader;
  loginThrottle: LoginThrottle;
  /** Inflow: workers to send batches to, the client address rule, this gateway's host name. */
  inflow: { router: WorkerRouter; addresses: ClientAddressResolver; host: string };
  /** Queries: planning, the fan-out to the workers, the merge database. */
  query: QueryService;
  /** Every account's schema catalog, shared by the query routes and the inflow routes (which report writes). */
  schemas: SchemaCatalogSource;
}
