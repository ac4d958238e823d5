import type { WebhookEventType } from '@strata/common';
import type { Incident } from '@strata/proto/incidents/v1/incidents';
import type { SqlExecutor } from '../store/relational-store.js';
import { deliveryRows, endpointRows } from './webhook-repository.js';

/** What a delivery carries (the generic JSON body, and the source of the Slack text). */
export interface WebhookEvent {
  type: WebhookEventType;
  occurredAt: string;
  accountId: string;
  incident?: Incident;
  comment?: { body: string; authorUserId: string };
  alert?: { alertId: string; alertRecordId: string; ruleName: string; dimensions: Record<string, unknown>; incidentId?: string };
}

/**
 * Queues the event for every enabled endpoint of the account that subscribes to it, on the
 * caller's transaction: the change and its deliveries commit together, and delivery happens
 * later, so a save never fails because a receiver is down.
 */
export async function enqueueWebhookEvent(tx: SqlExecutor, event: WebhookEvent): Promise<void> {
  const endpoints = await endpointRows.list(tx, event.accountId);
  let json: string | undefined;
  for (const { webhook } of endpoints) {
    if (!webhook.enabled || (webhook.events.length > 0 && !webhook.events.includes(event.type))) continue;
    json ??= JSON.stringify(event);
    await deliveryRows.insert(tx, {
      accountId: event.accountId,
      webhookId: webhook.webhookId,
      eventType: event.type,
      payloadJson: json,
      now: event.occurredAt,
    });
  }
}
