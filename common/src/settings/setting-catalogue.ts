import type { SettingType } from './setting-types.js';

/**
 * Every setting of the product's two tables (account and system settings, docs/api.md), in one place:
 * scope, type, default, sensitivity and the limits Strata adds. Several e-mail keys exist in both
 * scopes (an account value overrides the system value for that account's mail); each scope has
 * its own entry.
 */

export type SettingScope = 'system' | 'account';

/** Names of every setting, spelled as the product and its clients spell them. */
export const SettingKeys = {
  EmailEndpoint: 'Service.Communication.Email.Endpoint',
  EmailUserName: 'Service.Communication.Email.UserName',
  EmailPassword: 'Service.Communication.Email.Password',
  EmailFromAddress: 'Service.Communication.Email.FromAddress',
  EmailDropUnsentAfter: 'Service.Communication.Email.Drop.Unsent.After',
  EmailSendInterval: 'Service.Communication.Email.Send.Interval',
  DashboardsDefault: 'Service.Dashboards.Default',
  CompactionMaxFileSize: 'Service.Storage.Compaction.MaxFileSize',
  StorageRetention: 'Service.Storage.Retention',
  FrontendUrl: 'Service.Application.FrontendUrl',
  ExecutorQueryMaxConcurrent: 'Service.Search.Executor.Query.MaxConcurrent',
  ExecutorFileMaxConcurrentRead: 'Service.Search.Executor.File.MaxConcurrentRead',
  ExecutorRowgroupMaxConcurrentRead: 'Service.Search.Executor.File.Rowgroup.MaxConcurrentRead',
} as const;

export type SettingKey = (typeof SettingKeys)[keyof typeof SettingKeys];

export interface SettingDefinition {
  readonly key: SettingKey;
  readonly scope: SettingScope;
  readonly type: SettingType;
  /** Value used while none is stored; null for "no value" (string settings documented with the default `null`). */
  readonly default: string | null;
  /** Stored and used, but never returned by any endpoint nor logged. */
  readonly sensitive: boolean;
  readonly description: string;
  /** Inclusive bounds of the parsed value: the integer, milliseconds (TimeSpan) or bytes (size). */
  readonly min?: number;
  readonly max?: number;
  /** Extra rule for a string setting: `hostPort` requires `host:port`. */
  readonly format?: 'hostPort';
}

/** Longest accepted value of a string setting. */
export const MAX_STRING_SETTING_LENGTH = 4096;

const DAY_MS = 86_400_000;
/** Upper bound of the executor limits: far above what a node can use, low enough to catch typos. */
const MAX_EXECUTOR_LIMIT = 100_000;

const def = (d: SettingDefinition): SettingDefinition => Object.freeze(d);

const emailCommon = (scope: SettingScope): SettingDefinition[] => [
  def({
    key: SettingKeys.EmailEndpoint,
    scope,
    type: 'string',
    default: null,
    sensitive: false,
    format: 'hostPort',
    description: scope === 'system' ? 'System default mail endpoint (host:port).' : 'Outgoing mail server and port (host:port).',
  }),
  def({
    key: SettingKeys.EmailUserName,
    scope,
    type: 'string',
    default: null,
    sensitive: false,
    description: scope === 'system' ? 'System default mail user name.' : 'Outgoing mail user name.',
  }),
  def({
    key: SettingKeys.EmailPassword,
    scope,
    type: 'string',
    default: null,
    sensitive: true,
    description: scope === 'system' ? 'System default mail password.' : 'Outgoing mail password.',
  }),
  def({
    key: SettingKeys.EmailFromAddress,
    scope,
    type: 'string',
    default: null,
    sensitive: false,
    description: 'From address; when empty it defaults to the user name.',
  }),
];

/** Retention in both scopes: the account value overrides the system default (docs/api.md, Data lifecycle). */
const retention = (scope: SettingScope): SettingDefinition =>
  def({
    key: SettingKeys.StorageRetention,
    scope,
    type: 'retention',
    default: null,
    sensitive: false,
    min: 60_000,
    description:
      scope === 'system'
        ? 'Default retention of every account: entries older than this are deleted (30d, 12h, d.hh:mm:ss, or forever). No value: keep forever.'
        : "Retention of this account's entries, overriding the system default; a schema may override it in turn.",
  });

export const ACCOUNT_SETTINGS: readonly SettingDefinition[] = Object.freeze([
  ...emailCommon('account'),
  retention('account'),
  def({
    key: SettingKeys.EmailDropUnsentAfter,
    scope: 'account',
    type: 'TimeSpan',
    default: '01:00:00',
    sensitive: false,
    min: 1000,
    max: 3650 * DAY_MS,
    description: 'Age after which a queued unsent e-mail is dropped instead of sent.',
  }),
  def({
    key: SettingKeys.DashboardsDefault,
    scope: 'account',
    type: 'string',
    default: null,
    sensitive: false,
    description: 'Dashboard identifier loaded on the account landing page.',
  }),
  def({
    key: SettingKeys.CompactionMaxFileSize,
    scope: 'account',
    type: 'size',
    default: '1 GB',
    sensitive: false,
    min: 1,
    description: 'Maximum total file size targeted when selecting files for one compaction job.',
  }),
]);

export const SYSTEM_SETTINGS: readonly SettingDefinition[] = Object.freeze([
  ...emailCommon('system'),
  retention('system'),
  def({
    key: SettingKeys.EmailSendInterval,
    scope: 'system',
    type: 'TimeSpan',
    default: '00:00:10',
    sensitive: false,
    min: 1000,
    max: DAY_MS,
    description: 'Default interval between e-mail send attempts.',
  }),
  def({
    key: SettingKeys.FrontendUrl,
    scope: 'system',
    type: 'string',
    default: null,
    sensitive: false,
    description: 'Frontend base URL used to build incident deep links; must be a valid absolute URL (http or https).',
  }),
  def({
    key: SettingKeys.ExecutorQueryMaxConcurrent,
    scope: 'system',
    type: 'int',
    default: '10',
    sensitive: false,
    min: 1,
    max: MAX_EXECUTOR_LIMIT,
    description: 'Maximum concurrent queries per executor.',
  }),
  def({
    key: SettingKeys.ExecutorFileMaxConcurrentRead,
    scope: 'system',
    type: 'int',
    default: '10',
    sensitive: false,
    min: 1,
    max: MAX_EXECUTOR_LIMIT,
    description: 'Maximum concurrent file reads globally.',
  }),
  def({
    key: SettingKeys.ExecutorRowgroupMaxConcurrentRead,
    scope: 'system',
    type: 'int',
    default: '100',
    sensitive: false,
    min: 1,
    max: MAX_EXECUTOR_LIMIT,
    description: 'Maximum concurrent rowgroup reads per executor.',
  }),
]);

export function settingsOf(scope: SettingScope): readonly SettingDefinition[] {
  return scope === 'system' ? SYSTEM_SETTINGS : ACCOUNT_SETTINGS;
}

const byLowerKey = (list: readonly SettingDefinition[]) => new Map(list.map((d) => [d.key.toLowerCase(), d]));
const LOOKUP: Record<SettingScope, Map<string, SettingDefinition>> = {
  system: byLowerKey(SYSTEM_SETTINGS),
  account: byLowerKey(ACCOUNT_SETTINGS),
};

/**
 * The definition of a setting of `scope`, matching the name without regard to case (clients of
 * the original product send names in any case); undefined for an unknown name.
 */
export function findSetting(scope: SettingScope, name: string): SettingDefinition | undefined {
  return LOOKUP[scope].get(name.trim().toLowerCase());
}

/** The definition of a known key; throws on a key that is not in the catalogue (a programming error). */
export function settingDefinition(scope: SettingScope, key: SettingKey): SettingDefinition {
  const d = findSetting(scope, key);
  if (!d) throw new Error(`${key} is not a ${scope} setting`);
  return d;
}
