import { agentAdminRoutes } from './agents/agent-admin-routes.js';
import { agentRefreshRoutes } from './agents/agent-refresh-route.js';
import { alertRuleRoutes } from './alerting/alert-rule-routes.js';
import { authRoutes } from './auth/auth-routes.js';
import { clusterRoutes } from './cluster/worker-routes.js';
import { accountRoutes } from './directory/account-routes.js';
import { memberRoutes } from './directory/member-routes.js';
import { userRoutes } from './directory/user-routes.js';
import { openApiDocument } from './http/openapi.js';
import type { RouteDef } from './http/route.js';
import { alertRoutes } from './incidents/alert-routes.js';
import { groupRoutes } from './incidents/group-routes.js';
import { incidentRoutes } from './incidents/incident-routes.js';
import { inflowRoutes } from './inflow/inflow-routes.js';
import { queryRoutes } from './query/query-routes.js';
import { savedQueryRoutes } from './saved-queries/saved-query-routes.js';
import { settingsRoutes } from './settings/settings-routes.js';
import { lifecycleRoutes } from './storage/lifecycle-routes.js';
import { webhookRoutes } from './webhooks/webhook-routes.js';

/**
 * Every HTTP route of the gateway. Each area exports its own list; add it here. The access test
 * walks this table against every role, so a route without a rule cannot slip in.
 */
export function allRoutes(): RouteDef[] {
  const routes: RouteDef[] = [
    ...authRoutes,
    ...userRoutes,
    ...accountRoutes,
    ...memberRoutes,
    ...settingsRoutes,
    ...incidentRoutes,
    ...alertRoutes,
    ...alertRuleRoutes,
    ...groupRoutes,
    ...inflowRoutes,
    ...queryRoutes,
    ...savedQueryRoutes,
    ...agentRefreshRoutes,
    ...agentAdminRoutes,
    ...lifecycleRoutes,
    ...webhookRoutes,
    ...clusterRoutes,
  ];
  routes.push({
    method: 'GET',
    path: '/openapi.json',
    operation: 'public',
    summary: 'This API as an OpenAPI 3.1 document.',
    async handler() {
      return { body: openApiDocument(routes) };
    },
  });
  return routes;
}
