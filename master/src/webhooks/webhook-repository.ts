import { randomBytes, randomUUID } from 'node:crypto';
import type { Webhook, WebhookDelivery } from '@strata/proto/webhooks/v1/webhooks';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

/** SQL of webhook endpoints and their delivery outbox (migration 9). */

interface EndpointRow {
  account_id: string;
  webhook_id: string;
  name: string;
  url: string;
  format: string;
  events_json: string;
  enabled: boolean;
  secret: string;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
  [k: string]: unknown;
}

export interface StoredWebhook {
  webhook: Webhook;
  secret: string;
}

const toStored = (r: EndpointRow): StoredWebhook => ({
  webhook: {
    accountId: r.account_id,
    webhookId: r.webhook_id,
    name: r.name,
    url: r.url,
    format: r.format,
    events: JSON.parse(r.events_json) as string[],
    enabled: Boolean(r.enabled),
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  },
  secret: r.secret,
});

export const endpointRows = {
  async list(x: SqlExecutor, accountId: string): Promise<StoredWebhook[]> {
    const rows = await x.all<EndpointRow>(
      'SELECT * FROM webhook_endpoints WHERE account_id = $1 ORDER BY created_at, webhook_id',
      [accountId],
    );
    return rows.map(toStored);
  },

  async get(x: SqlExecutor, accountId: string, webhookId: string): Promise<StoredWebhook | undefined> {
    const row = await x.one<EndpointRow>('SELECT * FROM webhook_endpoints WHERE account_id = $1 AND webhook_id = $2', [
      accountId,
      webhookId,
    ]);
    return row && toStored(row);
  },

  /** Inserts with a new signing secret (32 random bytes, hex), or updates keeping the secret. */
  async upsert(x: SqlExecutor, w: Webhook, existing: StoredWebhook | undefined): Promise<string> {
    const secret = existing?.secret ?? randomBytes(32).toString('hex');
    await x.run('INSERT OR REPLACE INTO webhook_endpoints VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)', [
      w.accountId,
      w.webhookId,
      w.name,
      w.url,
      w.format,
      JSON.stringify(w.events),
      w.enabled,
      secret,
      w.createdByUserId,
      w.createdAt,
      w.updatedAt,
    ]);
    return secret;
  },

  async delete(x: SqlExecutor, accountId: string, webhookId: string): Promise<void> {
    await x.run('DELETE FROM webhook_outbox WHERE account_id = $1 AND webhook_id = $2', [accountId, webhookId]);
    await x.run('DELETE FROM webhook_endpoints WHERE account_id = $1 AND webhook_id = $2', [accountId, webhookId]);
  },
};

/** One queued delivery as the sender sees it. */
export interface DueDelivery {
  deliveryId: string;
  accountId: string;
  webhookId: string;
  eventType: string;
  payloadJson: string;
  createdAt: string;
  attempts: number;
}

interface DeliveryRow {
  delivery_id: string;
  account_id: string;
  webhook_id: string;
  event_type: string;
  payload_json: string;
  created_at: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  last_status_code: number | null;
  last_error: string | null;
  finished_at: string | null;
  [k: string]: unknown;
}

const toDelivery = (r: DeliveryRow): WebhookDelivery => ({
  deliveryId: r.delivery_id,
  webhookId: r.webhook_id,
  eventType: r.event_type,
  createdAt: r.created_at,
  status: r.status,
  attempts: Number(r.attempts),
  nextAttemptAt: r.next_attempt_at,
  lastStatusCode: Number(r.last_status_code ?? 0),
  lastError: r.last_error ?? '',
  finishedAt: r.finished_at ?? '',
});

export const deliveryRows = {
  async insert(x: SqlExecutor, d: { accountId: string; webhookId: string; eventType: string; payloadJson: string; now: string }) {
    await x.run(`INSERT INTO webhook_outbox VALUES ($1, $2, $3, $4, $5, $6, 'pending', 0, $6, NULL, NULL, NULL)`, [
      randomUUID(),
      d.accountId,
      d.webhookId,
      d.eventType,
      d.payloadJson,
      d.now,
    ]);
  },

  async list(x: SqlExecutor, accountId: string, webhookId: string, limit: number): Promise<WebhookDelivery[]> {
    const rows = await x.all<DeliveryRow>(
      'SELECT * FROM webhook_outbox WHERE account_id = $1 AND webhook_id = $2 ORDER BY created_at DESC, delivery_id LIMIT $3',
      [accountId, webhookId, limit],
    );
    return rows.map(toDelivery);
  },
};

/** The sender's view of the webhook outbox. */
export class WebhookOutbox {
  constructor(private readonly store: RelationalStore) {}

  async due(now: string, limit: number): Promise<DueDelivery[]> {
    const rows = await this.store.all<DeliveryRow>(
      `SELECT * FROM webhook_outbox WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY created_at, delivery_id LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => ({
      deliveryId: r.delivery_id,
      accountId: r.account_id,
      webhookId: r.webhook_id,
      eventType: r.event_type,
      payloadJson: r.payload_json,
      createdAt: r.created_at,
      attempts: Number(r.attempts),
    }));
  }

  endpoint(accountId: string, webhookId: string): Promise<StoredWebhook | undefined> {
    return this.store.read((x) => endpointRows.get(x, accountId, webhookId));
  }

  /** Records an attempt: `status` stays pending with a next attempt, or finishes. */
  async record(
    d: DueDelivery,
    outcome: {
      status: 'pending' | 'delivered' | 'failed' | 'dropped';
      statusCode?: number;
      error?: string;
      nextAttemptAt?: string;
    },
    now: string,
  ): Promise<void> {
    await this.store.transaction((tx) =>
      tx.run(
        `UPDATE webhook_outbox SET status = $2, attempts = $3, next_attempt_at = $4, last_status_code = $5, last_error = $6,
           finished_at = $7 WHERE delivery_id = $1 AND status = 'pending'`,
        [
          d.deliveryId,
          outcome.status,
          d.attempts + (outcome.status === 'dropped' ? 0 : 1),
          outcome.nextAttemptAt ?? now,
          outcome.statusCode ?? null,
          outcome.error ?? null,
          outcome.status === 'pending' ? null : now,
        ],
      ),
    );
  }

  /** Drops finished rows older than `before` (the delivery log is kept for a bounded time). */
  async purge(before: string): Promise<void> {
    await this.store.transaction((tx) =>
      tx.run(`DELETE FROM webhook_outbox WHERE status <> 'pending' AND finished_at < $1`, [before]),
    );
  }
}
