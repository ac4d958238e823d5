import { invalid, isGuid, notFound } from '@strata/common';
import { AgentServiceService, type Device, type RegistrationToken } from '@strata/proto/agents/v1/agents';
import { z } from 'zod';
import type { RouteContext, RouteDef } from '../http/route.js';

/**
 * What an account admin does for collection agents (docs/operations.md "Agent onboarding"):
 * create registration tokens with an expiry (the secret is shown once), list and delete them; list
 * the devices that registered, approve them, and revoke them (DELETE: the refresh token and any
 * access token stop working; the device may register again and then waits for approval).
 */

const TOKENS = '/accounts/:accountId/agent-registration-tokens';
const DEVICES = '/accounts/:accountId/agents';
/** A registration token lives at most a year. */
const MAX_TOKEN_LIFETIME_MS = 366 * 86_400_000;

const tokenBody = z.object({
  description: z.string().max(200).default(''),
  expiresAt: z.string().datetime({ offset: true }).describe('required, in the future, at most a year ahead'),
});

const tokenJsonSchema = z.object({
  tokenId: z.string(),
  description: z.string(),
  createdByUserId: z.string(),
  createdAt: z.string(),
  expiresAt: z.string(),
});

const deviceJsonSchema = z.object({
  deviceId: z.string(),
  name: z.string(),
  hostName: z.string(),
  attributes: z.array(z.object({ key: z.string(), value: z.string() })),
  state: z.enum(['pending', 'approved']),
  registrationTokenId: z.string(),
  createdAt: z.string(),
  approvedAt: z.string().nullable(),
  approvedByUserId: z.string().nullable(),
  lastSeenAt: z.string(),
});

const tokenJson = (t: RegistrationToken): z.output<typeof tokenJsonSchema> => ({
  tokenId: t.tokenId,
  description: t.description,
  createdByUserId: t.createdByUserId,
  createdAt: t.createdAt,
  expiresAt: t.expiresAt,
});

const deviceJson = (d: Device): z.output<typeof deviceJsonSchema> => ({
  deviceId: d.deviceId,
  name: d.name,
  hostName: d.hostName,
  attributes: d.attributes.map((a) => ({ key: a.key, value: a.value })),
  state: d.state === 'approved' ? 'approved' : 'pending',
  registrationTokenId: d.registrationTokenId,
  createdAt: d.createdAt,
  approvedAt: d.approvedAt || null,
  approvedByUserId: d.approvedByUserId || null,
  lastSeenAt: d.lastSeenAt,
});

function accountOf(rc: RouteContext): string {
  const id = rc.params.accountId!;
  if (!isGuid(id)) throw invalid('The account id must be a GUID.');
  return id.toLowerCase();
}

export const agentAdminRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: TOKENS,
    operation: 'agents.manage',
    summary:
      'Create an agent registration token: { description?, expiresAt } (future, at most a year ahead) → 201 with the token metadata and `token`, the secret, shown only in this answer (account admin).',
    requestSchema: tokenBody,
    responseSchema: tokenJsonSchema.extend({ token: z.string() }),
    successStatuses: [201],
    async handler(rc) {
      const accountId = accountOf(rc);
      const body = await rc.body(tokenBody);
      const expires = new Date(body.expiresAt);
      if (expires.getTime() <= Date.now()) throw invalid('expiresAt must be in the future.');
      if (expires.getTime() - Date.now() > MAX_TOKEN_LIFETIME_MS) throw invalid('expiresAt must be at most a year ahead.');
      const res = await rc.deps.master.service(AgentServiceService).createRegistrationToken({
        accountId,
        description: body.description,
        createdByUserId: rc.principal!.userId,
        expiresAt: expires.toISOString(),
      });
      return { status: 201, body: { ...tokenJson(res.token!), token: res.secret } };
    },
  },
  {
    method: 'GET',
    path: TOKENS,
    operation: 'agents.manage',
    summary: "The account's agent registration tokens, without their secrets (account admin).",
    responseSchema: z.array(tokenJsonSchema),
    async handler(rc) {
      const { tokens } = await rc.deps.master.service(AgentServiceService).listRegistrationTokens({ accountId: accountOf(rc) });
      return { body: tokens.map(tokenJson) };
    },
  },
  {
    method: 'DELETE',
    path: `${TOKENS}/:tokenId`,
    operation: 'agents.manage',
    summary: 'Delete a registration token: no new device can register with it; registered devices stay (account admin). 204.',
    successStatuses: [204],
    async handler(rc) {
      const accountId = accountOf(rc);
      const tokenId = rc.params.tokenId!;
      if (!isGuid(tokenId)) throw invalid('The token id must be a GUID.');
      const { deleted } = await rc.deps.master.service(AgentServiceService).deleteRegistrationToken({ accountId, tokenId });
      if (!deleted) throw notFound(`Registration token ${tokenId.toLowerCase()} does not exist.`);
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: DEVICES,
    operation: 'agents.manage',
    summary: 'Agent devices that registered with the account, pending or approved (account admin).',
    responseSchema: z.array(deviceJsonSchema),
    async handler(rc) {
      const { devices } = await rc.deps.master.service(AgentServiceService).listDevices({ accountId: accountOf(rc) });
      return { body: devices.map(deviceJson) };
    },
  },
  {
    method: 'PUT',
    path: `${DEVICES}/:deviceId/approval`,
    operation: 'agents.manage',
    summary: 'Approve a registered device: its next refresh gets an access token (account admin). 200 with the device.',
    responseSchema: deviceJsonSchema,
    async handler(rc) {
      const res = await rc.deps.master.service(AgentServiceService).approveDevice({
        accountId: accountOf(rc),
        deviceId: rc.params.deviceId!,
        approvedByUserId: rc.principal!.userId,
      });
      return { body: deviceJson(res.device!) };
    },
  },
  {
    method: 'DELETE',
    path: `${DEVICES}/:deviceId`,
    operation: 'agents.manage',
    summary:
      'Revoke a device: its refresh token stops working at once and its access token within 2 s; registering again starts pending (account admin). 204.',
    successStatuses: [204],
    async handler(rc) {
      const deviceId = rc.params.deviceId!;
      const { deleted } = await rc.deps.master.service(AgentServiceService).deleteDevice({ accountId: accountOf(rc), deviceId });
      if (!deleted) throw notFound(`Agent device ${deviceId} is not registered in this account.`);
      return { status: 204 };
    },
  },
];
