import { type ErrorDetail, StrataError } from '../errors.js';
import {
  findSetting,
  MAX_STRING_SETTING_LENGTH,
  type SettingDefinition,
  type SettingKey,
  type SettingScope,
} from './setting-catalogue.js';
import { formatTimeSpan, parseHostPort, parseIntValue, parseRetention, parseSize, parseTimeSpan } from './setting-types.js';

/** A requested change: a value to store, or null (also "" or blank) to remove the stored value. */
export interface SettingChange {
  key: string;
  value: string | null;
}

/** A change that passed validation: the key in the catalogue's spelling, the value to store or null. */
export interface ValidSettingChange {
  key: SettingKey;
  value: string | null;
  definition: SettingDefinition;
}

/** Shows a rejected value in a message: quoted, shortened; a sensitive value is never shown. */
const shown = (d: SettingDefinition, value: string) =>
  d.sensitive ? '' : ` ${JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value)}`;

const rangeText = (d: SettingDefinition, fmt: (n: number) => string) => {
  if (d.min !== undefined && d.max !== undefined) return ` from ${fmt(d.min)} to ${fmt(d.max)}`;
  if (d.min !== undefined) return ` at least ${fmt(d.min)}`;
  return '';
};

const outOfRange = (d: SettingDefinition, n: number) => (d.min !== undefined && n < d.min) || (d.max !== undefined && n > d.max);

/**
 * The problem with `value` for setting `d`, as a stable message that names the setting, or
 * undefined when the value is valid. `value` is already trimmed and non-empty.
 */
function problemWith(d: SettingDefinition, value: string): string | undefined {
  const bad = `Invalid value${shown(d, value)} for setting ${d.key}`;
  switch (d.type) {
    case 'size': {
      const bytes = parseSize(value);
      const rule =
        'a size is a whole number followed by one of the units B, KB, MB, GB (case-insensitive, a space between number and unit is allowed), for example 512 MB';
      if (bytes === undefined) return `${bad}: ${rule}.`;
      if (outOfRange(d, bytes)) return `${bad}: the size must be${rangeText(d, (n) => `${n} B`)}.`;
      return undefined;
    }
    case 'TimeSpan': {
      const ms = parseTimeSpan(value);
      if (ms === undefined) return `${bad}: a TimeSpan is written hh:mm:ss, for example 00:15:00.`;
      if (outOfRange(d, ms)) return `${bad}: the TimeSpan must be${rangeText(d, formatTimeSpan)}.`;
      return undefined;
    }
    case 'retention': {
      const ms = parseRetention(value);
      if (ms === undefined)
        return `${bad}: a retention is a number of days, hours or minutes (30d, 12h, 45m), a TimeSpan d.hh:mm:ss (30.00:00:00), or forever.`;
      if (Number.isFinite(ms) && outOfRange(d, ms)) return `${bad}: the retention must be${rangeText(d, formatTimeSpan)}.`;
      return undefined;
    }
    case 'int': {
      const n = parseIntValue(value);
      if (n === undefined || outOfRange(d, n)) return `${bad}: expected a whole number${rangeText(d, String)}.`;
      return undefined;
    }
    case 'string': {
      if (value.length > MAX_STRING_SETTING_LENGTH)
        return `The value for setting ${d.key} is longer than ${MAX_STRING_SETTING_LENGTH} characters.`;
      if (d.format === 'hostPort' && !parseHostPort(value))
        return `${bad}: expected host:port, for example smtp.example.com:587.`;
      return undefined;
    }
  }
}

/**
 * Checks one change against the catalogue of `scope`. Returns the change to apply, or a problem
 * message: an unknown name, or a value that is not of the setting's type.
 */
export function checkSettingChange(scope: SettingScope, change: SettingChange): ValidSettingChange | { problem: string } {
  const d = findSetting(scope, change.key);
  if (!d) return { problem: `Unknown ${scope} setting: ${change.key}.` };
  const raw = change.value;
  // Passwords are kept exactly as sent; every other value is trimmed. Blank means "remove".
  const value = raw === null ? null : d.sensitive ? raw : raw.trim();
  if (value === null || value.trim() === '') return { key: d.key, value: null, definition: d };
  const problem = problemWith(d, value);
  return problem ? { problem } : { key: d.key, value, definition: d };
}

/**
 * Validates a batch all-or-nothing: every change must pass, or one StrataError `invalid` lists
 * every problem (the message joins them; `details` has one entry each). A name given twice is
 * refused rather than guessed at.
 */
export function validateSettingChanges(scope: SettingScope, changes: SettingChange[]): ValidSettingChange[] {
  const problems: string[] = [];
  const out: ValidSettingChange[] = [];
  const seen = new Set<string>();
  for (const change of changes) {
    const checked = checkSettingChange(scope, change);
    if ('problem' in checked) {
      problems.push(checked.problem);
      continue;
    }
    if (seen.has(checked.key)) {
      problems.push(`Setting ${checked.key} is given more than once.`);
      continue;
    }
    seen.add(checked.key);
    out.push(checked);
  }
  if (problems.length) {
    const details: ErrorDetail[] = problems.map((message) => ({ message, tokens: [] }));
    throw new StrataError('invalid', problems.join(' '), { details });
  }
  return out;
}
