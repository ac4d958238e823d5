import { componentLogger, errorFields } from '@strata/common';
import type { LeaderDuty, LeaderState } from '../leader-state.js';
import type { MailSettingsSource } from './mail-settings.js';
import { Mailer } from './mailer.js';

/** Finished outbox rows are kept this long for diagnosis, then purged. */
const KEEP_FINISHED_MS = 7 * 24 * 3600_000;
const PURGE_EVERY_MS = 3600_000;

/**
 * The leader's e-mail queue: runs a mailer cycle at once, then after each cycle waits the system's
 * Service.Communication.Email.Send.Interval (read afresh each time), until leadership ends.
 * Stopping waits for a running cycle, so no send overlaps a new leader's.
 */
export class MailerDuty implements LeaderDuty {
  readonly name = 'mailer';
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private abort = new AbortController();

  constructor(private readonly settingsFor: (state: LeaderState) => MailSettingsSource) {}

  async start(state: LeaderState): Promise<void> {
    const log = componentLogger(state.log, 'mailer');
    const settings = this.settingsFor(state);
    const mailer = new Mailer({ store: state.store, settings, log });
    this.stopped = false;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    let lastPurge = 0;
    const cycle = async () => {
      try {
        await mailer.runCycle(signal);
        if (!signal.aborted && Date.now() - lastPurge > PURGE_EVERY_MS) {
          lastPurge = Date.now();
          await mailer.purge(KEEP_FINISHED_MS);
        }
      } catch (err) {
        log.warn(errorFields(err), 'mailer cycle failed; trying again next interval');
      }
    };
    const schedule = async () => {
      if (this.stopped) return;
      let interval = 10_000;
      try {
        interval = await settings.sendIntervalMs();
      } catch (err) {
        log.warn(errorFields(err), 'could not read Email.Send.Interval; using 10 s');
      }
      if (this.stopped) return;
      this.timer = setTimeout(() => {
        this.running = cycle().then(schedule);
      }, interval);
    };
    // A new leader sends the backlog (mail queued before a failover) at once, then every interval.
    // Not awaited: leadership start-up must not wait for a slow mail server.
    this.running = cycle().then(schedule);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // A cycle in progress ends after the mail it is sending; no new one starts.
    this.abort.abort();
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
