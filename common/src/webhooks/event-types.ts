/**
 * The event types webhook endpoints receive (docs/alerting.md): the incident notifications, and
 * alert records firing and resolving. Shared by the gateway (which validates an endpoint's event
 * filter) and the master (which queues deliveries).
 */
export const WEBHOOK_EVENT_TYPES = [
  'INCIDENT_CREATED',
  'INCIDENT_UPDATED',
  'INCIDENT_RESOLVED',
  'INCIDENT_REOPENED',
  'COMMENT_ADDED',
  'ALERT_FIRED',
  'ALERT_RESOLVED',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
