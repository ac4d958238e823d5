import { invalid, isGuid, StrataError } from '@strata/common';
import { AgentServiceService, RefreshOutcome } from '@strata/proto/agents/v1/agents';
import { z } from 'zod';
import { errorBody } from '../http/error-body.js';
import type { RouteDef } from '../http/route.js';

/**
 * `POST /agents/{accountId}/collector-client/refresh`, exactly as the Logship collection agent
 * calls it (compatibility reference §1.8): header `x-ls-agent-deviceid`, Bearer = the configured
 * registration token or the stored refresh token, PascalCase body. Answers:
 * - 200 `{ refreshToken, accessToken, expiresUtc }` for an approved device (the refresh token
 *   rotates: the one presented stops working);
 * - 401 with `refreshToken` in the error body while the device waits for approval (the agent stores
 *   it and asks again in 15 s);
 * - 401 without one for anything else (unknown, expired or rotated token; revoked device).
 * Public in the access policy: the registration or refresh token is the credential, checked here.
 */

/** Access tokens live an hour; the agent refreshes at half-life, so every 30 minutes. */
export const AGENT_ACCESS_TOKEN_SECONDS = 3600;
const DEVICE_ID = /^[A-Za-z0-9._:-]{1,256}$/;
const BEARER = /^Bearer\s+(\S+)\s*$/i;

const refreshBody = z.object({
  name: z.string().max(256).default(''),
  hostName: z.string().max(256).default(''),
  machineIdentifier: z.string().max(256).optional(),
  attributes: z
    .array(z.object({ key: z.string().max(256), value: z.string().max(1024).nullish() }))
    .max(64)
    .default([]),
});

const refreshAnswer = z.object({ refreshToken: z.string(), accessToken: z.string(), expiresUtc: z.string() });

export const agentRefreshRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/agents/:accountId/collector-client/refresh',
    operation: 'public',
    summary:
      'Collection agent sign-in (Logship agent protocol): header x-ls-agent-deviceid, Bearer = a registration token (an account admin creates it) or the refresh token from the last answer, body { Name, HostName, MachineIdentifier, Attributes: [{ Key, Value }] }. 200 { refreshToken, accessToken (JWT, inflow on this account, 1 h), expiresUtc } once an account admin approved the device; 401 with refreshToken while it waits for approval; 401 without for anything else.',
    requestSchema: refreshBody,
    responseSchema: refreshAnswer,
    async handler(rc) {
      const accountId = rc.params.accountId!;
      if (!isGuid(accountId)) throw invalid('The account id must be a GUID.');
      const deviceId = rc.koa.get('x-ls-agent-deviceid').trim();
      if (!DEVICE_ID.test(deviceId))
        throw invalid("The header x-ls-agent-deviceid is required: 1–256 letters, digits, '.', '_', ':' or '-'.");
      const body = (await rc.json()) === undefined ? refreshBody.parse({}) : await rc.body(refreshBody);
      if (body.machineIdentifier && body.machineIdentifier !== deviceId)
        throw invalid('MachineIdentifier must equal the x-ls-agent-deviceid header.');
      const presented = BEARER.exec(rc.koa.get('authorization'))?.[1] ?? '';
      if (!presented)
        throw new StrataError(
          'unauthenticated',
          'Send a registration token (or the refresh token of the last answer) as Bearer.',
        );
      const res = await rc.deps.master.service(AgentServiceService).refresh({
        accountId: accountId.toLowerCase(),
        deviceId,
        presentedToken: presented,
        name: body.name,
        hostName: body.hostName,
        attributes: body.attributes.map((a) => ({ key: a.key, value: a.value ?? '' })),
      });
      if (res.outcome === RefreshOutcome.REFRESH_OUTCOME_APPROVED) {
        const { token, expiresAt } = rc.deps.tokens.issueAgentAccess(
          { accountId: accountId.toLowerCase(), deviceId },
          AGENT_ACCESS_TOKEN_SECONDS,
        );
        return { body: { refreshToken: res.refreshToken, accessToken: token, expiresUtc: expiresAt.toISOString() } };
      }
      if (res.outcome === RefreshOutcome.REFRESH_OUTCOME_PENDING) {
        return {
          status: 401,
          headers: { 'www-authenticate': 'Bearer' },
          body: {
            ...errorBody(`Device ${deviceId} is waiting for approval by an account admin.`),
            refreshToken: res.refreshToken,
            deviceId,
          },
        };
      }
      throw new StrataError('unauthenticated', 'The registration or refresh token is invalid, expired or no longer current.');
    },
  },
];
