import { randomUUID } from 'node:crypto';
import { Router } from '@koa/router';
import { errorFields, opsResponse, type RoleHandle, StrataError } from '@strata/common';
import Koa from 'koa';
import { isAllowed } from '../auth/access-policy.js';
import type { Principal } from '../auth/principal.js';
import type { GatewayDeps } from '../gateway-deps.js';
import { errorBody, errorResponse } from './error-body.js';
import { readJsonBody, validateBody } from './request-body.js';
import type { RouteContext, RouteDef } from './route.js';

const BEARER = /^Bearer\s+(\S+)\s*$/i;

async function authenticate(ctx: Koa.Context, deps: GatewayDeps): Promise<Principal> {
  const header = ctx.get('authorization');
  const match = BEARER.exec(header);
  if (!match) throw new StrataError('unauthenticated', 'Authentication required: send Authorization: Bearer <token>.');
  const claims = deps.tokens.verify(match[1]!);
  return deps.principals.load(claims);
}

/**
 * Builds the gateway's Koa application from the route table: request ids, the standard error body
 * for every failure, authentication and the permission check of each route's operation, then the
 * handler. Unknown paths answer 404 and known paths with another method 405, both in the standard
 * error body.
 */
export function buildApp(routes: RouteDef[], deps: GatewayDeps, roles: () => RoleHandle[]): Koa {
  const app = new Koa({ proxy: false });
  const log = deps.log;

  app.use(async (ctx, next) => {
    const requestId = randomUUID();
    ctx.set('x-request-id', requestId);
    const started = performance.now();
    try {
      await next();
    } catch (err) {
      const { status, body, retryAfterSeconds, internal } = errorResponse(err);
      if (internal) log.error({ requestId, method: ctx.method, path: ctx.path, ...errorFields(err) }, 'request failed');
      ctx.status = status;
      ctx.body = body;
      if (retryAfterSeconds !== undefined) ctx.set('retry-after', String(retryAfterSeconds));
      if (status === 401) ctx.set('www-authenticate', 'Bearer');
    } finally {
      log.debug(
        { requestId, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - started) },
        'request',
      );
    }
  });

  // Health endpoints on the API port too (Kubernetes probes of the gateway use them). Not
  // /metrics: it tells anyone who can reach the public port the workers' limits, query and
  // ingest volumes and error rates; it is served on the ops port only (deploy/src/ops-server.ts).
  app.use(async (ctx, next) => {
    if (ctx.method === 'GET' && (ctx.path === '/healthz' || ctx.path === '/readyz')) {
      const r = await opsResponse(ctx.path, roles);
      if (r) {
        ctx.status = r.status;
        ctx.type = r.contentType;
        ctx.body = r.body;
        return;
      }
    }
    await next();
  });

  const router = new Router();
  for (const route of routes) {
    router.register(route.path, [route.method], async (ctx: Koa.Context) => {
      const params = (ctx as unknown as { params: Record<string, string> }).params ?? {};
      const principal = route.operation === 'public' ? undefined : await authenticate(ctx, deps);
      if (!isAllowed(principal, route.operation, params.accountId)) throw new StrataError('forbidden', 'No permission.');
      const limit = deps.config.gateway.maxBodyBytes;
      // The request stream can be read once; both accessors share the parsed body.
      let parsed: Promise<unknown> | undefined;
      const json = () => {
        parsed ??= readJsonBody(ctx, limit);
        return parsed;
      };
      const rc: RouteContext = {
        koa: ctx,
        params,
        principal,
        deps,
        body: async (schema) => validateBody(await json(), schema),
        json,
      };
      const result = await route.handler(rc);
      if (result) {
        for (const [k, v] of Object.entries(result.headers ?? {})) ctx.set(k, v);
        ctx.status = result.status ?? 200;
        if (result.body !== undefined) ctx.body = result.body;
        else if (ctx.status === 200) ctx.body = '';
      }
    });
  }
  app.use(router.routes());
  // Reached only when no route took the request: 405 when the path exists with other methods.
  app.use(async (ctx) => {
    const match = router.match(ctx.path, ctx.method);
    if (match.path.length > 0) {
      ctx.status = 405;
      ctx.body = errorBody(`Method ${ctx.method} is not allowed on ${ctx.path}.`);
    } else {
      ctx.status = 404;
      ctx.body = errorBody(`No route for ${ctx.method} ${ctx.path}.`);
    }
  });
  return app;
}
