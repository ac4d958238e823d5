import type { EmailSettings as MailSettings } from '@strata/common';
import { errorFields, type Logger, metricsRegistry } from '@strata/common';
import nodemailer, { type SendMailOptions } from 'nodemailer';
import { Counter } from 'prom-client';
import type { RelationalStore } from '../store/relational-store.js';
import type { IncidentLinker, MailSettingsSource } from './mail-settings.js';
import { renderNotification } from './notification-content.js';
import { Outbox, type OutboxMail } from './outbox.js';
import { classifySendFailure, retryDelayMs } from './smtp-failure.js';

/** What one cycle did (tests and logs). */
export interface CycleResult {
  sent: number;
  failed: number;
  dropped: number;
  retried: number;
  /** Mails left waiting because the account has no usable mail server or sender configured. */
  waiting: number;
}

export interface MailerOptions {
  store: RelationalStore;
  settings: MailSettingsSource;
  log: Logger;
  /** Mails handled per cycle at most. */
  batchSize?: number;
  /** Longest wait between attempts of a temporarily failing mail. */
  maxRetryDelayMs?: number;
  /** Connection, greeting and socket timeouts of one SMTP session. */
  smtpTimeoutMs?: number;
  now?: () => number;
}

let emailsCounter: Counter<'outcome'> | undefined;
/** strata_mailer_emails_total{outcome}: sent, failed (permanent), dropped (too old), retry (temporary failure). */
function emailsMetric(): Counter<'outcome'> {
  emailsCounter ??= new Counter({
    name: 'strata_mailer_emails_total',
    help: 'Notification e-mails handled by the mailer, by outcome (sent, failed, dropped, retry).',
    labelNames: ['outcome'],
    registers: [metricsRegistry()],
  });
  return emailsCounter;
}

const WARN_AGAIN_AFTER_MS = 10 * 60_000;

/**
 * Sends the notification outbox over SMTP with each account's effective e-mail settings. One
 * cycle takes the due mails oldest first: a mail older than the account's Drop.Unsent.After is
 * dropped; one whose account has no mail server or sender yet waits; the rest are rendered and
 * sent. A 5xx reply is permanent (the mail is marked failed with the reply); a 4xx reply or a
 * transport failure is retried with exponential backoff until it succeeds or ages out. The
 * Message-ID is fixed in the outbox, so a resend is recognisable as the same mail.
 */
export class Mailer {
  private readonly outbox: Outbox;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly warnedAt = new Map<string, number>();

  constructor(private readonly options: MailerOptions) {
    this.outbox = new Outbox(options.store);
    this.log = options.log;
    this.now = options.now ?? Date.now;
  }

  /** One pass over the due mails; `signal` stops it between two mails (leadership lost). */
  async runCycle(signal?: AbortSignal): Promise<CycleResult> {
    const result: CycleResult = { sent: 0, failed: 0, dropped: 0, retried: 0, waiting: 0 };
    const startedAt = this.now();
    const due = await this.outbox.due(new Date(startedAt).toISOString(), this.options.batchSize ?? 100);
    if (due.length === 0) return result;
    const link = await this.options.settings.incidentLinker();
    const settingsByAccount = new Map<string, Promise<MailSettings | undefined>>();
    // Servers that failed at the transport level in this cycle: their other mails wait for the
    // next attempt instead of each waiting for its own timeout.
    const unreachable = new Map<string, string>();
    for (const mail of due) {
      if (signal?.aborted) break;
      let settings = settingsByAccount.get(mail.accountId);
      if (!settings) {
        settings = this.options.settings.emailSettings(mail.accountId);
        settingsByAccount.set(mail.accountId, settings);
      }
      await this.handle(mail, await settings, link, unreachable, result);
    }
    this.log.debug({ ...result }, 'mailer cycle done');
    return result;
  }

  private async handle(
    mail: OutboxMail,
    settings: MailSettings | undefined,
    link: IncidentLinker,
    unreachable: Map<string, string>,
    r: CycleResult,
  ) {
    const now = this.now();
    const nowIso = new Date(now).toISOString();
    if (!settings) {
      await this.outbox.markDropped(mail, nowIso, 'the account no longer exists');
      r.dropped++;
      emailsMetric().inc({ outcome: 'dropped' });
      return;
    }
    const age = now - Date.parse(mail.createdAt);
    if (age > settings.dropUnsentAfterMs) {
      await this.outbox.markDropped(mail, nowIso, `unsent after ${Math.round(age / 1000)} s (Drop.Unsent.After)`);
      this.log.warn(
        { mailId: mail.mailId, accountId: mail.accountId, incidentId: mail.incidentId, ageMs: age, attempts: mail.attempts },
        'notification e-mail dropped: older than the account Drop.Unsent.After',
      );
      r.dropped++;
      emailsMetric().inc({ outcome: 'dropped' });
      return;
    }
    if (!settings.server || !settings.fromAddress) {
      const what = !settings.server ? 'no mail server (Email.Endpoint)' : 'no sender (Email.FromAddress or Email.UserName)';
      this.warnRarely(
        `config:${mail.accountId}`,
        { accountId: mail.accountId },
        `notification e-mails wait: ${what} is configured for the account or the system`,
      );
      r.waiting++;
      return;
    }
    const serverKey = `${settings.server.host}:${settings.server.port}`;
    const down = unreachable.get(serverKey);
    if (down) {
      await this.retryLater(mail, settings, now, down);
      r.retried++;
      return;
    }
    const content = renderNotification(mail.payload, link(mail.accountId, mail.incidentId));
    try {
      await this.send(settings, {
        from: settings.fromAddress,
        to: mail.recipientAddress,
        subject: content.subject,
        text: content.text,
        html: content.html,
        messageId: mail.messageId,
      });
      await this.outbox.markSent(mail, new Date(this.now()).toISOString());
      r.sent++;
      emailsMetric().inc({ outcome: 'sent' });
    } catch (err) {
      const failure = classifySendFailure(err);
      const fields = { mailId: mail.mailId, accountId: mail.accountId, server: serverKey, attempts: mail.attempts + 1 };
      if (failure.kind === 'permanent') {
        await this.outbox.markFailed(mail, new Date(this.now()).toISOString(), failure.message);
        this.log.warn({ ...fields, error: failure.message }, 'notification e-mail refused permanently; not retried');
        r.failed++;
        emailsMetric().inc({ outcome: 'failed' });
        return;
      }
      const e = err as { responseCode?: number };
      if (e?.responseCode === undefined) unreachable.set(serverKey, failure.message);
      await this.retryLater(mail, settings, now, failure.message);
      this.log.warn({ ...fields, error: failure.message, ...errorFields(err) }, 'notification e-mail not sent; will retry');
      r.retried++;
    }
  }

  private async retryLater(mail: OutboxMail, settings: MailSettings, now: number, error: string) {
    const delay = retryDelayMs(mail.attempts + 1, settings.sendIntervalMs, this.options.maxRetryDelayMs ?? 15 * 60_000);
    await this.outbox.scheduleRetry(mail, new Date(now + delay).toISOString(), error);
    emailsMetric().inc({ outcome: 'retry' });
  }

  private async send(settings: MailSettings, message: SendMailOptions): Promise<void> {
    const timeout = this.options.smtpTimeoutMs ?? 15_000;
    const server = settings.server!;
    const transport = nodemailer.createTransport({
      host: server.host,
      port: server.port,
      // Port 465 speaks TLS from the start; others upgrade with STARTTLS when the server offers it.
      secure: server.port === 465,
      auth: settings.userName && settings.password ? { user: settings.userName, pass: settings.password } : undefined,
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
    });
    try {
      await transport.sendMail(message);
    } finally {
      transport.close();
    }
  }

  private warnRarely(key: string, fields: Record<string, unknown>, message: string) {
    const now = this.now();
    const last = this.warnedAt.get(key);
    if (last !== undefined && now - last < WARN_AGAIN_AFTER_MS) return;
    this.warnedAt.set(key, now);
    this.log.warn(fields, message);
  }

  /** Deletes finished outbox rows older than `keepMs`. */
  purge(keepMs: number): Promise<void> {
    return this.outbox.purgeFinished(new Date(this.now() - keepMs).toISOString());
  }
}
