import { invalid, isGuid, notFound, WEBHOOK_EVENT_TYPES } from '@strata/common';
import { type Webhook, type WebhookDelivery, WebhookServiceService } from '@strata/proto/webhooks/v1/webhooks';
import { z } from 'zod';
import type { RouteContext, RouteDef } from '../http/route.js';

/**
 * Webhook endpoints of an account (docs/alerting.md, "Webhooks"; docs/api.md). Only account
 * admins (and global admins) manage them: a webhook sends the account's incidents to a URL of
 * their choosing. The URL policy (https only, no internal addresses) is enforced by the master,
 * which holds the operator's allow lists and sends the deliveries.
 */

const BASE = '/accounts/:accountId/webhooks';

const webhookBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200),
  url: z.string().trim().min(1, 'url is required').max(2048),
  format: z.enum(['json', 'slack']).default('json'),
  /** Empty or absent: every event type. */
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length).default([]),
  enabled: z.boolean().default(true),
});

const webhookJsonSchema = z.object({
  webhookId: z.string(),
  name: z.string(),
  url: z.string(),
  format: z.string(),
  events: z.array(z.string()),
  enabled: z.boolean(),
  createdByUserId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

const webhookJson = (w: Webhook): z.output<typeof webhookJsonSchema> => ({
  webhookId: w.webhookId,
  name: w.name,
  url: w.url,
  format: w.format,
  events: w.events,
  enabled: w.enabled,
  createdByUserId: w.createdByUserId,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});

const deliveryJsonSchema = z.object({
  deliveryId: z.string(),
  eventType: z.string(),
  createdAt: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'dropped']),
  attempts: z.number(),
  nextAttemptAt: z.string().nullable(),
  lastStatusCode: z.number().nullable(),
  lastError: z.string().nullable(),
  finishedAt: z.string().nullable(),
});

const deliveryJson = (d: WebhookDelivery): z.output<typeof deliveryJsonSchema> => ({
  deliveryId: d.deliveryId,
  eventType: d.eventType,
  createdAt: d.createdAt,
  status: d.status as 'pending',
  attempts: d.attempts,
  nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
  lastStatusCode: d.lastStatusCode || null,
  lastError: d.lastError || null,
  finishedAt: d.finishedAt || null,
});

function ids(rc: RouteContext): { accountId: string; webhookId: string } {
  const accountId = rc.params.accountId!;
  const webhookId = rc.params.webhookId ?? '';
  if (!isGuid(accountId)) throw invalid('The account id must be a GUID.');
  if (rc.params.webhookId !== undefined && !isGuid(webhookId)) throw invalid('The webhook id must be a GUID.');
  return { accountId: accountId.toLowerCase(), webhookId: webhookId.toLowerCase() };
}

export const webhookRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'webhooks.manage',
    summary: "The account's webhook endpoints (secrets are never shown).",
    responseSchema: z.array(webhookJsonSchema),
    async handler(rc) {
      const { webhooks } = await rc.deps.master.service(WebhookServiceService).listWebhooks({ accountId: ids(rc).accountId });
      return { body: webhooks.map(webhookJson) };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:webhookId`,
    operation: 'webhooks.manage',
    summary: 'One webhook endpoint; 404 when none.',
    responseSchema: webhookJsonSchema,
    async handler(rc) {
      const { accountId, webhookId } = ids(rc);
      const { webhook } = await rc.deps.master.service(WebhookServiceService).getWebhook({ accountId, webhookId });
      if (!webhook) throw notFound(`Webhook ${webhookId} does not exist.`);
      return { body: webhookJson(webhook) };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:webhookId`,
    operation: 'webhooks.manage',
    summary:
      'Create or replace a webhook endpoint: { name, url, format: json|slack, events?, enabled? }. 201 with the signing `secret` (shown only now) when created, 200 when replaced (the secret is kept). 400 for a URL the policy refuses.',
    requestSchema: webhookBody,
    responseSchema: webhookJsonSchema.extend({ secret: z.string().optional() }),
    successStatuses: [200, 201],
    async handler(rc) {
      const { accountId, webhookId } = ids(rc);
      const body = await rc.body(webhookBody);
      const res = await rc.deps.master
        .service(WebhookServiceService)
        .putWebhook({ accountId, webhookId, ...body, actorUserId: rc.principal!.userId });
      return {
        status: res.created ? 201 : 200,
        body: { ...webhookJson(res.webhook!), ...(res.created ? { secret: res.secret } : {}) },
      };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:webhookId`,
    operation: 'webhooks.manage',
    summary: 'Delete a webhook endpoint and its delivery log. 204; 404 when none.',
    successStatuses: [204],
    async handler(rc) {
      const { accountId, webhookId } = ids(rc);
      const { deleted } = await rc.deps.master.service(WebhookServiceService).deleteWebhook({ accountId, webhookId });
      if (!deleted) throw notFound(`Webhook ${webhookId} does not exist.`);
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:webhookId/deliveries`,
    operation: 'webhooks.manage',
    summary: "The endpoint's delivery log, newest first (?limit=1..1000, default 100; finished deliveries kept 7 days).",
    responseSchema: z.array(deliveryJsonSchema),
    async handler(rc) {
      const { accountId, webhookId } = ids(rc);
      const limit = Number(rc.koa.query.limit ?? 100);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit must be an integer from 1 to 1000.');
      const service = rc.deps.master.service(WebhookServiceService);
      const { webhook } = await service.getWebhook({ accountId, webhookId });
      if (!webhook) throw notFound(`Webhook ${webhookId} does not exist.`);
      const { deliveries } = await service.listWebhookDeliveries({ accountId, webhookId, limit });
      return { body: deliveries.map(deliveryJson) };
    },
  },
];
