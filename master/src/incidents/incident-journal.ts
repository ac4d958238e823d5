import { randomUUID } from 'node:crypto';
import type { Incident, IncidentComment, IncidentHistoryEvent } from '@strata/proto/incidents/v1/incidents';
import type { NotificationPayload } from '../notifications/notification-payload.js';
import { enqueueNotification } from '../notifications/outbox.js';
import { ownerLabel, userLabel } from '../notifications/recipients.js';
import type { SqlExecutor } from '../store/relational-store.js';
import { enqueueWebhookEvent } from '../webhooks/webhook-events.js';
import { type ActorType, type HistoryEventType, NOTIFIED_EVENT_TYPES } from './incident-model.js';
import { historyRows } from './incident-repository.js';

export interface Actor {
  type: ActorType;
  id: string;
}

export interface JournalEntry {
  eventType: HistoryEventType;
  actor: Actor;
  /** The incident after the change (for a comment or link: the incident it belongs to). */
  incident: Incident;
  before?: unknown;
  after?: unknown;
  metadata: string;
  changes?: string[];
  comment?: IncidentComment;
  now: string;
}

/**
 * Writes one history event and, for the event types that notify (NOTIFIED_EVENT_TYPES), the outbox mail to every
 * recipient, on the caller's transaction executor, so they commit with the change they describe.
 */
export async function journal(tx: SqlExecutor, entry: JournalEntry): Promise<IncidentHistoryEvent> {
  const event: IncidentHistoryEvent = {
    accountId: entry.incident.accountId,
    incidentId: entry.incident.incidentId,
    eventId: randomUUID(),
    eventType: entry.eventType,
    actorType: entry.actor.type,
    actorId: entry.actor.id,
    timestamp: entry.now,
    beforeJson: entry.before === undefined ? undefined : JSON.stringify(entry.before),
    afterJson: entry.after === undefined ? undefined : JSON.stringify(entry.after),
    metadataJson: entry.metadata,
  };
  await historyRows.insert(tx, event);
  if (NOTIFIED_EVENT_TYPES.has(entry.eventType)) {
    const incident = entry.incident;
    const payload: NotificationPayload = {
      eventType: entry.eventType as NotificationPayload['eventType'],
      incident,
      ownerLabel: await ownerLabel(tx, incident),
      assigneeLabel: incident.assigneeUserId ? await userLabel(tx, incident.assigneeUserId) : undefined,
      actorLabel: entry.actor.type === 'USER' ? await userLabel(tx, entry.actor.id) : entry.actor.id,
      changes: entry.changes,
      comment: entry.comment && {
        body: entry.comment.body,
        authorLabel: await userLabel(tx, entry.comment.authorUserId),
        createdAt: entry.comment.createdAt,
      },
    };
    await enqueueNotification(tx, payload, entry.now);
    // Webhooks receive the same events, queued in the same transaction (docs/alerting.md).
    await enqueueWebhookEvent(tx, {
      type: payload.eventType,
      occurredAt: entry.now,
      accountId: incident.accountId,
      incident,
      ...(entry.comment ? { comment: { body: entry.comment.body, authorUserId: entry.comment.authorUserId } } : {}),
    });
  }
  return event;
}
