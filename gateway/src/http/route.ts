import type { Context } from 'koa';
import type { z } from 'zod';
import type { Operation } from '../auth/access-policy.js';
import type { Principal } from '../auth/principal.js';
import type { GatewayDeps } from '../gateway-deps.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a handler returns: JSON body (or none) with an optional status and headers. */
export interface HttpResult {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface RouteContext {
  koa: Context;
  /** Path parameters, already URI-decoded. */
  params: Record<string, string>;
  /** Set on every route except `public` ones. */
  principal: Principal | undefined;
  deps: GatewayDeps;
  /** Reads the JSON body (size-limited, gzip-aware, keys matched case-insensitively) and validates it. */
  body<S extends z.ZodType>(schema: S): Promise<z.output<S>>;
  /** Reads the JSON body without a schema; undefined when empty. */
  json(): Promise<unknown>;
}

/**
 * One HTTP route. `operation` names the permission rule the gateway enforces before `handler` runs
 * (see access-policy.ts); `path` uses `:name` parameters; an `:accountId` parameter is the account
 * the operation is checked against.
 */
export interface RouteDef {
  method: HttpMethod;
  path: string;
  operation: Operation;
  summary: string;
  /** Request body schema, for validation and for the OpenAPI document. */
  requestSchema?: z.ZodType;
  /** Schema of the success body, for the OpenAPI document (status: 200, or the one given). */
  responseSchema?: z.ZodType;
  /** Success status codes the route answers, for the OpenAPI document; default [200]. */
  successStatuses?: number[];
  handler(rc: RouteContext): Promise<HttpResult | undefined>;
}
