import { guidSchema as guid, invalid, StrataError } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';
import { isAllowed } from './access-policy.js';
import { isGlobalAdmin, type Principal } from './principal.js';
import type { TokenScope } from './token-scope.js';

const signInSchema = z.object({ username: z.string().min(1), password: z.string().min(1) });

const schemaPattern = z.object({
  schema: z
    .string()
    .min(1)
    .regex(/^(\*|[A-Za-z0-9._-]+\*?)$/, 'must be *, a schema name, or a schema-name prefix ending in *'),
});

/** Body of POST /auth/pat-token (docs/api.md, Authentication). */
export const longLivedTokenSchema = z.object({
  expiration: z.string().datetime({ offset: true }).nullable(),
  accounts: z
    .array(
      z.object({
        accountId: guid,
        inflow: z.object({ schemas: z.array(schemaPattern) }),
        query: z
          .object({
            default: z.object({ queryTimeoutSeconds: z.number().positive().nullable() }).optional(),
            schemas: z.array(schemaPattern).default([]),
          })
          .optional(),
      }),
    )
    .min(1),
});

const mustBeSession = (p: Principal | undefined) => {
  if (p?.tokenType !== 'session' || p.scope)
    throw new StrataError('forbidden', 'A long-lived token can only be created with a session token.');
  return p;
};

export const authRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/auth/token',
    operation: 'public',
    summary: 'Sign in with user name and password; returns a session token.',
    requestSchema: signInSchema,
    async handler(rc) {
      const { username, password } = await rc.body(signInSchema);
      rc.deps.loginThrottle.check(username);
      const result = await rc.deps.master.service(DirectoryServiceService).verifyPassword({ userName: username, password });
      if (!result.ok || !result.user) {
        rc.deps.loginThrottle.recordFailure(username);
        throw new StrataError('unauthenticated', 'Invalid user name or password.');
      }
      rc.deps.loginThrottle.recordSuccess(username);
      return { body: { token: rc.deps.tokens.issueSession(result.user.userId), userId: result.user.userId } };
    },
  },
  {
    method: 'POST',
    path: '/auth/pat-token',
    operation: 'authenticated',
    summary:
      'Create a long-lived scoped token (body: expiration, accounts). With an empty body and a long-lived token as Bearer, exchange it for a session token carrying the same scope.',
    requestSchema: longLivedTokenSchema,
    async handler(rc) {
      const raw = await rc.json();
      const principal = rc.principal!;
      if (raw === undefined || (typeof raw === 'object' && raw !== null && Object.keys(raw).length === 0)) {
        // Compatible exchange (logsh): the session keeps the long-lived token's scope and expiry.
        if (principal.tokenType !== 'pat') throw invalid('Send a token request body, or a long-lived token to exchange.');
        const claims = rc.deps.tokens.verify(/^Bearer\s+(\S+)/i.exec(rc.koa.get('authorization'))![1]!);
        return {
          body: { token: rc.deps.tokens.issueSession(principal.userId, { scope: principal.scope, notAfterSeconds: claims.exp }) },
        };
      }
      const creator = mustBeSession(principal);
      const body = await rc.body(longLivedTokenSchema);
      const expiresAt = body.expiration === null ? null : new Date(body.expiration);
      if (expiresAt && expiresAt.getTime() <= Date.now())
        throw invalid('expiration must be in the future, or null for a token that never expires.');
      // A token never grants more than its creator holds now.
      for (const a of body.accounts) {
        if (a.inflow.schemas.length > 0 && !isAllowed(creator, 'inflow.push', a.accountId))
          throw new StrataError('forbidden', `No permission to grant inflow on account ${a.accountId}.`);
        if ((a.query?.schemas.length ?? 0) > 0 && !isAllowed(creator, 'query.run', a.accountId))
          throw new StrataError('forbidden', `No permission to grant query on account ${a.accountId}.`);
      }
      const scope: TokenScope = {
        accounts: body.accounts.map((a) => ({
          accountId: a.accountId,
          inflow: { schemas: a.inflow.schemas.map((s) => s.schema) },
          query: a.query
            ? { queryTimeoutSeconds: a.query.default?.queryTimeoutSeconds ?? null, schemas: a.query.schemas.map((s) => s.schema) }
            : undefined,
        })),
      };
      return { body: { token: rc.deps.tokens.issueLongLived(creator.userId, scope, expiresAt) } };
    },
  },
  {
    method: 'GET',
    path: '/auth/oauth',
    operation: 'public',
    summary: 'OAuth device-flow settings for clients; 204 because OAuth is not configured.',
    async handler() {
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: '/whoami',
    operation: 'authenticated',
    summary: 'The signed-in user.',
    responseSchema: z.object({
      userId: z.string(),
      userName: z.string(),
      firstName: z.string(),
      lastName: z.string(),
      nickName: z.string(),
      email: z.string(),
    }),
    async handler(rc) {
      const { user } = await rc.deps.master.service(DirectoryServiceService).getUser({ userId: rc.principal!.userId });
      if (!user) throw new StrataError('unauthenticated', 'The token is invalid or expired.');
      return {
        body: {
          userId: user.userId,
          userName: user.userName,
          firstName: user.firstName,
          lastName: user.lastName,
          nickName: user.userName,
          email: user.email,
        },
      };
    },
  },
  {
    method: 'GET',
    path: '/users/:userId/accounts',
    operation: 'authenticated',
    summary:
      "The accounts a user is a member of, with the permissions held on each (possibly none); `allIfAdmin=true` lists every account for a global admin. Only one's own, unless global admin.",
    responseSchema: z.array(z.object({ accountId: z.string(), accountName: z.string(), permissions: z.array(z.string()) })),
    async handler(rc) {
      const principal = rc.principal!;
      const userId = rc.params.userId!.toLowerCase();
      const admin = isGlobalAdmin(principal) && !principal.scope;
      if (userId !== principal.userId.toLowerCase() && !admin) throw new StrataError('forbidden', 'No permission.');
      const directory = rc.deps.master.service(DirectoryServiceService);
      const perms = await directory.listUserPermissions({ userId });
      const out = perms.accounts.map((a) => ({ accountId: a.accountId, accountName: a.accountName, permissions: a.permissions }));
      const allIfAdmin = String(rc.koa.query.allIfAdmin ?? '').toLowerCase() === 'true';
      if (allIfAdmin && admin) {
        const { accounts } = await directory.listAccounts({});
        const seen = new Set(out.map((a) => a.accountId));
        for (const a of accounts)
          if (!seen.has(a.accountId)) out.push({ accountId: a.accountId, accountName: a.accountName, permissions: [] });
      }
      out.sort((a, b) => a.accountName.localeCompare(b.accountName));
      return { body: out };
    },
  },
  {
    method: 'GET',
    path: '/',
    operation: 'public',
    summary: 'Root: answers 200 so agent health checks of the backend URL succeed.',
    async handler() {
      return { body: { service: 'strata', status: 'ok' } };
    },
  },
];
