import { emailDropUnsentAfterMs, emailSendIntervalMs, type SettingValues } from './effective-settings.js';
import { SettingKeys } from './setting-catalogue.js';
import { parseHostPort } from './setting-types.js';

/** The mail configuration one account's outgoing mail uses. */
export interface EmailSettings {
  /** Mail server from Email.Endpoint; undefined when neither the account nor the system sets one. */
  server: { host: string; port: number } | undefined;
  userName: string | undefined;
  password: string | undefined;
  /** Email.FromAddress, else the effective user name; undefined when neither is set. */
  fromAddress: string | undefined;
  /** Account's Drop.Unsent.After: a queued mail older than this at processing time is dropped. */
  dropUnsentAfterMs: number;
  /** System's Send.Interval: the time between send attempts. */
  sendIntervalMs: number;
}

const present = (v: string | null | undefined) => (v === undefined || v === null || v === '' ? undefined : v);

/**
 * The effective e-mail configuration of an account (docs/api.md, Settings): each of
 * Endpoint, UserName, Password and FromAddress is the account's value when the account sets it and
 * the system's value otherwise, field by field. FromAddress, when neither sets it, falls back to
 * the effective user name.
 *
 * `system` and `account` are the stored values of each scope (with passwords: call this only where
 * mail is sent, never to build a response).
 */
export function resolveEmailSettings(system: SettingValues, account: SettingValues): EmailSettings {
  const pick = (key: string) => present(account[key]) ?? present(system[key]);
  const userName = pick(SettingKeys.EmailUserName);
  const endpoint = pick(SettingKeys.EmailEndpoint);
  return {
    server: endpoint === undefined ? undefined : parseHostPort(endpoint),
    userName,
    password: pick(SettingKeys.EmailPassword),
    fromAddress: pick(SettingKeys.EmailFromAddress) ?? userName,
    dropUnsentAfterMs: emailDropUnsentAfterMs(account),
    sendIntervalMs: emailSendIntervalMs(system),
  };
}
