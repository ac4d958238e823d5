/**
 * The setting value types (docs/api.md, Settings) and their parsers. Parsers return
 * undefined for text that is not a value of the type; the catalogue's validation turns that into a
 * 400 naming the setting. Stored values are kept as the text the user sent (trimmed) and parsed
 * again where they are used, so what a client reads back is what it wrote.
 */

export type SettingType = 'string' | 'TimeSpan' | 'size' | 'int' | 'retention';

/** Accepted size units and their byte multiples (binary: 1 KB = 1024 B, as sizes of files go). */
const SIZE_UNITS = { B: 1, KB: 1024, MB: 1024 ** 2, GB: 1024 ** 3 } as const;
export type SizeUnit = keyof typeof SIZE_UNITS;

/**
 * `<integer>[ ]<unit>` with unit B, KB, MB or GB in any case: `1 GB`, `512mb`, `10 B`. Decimals,
 * signs and other units (`5 TB`, `1.5GB`) are not sizes. Returns bytes, or undefined.
 */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+) ?([A-Za-z]+)$/.exec(text.trim());
  if (!m) return undefined;
  const unit = m[2]!.toUpperCase();
  if (!Object.hasOwn(SIZE_UNITS, unit)) return undefined;
  const bytes = Number(m[1]) * SIZE_UNITS[unit as SizeUnit];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/**
 * A TimeSpan `hh:mm:ss` (`00:15:00`, `01:00:00`, `06:00:00`); hours 0–23, minutes and seconds
 * 00–59. A leading day count (`1.00:00:00`, the .NET form the documented format comes from) is also
 * accepted so that spans of a day or more can be written. Returns milliseconds, or undefined.
 */
export function parseTimeSpan(text: string): number | undefined {
  const m = /^(?:(\d{1,4})\.)?(\d{1,2}):([0-5]\d):([0-5]\d)$/.exec(text.trim());
  if (!m) return undefined;
  const days = m[1] === undefined ? 0 : Number(m[1]);
  const hours = Number(m[2]);
  if (hours > 23) return undefined;
  return (((days * 24 + hours) * 60 + Number(m[3])) * 60 + Number(m[4])) * 1000;
}

/** Formats milliseconds as `hh:mm:ss` (or `d.hh:mm:ss` from a day on); sub-second parts are dropped. */
export function formatTimeSpan(ms: number): string {
  const total = Math.floor(ms / 1000);
  const days = Math.floor(total / 86_400);
  const two = (n: number) => String(n).padStart(2, '0');
  const hms = `${two(Math.floor((total % 86_400) / 3600))}:${two(Math.floor((total % 3600) / 60))}:${two(total % 60)}`;
  return days > 0 ? `${days}.${hms}` : hms;
}

const RETENTION_UNITS_MS = { d: 86_400_000, h: 3_600_000, m: 60_000 } as const;

/**
 * A retention period as people type it: a TimeSpan with days (`30.00:00:00`, `12:00:00`) or a
 * whole number with a unit `d`, `h` or `m` (`30d`, `90 d`, `12h`, `45m`; case-insensitive), or
 * `forever` (keep everything; the same as no value). Returns milliseconds, `Infinity` for forever,
 * or undefined for anything else.
 */
export function parseRetention(text: string): number | undefined {
  const t = text.trim().toLowerCase();
  if (t === 'forever') return Number.POSITIVE_INFINITY;
  const m = /^(\d{1,6}) ?([dhm])$/.exec(t);
  if (m) {
    const ms = Number(m[1]) * RETENTION_UNITS_MS[m[2] as keyof typeof RETENTION_UNITS_MS];
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const long = /^(\d{1,6})\.(\d{1,2}):([0-5]\d):([0-5]\d)$/.exec(t);
  if (long) {
    if (Number(long[2]) > 23) return undefined;
    return parseTimeSpan(`${long[2]}:${long[3]}:${long[4]}`)! + Number(long[1]) * 86_400_000;
  }
  return parseTimeSpan(t);
}

/** An optionally signed decimal integer within the safe integer range; undefined otherwise. */
export function parseIntValue(text: string): number | undefined {
  const t = text.trim();
  if (!/^[+-]?\d{1,16}$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/**
 * `host:port` of a mail server: a host name or IPv4 address, or a bracketed IPv6 address, and a
 * port 1–65535. Returns the parts, or undefined.
 */
export function parseHostPort(text: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65_535) return undefined;
  const host = m[1]!.startsWith('[') ? m[1]!.slice(1, -1) : m[1]!;
  return { host, port };
}
