export { ACCESS_POLICY, isAllowed, type Operation } from './auth/access-policy.js';
export { type GatewayHandle, startGateway } from './gateway-role.js';
export type { HttpResult, RouteContext, RouteDef } from './http/route.js';
export { distributedRunner, mergeStreams } from './query/cluster/distributed-runner.js';
export { mergeSchemas, SchemaCatalogSource } from './query/cluster/schema-catalog.js';
export {
  bindQuery,
  DEFAULT_MAX_ROWS,
  type ExecuteOptions,
  executePlan,
  type FragmentRunner,
  type FragmentSpec,
  MergeDatabase,
  type PlanOptions,
  planQuery,
  type QueryPlan,
  type QueryResult,
  warmQueryEngine,
} from './query/engine.js';
export { parseQuery } from './query/parse-info.js';
export { queryRoutes } from './query/query-routes.js';
export type { CatalogTable, KqlType, SchemaCatalog } from './query/types.js';
export { allRoutes } from './routes.js';
