import { type EmailSettings, emailSendIntervalMs, incidentDeepLinkFromSettings, isStrataError } from '@strata/common';
import { SettingsRepository } from '../settings/settings-repository.js';
import type { RelationalStore } from '../store/relational-store.js';

/**
 * Where the mailer reads its settings; read afresh on every cycle, so changes apply without
 * restart. Settings are `EmailSettings` of @strata/common: the account's Endpoint, UserName,
 * Password and FromAddress over the system's, field by field, with the account's Drop.Unsent.After
 * and the system's Send.Interval.
 */
export type IncidentLinker = (accountId: string, incidentId: string) => string | undefined;

export interface MailSettingsSource {
  /** Effective settings of one account; undefined when the account no longer exists. */
  emailSettings(accountId: string): Promise<EmailSettings | undefined>;
  /** The system's Service.Communication.Email.Send.Interval in milliseconds. */
  sendIntervalMs(): Promise<number>;
  /**
   * Builds incidents' deep links from the current FrontendUrl (read once per cycle); a link is
   * undefined when FrontendUrl is blank or not a valid absolute URL.
   */
  incidentLinker(): Promise<IncidentLinker>;
}

/** The settings stored in the relational store (the settings API writes them). */
export function storedMailSettings(store: RelationalStore): MailSettingsSource {
  const settings = new SettingsRepository(store);
  return {
    async emailSettings(accountId) {
      try {
        return await settings.emailSettingsFor(accountId);
      } catch (err) {
        if (isStrataError(err) && err.kind === 'not_found') return undefined;
        throw err;
      }
    },
    async sendIntervalMs() {
      return emailSendIntervalMs(await settings.systemValues());
    },
    async incidentLinker() {
      const system = await settings.systemValues();
      return (accountId, incidentId) => incidentDeepLinkFromSettings(system, accountId, incidentId);
    },
  };
}
