export { ACCESS_POLICY, isAllowed, type Operation } from './auth/access-policy.js';
export { type GatewayHandle, startGateway } from './gateway-role.js';
export type { HttpResult, RouteContext, RouteDef } from './http/route.js';
export { allRoutes } from './routes.js';
