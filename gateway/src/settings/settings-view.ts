import { type SettingScope, type SettingType, settingsOf } from '@strata/common';

/**
 * One setting as the settings endpoints answer it. Every setting of the scope is listed, stored
 * or not, so a client can render the whole form from one call.
 */
export interface SettingView {
  key: string;
  /** The stored value; null when none is stored — and always null for a sensitive setting. */
  value: string | null;
  type: SettingType;
  /** The value in effect while none is stored (null: no value). */
  default: string | null;
  /** Sensitive values are stored and used, but read back blank (null). */
  sensitive: boolean;
  /** Whether a value is stored (for a sensitive setting, the only hint that one is). */
  isSet: boolean;
  description: string;
}

/**
 * Builds the view of a scope from the stored values the master returned. The master already
 * blanks sensitive values; this blanks them again from the catalogue, so no response can carry
 * one even if the master's answer changed shape.
 */
export function settingsView(scope: SettingScope, stored: { key: string; value: string }[]): SettingView[] {
  const byKey = new Map(stored.map((s) => [s.key, s.value]));
  return settingsOf(scope).map((d) => ({
    key: d.key,
    value: d.sensitive || !byKey.has(d.key) ? null : byKey.get(d.key)!,
    type: d.type,
    default: d.default,
    sensitive: d.sensitive,
    isSet: byKey.has(d.key),
    description: d.description,
  }));
}
