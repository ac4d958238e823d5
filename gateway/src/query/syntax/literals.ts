/**
 * Literal values read from their token text. The Kusto bridge's boxed values are not used for
 * numbers, datetimes and timespans: in this build they lose hex values (`0x1F` → 0), `real(nan)`
 * and `time(1.02:03:04)`. Datetimes become microseconds since the Unix epoch (UTC; an explicit
 * offset is converted), timespans become 100 ns ticks, longs stay exact as bigint.
 */
import {
  parseRfcDateTime,
  parseTimespanText,
  parseTimespanUnitText,
  scaleDecimal,
  TICKS_PER_DAY,
  TICKS_PER_SECOND,
} from '@strata/common';

export { TICKS_PER_DAY, TICKS_PER_SECOND };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** DateTime range Kusto allows (0001-01-01 … 9999-12-31), in µs since the Unix epoch. */
export const MIN_DATETIME_US = -62135596800000000n;
export const MAX_DATETIME_US = 253402300799999999n;

function inner(text: string, names: readonly string[]): string | undefined {
  const m = /^([A-Za-z]+)\s*\(([\s\S]*)\)$/.exec(text.trim());
  if (!m || !names.includes((m[1] as string).toLowerCase())) return undefined;
  let content = (m[2] as string).trim();
  if (/^(['"]).*\1$/s.test(content)) content = content.slice(1, -1).trim();
  return content;
}

export function parseLongLiteral(text: string): bigint | null | undefined {
  const content = inner(text, ['long', 'int', 'int64', 'int32']) ?? text.trim();
  if (content.toLowerCase() === 'null') return null;
  let value: bigint;
  if (/^[+-]?0[xX][0-9a-fA-F]+$/.test(content)) {
    const neg = content.startsWith('-');
    value = BigInt(content.replace(/^[+-]/, ''));
    if (neg) value = -value;
  } else if (/^[+-]?[0-9]+$/.test(content)) {
    value = BigInt(content);
  } else {
    return undefined;
  }
  return value < INT64_MIN || value > INT64_MAX ? undefined : value;
}

export function parseRealLiteral(text: string): number | null | undefined {
  const content = inner(text, ['real', 'double', 'float']) ?? text.trim();
  const lower = content.toLowerCase();
  if (lower === 'null') return null;
  if (lower === 'nan') return Number.NaN;
  if (lower === '+inf' || lower === 'inf') return Number.POSITIVE_INFINITY;
  if (lower === '-inf') return Number.NEGATIVE_INFINITY;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(content)) return undefined;
  return Number(content);
}

export function parseBoolLiteral(text: string): boolean | null | undefined {
  const content = (inner(text, ['bool', 'boolean']) ?? text.trim()).toLowerCase();
  if (content === 'null') return null;
  if (content === 'true' || content === '1') return true;
  if (content === 'false' || content === '0') return false;
  return undefined;
}

export function parseGuidLiteral(text: string): string | null | undefined {
  const content = inner(text, ['guid', 'uuid']) ?? text.trim();
  if (content.toLowerCase() === 'null') return null;
  const hex = content.replace(/[{}]/g, '');
  if (!/^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/.test(hex)) return undefined;
  const h = hex.replace(/-/g, '').toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Days from 1970-01-01 to the given proleptic Gregorian date (any year 1…9999). */
function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * A datetime string in the ISO forms Kusto accepts (`2024-01-02`, `2024-01-02T03:04:05.1234567Z`,
 * `2024-01-02 03:04`, `2022/01/10`, with `Z` or `±hh:mm`, `±hhmm`, `±hh` offsets — ISO 8601's three offset
 * forms; decision 0048) → µs since the Unix epoch.
 */
export function parseDateTimeText(content: string): bigint | undefined {
  const text = content.trim();
  const m =
    /^(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i.exec(
      text,
    );
  if (!m) return parseRfcDateTime(content);
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const [h, mi, s] = [Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0)];
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return undefined;
  const monthDays = [31, y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  if (d > (monthDays[mo - 1] as number)) return undefined;
  const frac = ((m[7] ?? '') + '000000').slice(0, 6);
  let micros = BigInt(daysFromCivil(y, mo, d)) * 86_400_000_000n + BigInt(h * 3600 + mi * 60 + s) * 1_000_000n + BigInt(frac);
  const offset = m[8];
  // A `±` offset follows a time with seconds directly, as the datetime type's ISO forms write `%z`
  // (`%H:%M:%s%z`) and as the per-row parse reads it (bound.ts parseDatetimeSql): a date's `-02` is
  // part of no datetime, and the constant and the per-row answer must agree (decision 0048).
  if (offset && offset.toUpperCase() !== 'Z' && (m[6] === undefined || /\s$/.test(text.slice(0, text.length - offset.length))))
    return undefined;
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset.startsWith('-') ? -1n : 1n;
    const digits = offset.slice(1).replace(':', '');
    const minutes = BigInt(Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2)));
    micros -= sign * minutes * 60_000_000n;
  }
  if (micros < MIN_DATETIME_US || micros > MAX_DATETIME_US) return undefined;
  return micros;
}

/**
 * True when a datetime text carries a non-zero digit below Kusto's 100 ns tick (the 8th or 9th
 * fractional digit). Kusto's datetime holds ticks, so such a digit has no value to keep; it is
 * refused where it is written rather than rounded one way or the other.
 */
export function hasSubMicrosecondDigits(content: string): boolean {
  const m = /[T ]\d{1,2}:\d{2}:\d{2}\.(\d{8,9})/i.exec(content);
  return m !== null && /[1-9]/.test((m[1] as string).slice(7));
}

/**
 * The 7th fractional digit of a datetime text (the 100 ns tick below the microsecond), 0 when
 * absent. A non-zero digit makes the value a datetime carried as ticks (decision 0036).
 */
export function tickDigit(content: string): number {
  const m = /[T ]\d{1,2}:\d{2}:\d{2}\.(\d{7,9})/i.exec(content);
  return m ? Number((m[1] as string)[6]) : 0;
}

/** The message for a datetime text that `hasSubMicrosecondDigits` refuses. */
export function subMicrosecondMessage(text: string): string {
  return `The datetime '${text}' has digits below Kusto's 100-nanosecond tick (the 8th and 9th fractional digits), which a datetime cannot hold; it is refused rather than rounded.`;
}

export function parseDateTimeLiteral(text: string): bigint | null | undefined {
  const content = inner(text, ['datetime', 'date']);
  if (content === undefined) return undefined;
  if (content.toLowerCase() === 'null') return null;
  return parseDateTimeText(content);
}

export function parseTimespanLiteral(text: string): bigint | null | undefined {
  const content = inner(text, ['time', 'timespan']);
  if (content === undefined) return parseTimespanUnitText(text);
  if (content.toLowerCase() === 'null') return null;
  if (/^[+-]?\d*\.?\d+$/.test(content)) return scaleDecimal(content, TICKS_PER_DAY); // time(2) is two days
  return parseTimespanText(content);
}
