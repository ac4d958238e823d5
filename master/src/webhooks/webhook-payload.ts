import { createHmac } from 'node:crypto';
import type { WebhookEvent } from './webhook-events.js';

/** Headers of a generic delivery; receivers check the signature as docs/alerting.md shows. */
export const SIGNATURE_HEADER = 'x-strata-signature';
export const TIMESTAMP_HEADER = 'x-strata-timestamp';

/**
 * `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">` with the endpoint's secret: the timestamp is
 * signed with the body so a receiver can refuse replays of an old delivery.
 */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const HEADINGS: Record<WebhookEvent['type'], string> = {
  INCIDENT_CREATED: 'Incident created',
  INCIDENT_UPDATED: 'Incident updated',
  INCIDENT_RESOLVED: 'Incident resolved',
  INCIDENT_REOPENED: 'Incident reopened',
  COMMENT_ADDED: 'Comment added',
  ALERT_FIRED: 'Alert fired',
  ALERT_RESOLVED: 'Alert resolved',
};

/** Slack's mrkdwn needs &, < and > escaped in text that is not a link. */
const escapeSlack = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The body of a Slack-compatible incoming webhook: `{ text }` in Slack's mrkdwn. */
export function slackBody(event: WebhookEvent): string {
  const lines = [`*${HEADINGS[event.type]}*`];
  const i = event.incident;
  if (i) lines[0] += `: [${i.severity}] ${escapeSlack(i.title)} (${i.state})`;
  if (event.alert) {
    const dims = Object.entries(event.alert.dimensions).map(([k, v]) => `${k}=${String(v)}`);
    lines.push(`Rule: ${escapeSlack(event.alert.ruleName)}${dims.length ? ` (${escapeSlack(dims.join(', '))})` : ''}`);
  }
  if (i) lines.push(`Incident ${i.incidentId}`);
  if (event.comment) lines.push(`> ${escapeSlack(event.comment.body).replace(/\n/g, '\n> ')}`);
  return JSON.stringify({ text: lines.join('\n') });
}
