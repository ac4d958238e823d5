import http from 'node:http';
import https from 'node:https';
import { errorFields, type Logger, metricsRegistry } from '@strata/common';
import { Counter } from 'prom-client';
import type { RelationalStore } from '../store/relational-store.js';
import type { WebhookEvent } from './webhook-events.js';
import { SIGNATURE_HEADER, slackBody, TIMESTAMP_HEADER, webhookSignature } from './webhook-payload.js';
import { type DueDelivery, WebhookOutbox } from './webhook-repository.js';
import { checkWebhookUrl, guardedLookup, type WebhookPolicy } from './webhook-target.js';

const TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 5_000;
const MAX_RETRY_MS = 10 * 60_000;
/** A delivery still failing this long after its event is dropped. */
const GIVE_UP_AFTER_MS = 24 * 3600_000;
const BATCH = 50;

let deliveriesCounter: Counter<'outcome'> | undefined;
/** strata_webhook_deliveries_total{outcome}: delivered, failed (permanent), dropped, retry. */
function deliveriesMetric(): Counter<'outcome'> {
  deliveriesCounter ??= new Counter({
    name: 'strata_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome (delivered, failed, dropped, retry).',
    labelNames: ['outcome'],
    registers: [metricsRegistry()],
  });
  return deliveriesCounter;
}

export interface SendOutcome {
  statusCode?: number;
  error?: string;
  /** The address policy refused the host: retrying cannot help. */
  refused?: boolean;
}

/** One POST, without following redirects, through the guarded lookup. */
export function postWebhook(
  url: URL,
  body: string,
  headers: Record<string, string>,
  policy: WebhookPolicy,
): Promise<SendOutcome> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    const req = client.request(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'Strata-Webhook/1',
          ...headers,
        },
        lookup: guardedLookup(policy) as never,
        timeout: TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ statusCode: res.statusCode ?? 0 }));
        res.on('error', (err) => resolve({ statusCode: res.statusCode ?? 0, error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.message, refused: err.code === 'EBLOCKED' }));
    req.end(body);
  });
}

/** 2xx delivered; 4xx other than 408 and 429, or an address the policy refuses, permanent; anything else retried. */
export function classify(o: SendOutcome): 'delivered' | 'failed' | 'retry' {
  const code = o.statusCode ?? 0;
  if (o.refused) return 'failed';
  if (!o.error && code >= 200 && code < 300) return 'delivered';
  if (!o.error && code >= 400 && code < 500 && code !== 408 && code !== 429) return 'failed';
  return 'retry';
}

/**
 * Sends due webhook deliveries (the leader's WebhookDuty runs a cycle every second). Each delivery
 * is signed (generic JSON) or rendered (Slack) at send time with the endpoint's current URL and
 * secret; an endpoint deleted or disabled since drops its deliveries. Temporary failures retry
 * with exponential back-off (5 s doubling to 10 min) for 24 hours.
 */
export class WebhookSender {
  private readonly outbox: WebhookOutbox;

  constructor(
    store: RelationalStore,
    private readonly policy: WebhookPolicy,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.outbox = new WebhookOutbox(store);
  }

  async runCycle(signal?: AbortSignal): Promise<number> {
    const due = await this.outbox.due(new Date(this.now()).toISOString(), BATCH);
    for (const d of due) {
      if (signal?.aborted) break;
      await this.deliver(d).catch((err) =>
        this.log.warn({ deliveryId: d.deliveryId, ...errorFields(err) }, 'webhook delivery failed'),
      );
    }
    return due.length;
  }

  private async deliver(d: DueDelivery): Promise<void> {
    const now = this.now();
    const nowIso = new Date(now).toISOString();
    const endpoint = await this.outbox.endpoint(d.accountId, d.webhookId);
    if (!endpoint?.webhook.enabled)
      return this.outbox.record(d, { status: 'dropped', error: 'The endpoint was disabled.' }, nowIso);
    if (now - Date.parse(d.createdAt) > GIVE_UP_AFTER_MS) {
      deliveriesMetric().inc({ outcome: 'dropped' });
      return this.outbox.record(d, { status: 'dropped', error: 'Still failing 24 hours after the event.' }, nowIso);
    }
    let url: URL;
    try {
      url = checkWebhookUrl(endpoint.webhook.url, this.policy);
    } catch (err) {
      return this.outbox.record(d, { status: 'failed', error: (err as Error).message }, nowIso);
    }
    const event = JSON.parse(d.payloadJson) as WebhookEvent;
    const timestamp = String(Math.floor(now / 1000));
    const slack = endpoint.webhook.format === 'slack';
    const body = slack ? slackBody(event) : JSON.stringify({ deliveryId: d.deliveryId, ...event });
    const headers: Record<string, string> = slack
      ? {}
      : {
          'x-strata-event': d.eventType,
          'x-strata-delivery': d.deliveryId,
          [TIMESTAMP_HEADER]: timestamp,
          [SIGNATURE_HEADER]: webhookSignature(endpoint.secret, timestamp, body),
        };
    const outcome = await postWebhook(url, body, headers, this.policy);
    const verdict = classify(outcome);
    deliveriesMetric().inc({ outcome: verdict });
    const error = outcome.error ?? (verdict === 'delivered' ? undefined : `HTTP ${outcome.statusCode}`);
    if (verdict !== 'retry') {
      return this.outbox.record(
        d,
        { status: verdict, ...(outcome.statusCode ? { statusCode: outcome.statusCode } : {}), ...(error ? { error } : {}) },
        nowIso,
      );
    }
    const delay = Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(d.attempts, 20));
    await this.outbox.record(
      d,
      {
        status: 'pending',
        ...(outcome.statusCode ? { statusCode: outcome.statusCode } : {}),
        error: error ?? 'failed',
        nextAttemptAt: new Date(now + delay).toISOString(),
      },
      nowIso,
    );
  }

  purge(keepMs: number): Promise<void> {
    return this.outbox.purge(new Date(this.now() - keepMs).toISOString());
  }
}
