import { type SettingKey, SettingKeys, type SettingScope, settingDefinition } from './setting-catalogue.js';
import { parseIntValue, parseSize, parseTimeSpan } from './setting-types.js';

/**
 * Stored values of one scope (the system, or one account), by the catalogue's key spelling. A key
 * that is absent (or null) has no stored value: its default applies.
 */
export type SettingValues = Readonly<Partial<Record<string, string | null>>>;

/** The stored value of `key`, or its default (null when the setting has none). */
export function effectiveValue(scope: SettingScope, values: SettingValues, key: SettingKey): string | null {
  const stored = values[key];
  return stored === undefined || stored === null || stored === '' ? settingDefinition(scope, key).default : stored;
}

/**
 * The parsed value of a typed setting. Stored values were validated when written; should one
 * still not parse (written by an older version with other rules), the default is used rather than
 * failing the work that reads it.
 */
function parsed(scope: SettingScope, values: SettingValues, key: SettingKey, parse: (s: string) => number | undefined): number {
  const d = settingDefinition(scope, key);
  const fromStored = values[key] ? parse(values[key]!) : undefined;
  const ok = (n: number | undefined): n is number =>
    n !== undefined && (d.min === undefined || n >= d.min) && (d.max === undefined || n <= d.max);
  if (ok(fromStored)) return fromStored;
  const fallback = parse(d.default!);
  if (fallback === undefined) throw new Error(`default of ${key} does not parse`);
  return fallback;
}

/** A TimeSpan setting in milliseconds. */
const timeSpanSettingMs = (scope: SettingScope, values: SettingValues, key: SettingKey) =>
  parsed(scope, values, key, parseTimeSpan);
/** A size setting in bytes. */
const sizeSettingBytes = (scope: SettingScope, values: SettingValues, key: SettingKey) => parsed(scope, values, key, parseSize);
/** An int setting. */
const intSetting = (scope: SettingScope, values: SettingValues, key: SettingKey) => parsed(scope, values, key, parseIntValue);

/** The three live limits of the query executor on every worker (system settings). */
export interface ExecutorLimits {
  /** Service.Search.Executor.Query.MaxConcurrent: concurrent queries per executor. */
  queryMaxConcurrent: number;
  /** Service.Search.Executor.File.MaxConcurrentRead: concurrent file reads, globally. */
  fileMaxConcurrentRead: number;
  /** Service.Search.Executor.File.Rowgroup.MaxConcurrentRead: concurrent rowgroup reads per executor. */
  rowgroupMaxConcurrentRead: number;
}

export function executorLimits(system: SettingValues): ExecutorLimits {
  return {
    queryMaxConcurrent: intSetting('system', system, SettingKeys.ExecutorQueryMaxConcurrent),
    fileMaxConcurrentRead: intSetting('system', system, SettingKeys.ExecutorFileMaxConcurrentRead),
    rowgroupMaxConcurrentRead: intSetting('system', system, SettingKeys.ExecutorRowgroupMaxConcurrentRead),
  };
}

/** The executor limits when nothing is stored (the catalogue's defaults). */
export const DEFAULT_EXECUTOR_LIMITS: Readonly<ExecutorLimits> = Object.freeze(executorLimits({}));

/** Service.Storage.Compaction.MaxFileSize of an account, in bytes. */
export const compactionMaxFileSizeBytes = (account: SettingValues) =>
  sizeSettingBytes('account', account, SettingKeys.CompactionMaxFileSize);

/** Service.Communication.Email.Send.Interval, in milliseconds. */
export const emailSendIntervalMs = (system: SettingValues) => timeSpanSettingMs('system', system, SettingKeys.EmailSendInterval);

/** Service.Communication.Email.Drop.Unsent.After of an account, in milliseconds. */
export const emailDropUnsentAfterMs = (account: SettingValues) =>
  timeSpanSettingMs('account', account, SettingKeys.EmailDropUnsentAfter);

/** Service.Dashboards.Default of an account; undefined shows the standard welcome experience. */
export const defaultDashboard = (account: SettingValues) =>
  effectiveValue('account', account, SettingKeys.DashboardsDefault) ?? undefined;
