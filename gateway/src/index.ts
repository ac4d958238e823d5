/**
 * The gateway role's public API: starting the role, the route table and access policy (checked
 * route by route in the cross-role tests), and the query engine pieces that cross-role tests and
 * benchmarks run in-process against real workers.
 */

export { evaluateRule } from './alerting/alert-evaluation.js';
export { isAllowed, type Operation } from './auth/access-policy.js';
export { PrincipalLoader } from './auth/principal-loader.js';
export { type GatewayHandle, startGateway } from './gateway-role.js';
export { firstForKey } from './inflow/key-ranking.js';
export { MasterClient } from './master-client.js';
export { distributedRunner } from './query/cluster/distributed-runner.js';
export { SchemaCatalogSource } from './query/cluster/schema-catalog.js';
export {
  type ExecuteOptions,
  executePlan,
  type FragmentRunner,
  MergeDatabase,
  type PlanOptions,
  planQuery,
  type QueryPlan,
  type QueryResult,
  warmQueryEngine,
} from './query/engine.js';
export { QueryCoverage } from './query/query-coverage.js';
export { QueryService } from './query/query-service.js';
export type { SchemaCatalog } from './query/types.js';
export { allRoutes } from './routes.js';
