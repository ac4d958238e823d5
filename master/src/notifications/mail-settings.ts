/**
 * The e-mail configuration one account's outgoing mail uses: the account's values over the
 * system's, field by field (spec, settings rule 1), with the account's Drop.Unsent.After and the
 * system's Send.Interval. Same shape as `EmailSettings` of @strata/common's settings.
 */
export interface MailSettings {
  server: { host: string; port: number } | undefined;
  userName: string | undefined;
  password: string | undefined;
  fromAddress: string | undefined;
  dropUnsentAfterMs: number;
  sendIntervalMs: number;
}

/** Where the mailer reads its settings; read afresh on every cycle, so changes apply without restart. */
export interface MailSettingsSource {
  /** Effective settings of one account; undefined when the account no longer exists. */
  emailSettings(accountId: string): Promise<MailSettings | undefined>;
  /** The system's Service.Communication.Email.Send.Interval in milliseconds. */
  sendIntervalMs(): Promise<number>;
  /** The incident's deep link, or undefined when FrontendUrl is blank or not a valid absolute URL. */
  incidentLink(accountId: string, incidentId: string): Promise<string | undefined>;
}
