import { randomUUID } from 'node:crypto';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';
import type { NotificationPayload } from './notification-payload.js';
import { incidentRecipients, type Recipient } from './recipients.js';

/** One queued e-mail to one recipient. */
export interface OutboxMail {
  mailId: string;
  accountId: string;
  incidentId: string;
  eventType: string;
  recipientUserId: string;
  recipientAddress: string;
  /** Fixed at enqueue time so a resend after a lost acknowledgement carries the same Message-ID. */
  messageId: string;
  payload: NotificationPayload;
  createdAt: string;
  attempts: number;
}

interface OutboxRow {
  mail_id: string;
  account_id: string;
  incident_id: string;
  event_type: string;
  recipient_user_id: string;
  recipient_address: string;
  message_id: string;
  payload_json: string;
  created_at: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  last_error: string | null;
  finished_at: string | null;
  [k: string]: unknown;
}

export type OutboxStatus = 'pending' | 'sent' | 'failed' | 'dropped';

/** An outbox row as tests and operators see it. */
export interface OutboxEntry extends OutboxMail {
  status: OutboxStatus;
  nextAttemptAt: string;
  lastError: string | null;
  finishedAt: string | null;
}

const toEntry = (r: OutboxRow): OutboxEntry => ({
  mailId: r.mail_id,
  accountId: r.account_id,
  incidentId: r.incident_id,
  eventType: r.event_type,
  recipientUserId: r.recipient_user_id,
  recipientAddress: r.recipient_address,
  messageId: r.message_id,
  payload: JSON.parse(r.payload_json) as NotificationPayload,
  createdAt: r.created_at,
  attempts: Number(r.attempts),
  status: r.status as OutboxStatus,
  nextAttemptAt: r.next_attempt_at,
  lastError: r.last_error,
  finishedAt: r.finished_at,
});

/**
 * Queues one e-mail per distinct recipient of the incident, inside the caller's transaction: the
 * change, its history event and its mail commit together or not at all. Returns the recipients.
 */
export async function enqueueNotification(tx: SqlExecutor, payload: NotificationPayload, now: string): Promise<Recipient[]> {
  const recipients = await incidentRecipients(tx, payload.incident);
  const json = JSON.stringify(payload);
  for (const r of recipients) {
    const mailId = randomUUID();
    await tx.run(`INSERT INTO notification_outbox VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', 0, $9, NULL, NULL)`, [
      mailId,
      payload.incident.accountId,
      payload.incident.incidentId,
      payload.eventType,
      r.userId,
      r.address,
      `<${mailId}@strata.mail>`,
      json,
      now,
    ]);
  }
  return recipients;
}

/** The mailer's view of the outbox. */
export class Outbox {
  constructor(private readonly store: RelationalStore) {}

  /** Pending mails due at `now`, oldest first. */
  async due(now: string, limit: number): Promise<OutboxMail[]> {
    const rows = await this.store.all<OutboxRow>(
      `SELECT * FROM notification_outbox WHERE status = 'pending' AND next_attempt_at <= $1
       ORDER BY created_at, mail_id LIMIT $2`,
      [now, limit],
    );
    return rows.map(toEntry);
  }

  /** Every row (tests and diagnostics), oldest first. */
  async entries(filter: { incidentId?: string } = {}): Promise<OutboxEntry[]> {
    const rows = filter.incidentId
      ? await this.store.all<OutboxRow>('SELECT * FROM notification_outbox WHERE incident_id = $1 ORDER BY created_at, mail_id', [
          filter.incidentId,
        ])
      : await this.store.all<OutboxRow>('SELECT * FROM notification_outbox ORDER BY created_at, mail_id');
    return rows.map(toEntry);
  }

  private finish(mailId: string, status: OutboxStatus, now: string, error: string | null, attempts: number) {
    return this.store.transaction((tx) =>
      tx.run(
        `UPDATE notification_outbox SET status = $2, finished_at = $3, last_error = $4, attempts = $5
         WHERE mail_id = $1 AND status = 'pending'`,
        [mailId, status, now, error, attempts],
      ),
    );
  }

  markSent(mail: OutboxMail, now: string): Promise<void> {
    return this.finish(mail.mailId, 'sent', now, null, mail.attempts + 1);
  }

  /** A permanent SMTP failure (5xx): not retried, the error is kept. */
  markFailed(mail: OutboxMail, now: string, error: string): Promise<void> {
    return this.finish(mail.mailId, 'failed', now, error, mail.attempts + 1);
  }

  /** Older than the account's Drop.Unsent.After at processing time. */
  markDropped(mail: OutboxMail, now: string, reason: string): Promise<void> {
    return this.finish(mail.mailId, 'dropped', now, reason, mail.attempts);
  }

  /** A temporary failure: try again at `nextAttemptAt`. */
  async scheduleRetry(mail: OutboxMail, nextAttemptAt: string, error: string): Promise<void> {
    await this.store.transaction((tx) =>
      tx.run(
        `UPDATE notification_outbox SET attempts = attempts + 1, next_attempt_at = $2, last_error = $3
         WHERE mail_id = $1 AND status = 'pending'`,
        [mail.mailId, nextAttemptAt, error],
      ),
    );
  }

  /** Removes finished rows older than `before` so the table does not grow without bound. */
  async purgeFinished(before: string): Promise<void> {
    await this.store.transaction((tx) =>
      tx.run("DELETE FROM notification_outbox WHERE status <> 'pending' AND finished_at < $1", [before]),
    );
  }
}
