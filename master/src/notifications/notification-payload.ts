import type { Incident } from '@strata/proto/incidents/v1/incidents';

/**
 * What an outbox row keeps about the change it announces: a snapshot taken in the transaction of
 * the change, so the mail tells what happened then even if the incident changes again before the
 * mailer runs. Rendering (markdown, HTML, deep link) happens at send time.
 */
export interface NotificationPayload {
  eventType: 'INCIDENT_CREATED' | 'INCIDENT_UPDATED' | 'INCIDENT_RESOLVED' | 'INCIDENT_REOPENED' | 'COMMENT_ADDED';
  incident: Incident;
  /** Display text of the owner, e.g. `group On-call (<id>)`. */
  ownerLabel: string;
  /** Display text of the assignee, absent when there is none. */
  assigneeLabel?: string;
  /** Display text of the user who made the change. */
  actorLabel: string;
  /** History change items of an update (`State:OPEN->IN_PROGRESS`, `Title:updated`, …). */
  changes?: string[];
  comment?: { body: string; authorLabel: string; createdAt: string };
}
