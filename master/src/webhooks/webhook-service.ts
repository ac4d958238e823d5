import { invalid, WEBHOOK_EVENT_TYPES } from '@strata/common';
import type { PutWebhookRequest, Webhook } from '@strata/proto/webhooks/v1/webhooks';
import { requireGuid } from '../incidents/incident-model.js';
import type { RelationalStore } from '../store/relational-store.js';
import { deliveryRows, endpointRows } from './webhook-repository.js';
import { checkWebhookUrl, type WebhookPolicy } from './webhook-target.js';

const FORMATS = ['json', 'slack'];

/** Webhook endpoints of an account (the gateway checks who may call; the URL policy is the master's). */
export class WebhookService {
  constructor(
    private readonly store: RelationalStore,
    private readonly policy: WebhookPolicy,
  ) {}

  async list(accountId: string): Promise<Webhook[]> {
    const a = requireGuid(accountId, 'accountId');
    return (await this.store.read((x) => endpointRows.list(x, a))).map((s) => s.webhook);
  }

  async get(accountId: string, webhookId: string): Promise<Webhook | undefined> {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(webhookId, 'webhookId');
    return (await this.store.read((x) => endpointRows.get(x, a, id)))?.webhook;
  }

  async put(req: PutWebhookRequest): Promise<{ webhook: Webhook; created: boolean; secret: string }> {
    const a = requireGuid(req.accountId, 'accountId');
    const id = requireGuid(req.webhookId, 'webhookId');
    if (!req.name.trim()) throw invalid('Webhook name is required.');
    if (!FORMATS.includes(req.format)) throw invalid('Webhook format must be json or slack.');
    const unknown = req.events.filter((e) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(e));
    if (unknown.length) throw invalid(`Unknown webhook event types: ${unknown.join(', ')}.`);
    const url = checkWebhookUrl(req.url, this.policy);
    return this.store.transaction(async (tx) => {
      const existing = await endpointRows.get(tx, a, id);
      const now = new Date().toISOString();
      const webhook: Webhook = {
        accountId: a,
        webhookId: id,
        name: req.name.trim(),
        url: url.toString(),
        format: req.format,
        events: [...new Set(req.events)],
        enabled: req.enabled,
        createdByUserId: existing?.webhook.createdByUserId ?? req.actorUserId.toLowerCase(),
        createdAt: existing?.webhook.createdAt ?? now,
        updatedAt: now,
      };
      const secret = await endpointRows.upsert(tx, webhook, existing);
      return { webhook, created: !existing, secret: existing ? '' : secret };
    });
  }

  async delete(accountId: string, webhookId: string): Promise<boolean> {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(webhookId, 'webhookId');
    return this.store.transaction(async (tx) => {
      if (!(await endpointRows.get(tx, a, id))) return false;
      await endpointRows.delete(tx, a, id);
      return true;
    });
  }

  async deliveries(accountId: string, webhookId: string, limit: number) {
    const a = requireGuid(accountId, 'accountId');
    const id = requireGuid(webhookId, 'webhookId');
    return this.store.read((x) => deliveryRows.list(x, a, id, Math.min(Math.max(limit || 100, 1), 1000)));
  }
}
