import { componentLogger, errorFields } from '@strata/common';
import { CycleDuty, type DutyCycle } from '../cycle-duty.js';
import type { LeaderState } from '../leader-state.js';
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
export class MailerDuty extends CycleDuty {
  readonly name = 'mailer';

  constructor(private readonly settingsFor: (state: LeaderState) => MailSettingsSource) {
    super();
  }

  protected cycleFor(state: LeaderState): DutyCycle {
    const log = componentLogger(state.log, 'mailer');
    const settings = this.settingsFor(state);
    const mailer = new Mailer({ store: state.store, settings, log });
    let lastPurge = 0;
    return {
      // A cycle in progress ends after the mail it is sending when leadership ends.
      run: async (signal) => {
        try {
          await mailer.runCycle(signal);
          if (!signal.aborted && Date.now() - lastPurge > PURGE_EVERY_MS) {
            lastPurge = Date.now();
            await mailer.purge(KEEP_FINISHED_MS);
          }
        } catch (err) {
          log.warn(errorFields(err), 'mailer cycle failed; trying again next interval');
        }
      },
      nextDelayMs: async () => {
        try {
          return await settings.sendIntervalMs();
        } catch (err) {
          log.warn(errorFields(err), 'could not read Email.Send.Interval; using 10 s');
          return 10_000;
        }
      },
    };
  }
}
