/**
 * ISO 8601 timestamps as inflow accepts them, converted to microseconds since the Unix epoch (UTC).
 *
 * Accepted: `YYYY-MM-DDThh:mm:ss`, optional fraction of 1–9 digits (`.` or `,`), then `Z`, an
 * offset `±hh:mm` / `±hhmm` / `±hh`, or nothing (taken as UTC: clients send timestamps in
 * UTC, docs/compatibility.md). `T` may be `t` or a space. Offsets are converted to UTC. Digits beyond microseconds are
 * truncated (storage holds microseconds). Years 0001–9999.
 */
const ISO = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  if (month === 2 && year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)) return 29;
  return DAYS_IN_MONTH[month - 1]!;
}

/** Epoch milliseconds of recently seen dates (`YYYY-MM-DD`): a batch's entries share a few days. */
const dayCache = new Map<string, number>();

function digits(text: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * The common shapes without a regular expression: `YYYY-MM-DDThh:mm:ssZ` and with a 3- or
 * 6-digit fraction (JavaScript's toISOString, most agents). Undefined: use the general parser.
 */
function parseCommon(text: string): number | undefined {
  const len = text.length;
  if ((len !== 20 && len !== 24 && len !== 27) || text.charCodeAt(len - 1) !== 90 /* Z */ || text.charCodeAt(10) !== 84 /* T */)
    return undefined;
  if (text.charCodeAt(13) !== 58 || text.charCodeAt(16) !== 58) return undefined;
  const day = text.slice(0, 10);
  let dayMs = dayCache.get(day);
  if (dayMs === undefined) {
    const full = parseGeneral(`${day}T00:00:00Z`);
    if (full === undefined) return undefined;
    dayMs = full / 1000;
    if (dayCache.size > 1000) dayCache.clear();
    dayCache.set(day, dayMs);
  }
  const hour = digits(text, 11, 2);
  const minute = digits(text, 14, 2);
  const second = digits(text, 17, 2);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return undefined;
  let fraction = 0;
  if (len > 20) {
    if (text.charCodeAt(19) !== 46 /* . */) return undefined;
    fraction = digits(text, 20, len - 21);
    if (fraction < 0) return undefined;
    if (len === 24) fraction *= 1000;
  }
  return (dayMs + ((hour * 60 + minute) * 60 + second) * 1000) * 1000 + fraction;
}

/** Digits of `bytes[from, from + count)` as a number, -1 when one is not a digit. */
function byteDigits(bytes: Uint8Array, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = bytes[i]! - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/**
 * parseIsoTimestampMicros of the ASCII text `bytes[s, e)`, without making a string for the common
 * shapes (`YYYY-MM-DDThh:mm:ssZ`, with a 3- or 6-digit fraction); other shapes go through the
 * string parser.
 */
export function parseIsoTimestampMicrosOfBytes(bytes: Buffer, s: number, e: number): number | undefined {
  const len = e - s;
  if (
    (len === 20 || len === 24 || len === 27) &&
    bytes[e - 1] === 90 /* Z */ &&
    bytes[s + 10] === 84 /* T */ &&
    bytes[s + 4] === 45 &&
    bytes[s + 7] === 45 &&
    bytes[s + 13] === 58 &&
    bytes[s + 16] === 58 &&
    (len === 20 || bytes[s + 19] === 46) /* . */
  ) {
    const year = byteDigits(bytes, s, 4);
    const month = byteDigits(bytes, s + 5, 2);
    const day = byteDigits(bytes, s + 8, 2);
    const hour = byteDigits(bytes, s + 11, 2);
    const minute = byteDigits(bytes, s + 14, 2);
    const second = byteDigits(bytes, s + 17, 2);
    const fraction = len === 20 ? 0 : byteDigits(bytes, s + 20, len - 21);
    if (
      year >= 1 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      day <= daysIn(year, month) &&
      hour >= 0 &&
      hour <= 23 &&
      minute >= 0 &&
      minute <= 59 &&
      second >= 0 &&
      second <= 59 &&
      fraction >= 0
    )
      return (
        (daysFromCivil(year, month, day) * 86_400 + (hour * 60 + minute) * 60 + second) * 1_000_000 +
        (len === 24 ? fraction * 1000 : fraction)
      );
  }
  return parseIsoTimestampMicros(bytes.toString('latin1', s, e));
}

/** Microseconds since the epoch, or undefined when `text` is not an accepted timestamp. */
export function parseIsoTimestampMicros(text: string): number | undefined {
  return parseCommon(text) ?? parseGeneral(text);
}

function parseGeneral(text: string): number | undefined {
  const m = ISO.exec(text);
  if (!m) return undefined;
  const year = +m[1]!;
  const month = +m[2]!;
  const day = +m[3]!;
  const hour = +m[4]!;
  const minute = +m[5]!;
  const second = +m[6]!;
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offsetMinutes = 0;
  if (m[9]) {
    const oh = +m[10]!;
    const om = m[11] === undefined ? 0 : +m[11];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = m[7] === undefined ? 0 : +`${m[7]}000000`.slice(0, 6);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // Date.UTC maps years 0–99 to 1900–1999
  date.setUTCHours(hour, minute, second, 0);
  return (date.getTime() - offsetMinutes * 60_000) * 1000 + fraction;
}

/**
 * Cheap pre-check before the full parse: data strings are tested for being timestamps (DateTime
 * inference), and most strings fail on the first characters.
 */
export function mightBeIsoTimestamp(text: string): boolean {
  return (
    text.length >= 19 &&
    text.length <= 35 &&
    text.charCodeAt(4) === 45 &&
    text.charCodeAt(7) === 45 &&
    text.charCodeAt(13) === 58 &&
    text.charCodeAt(0) >= 48 &&
    text.charCodeAt(0) <= 57
  );
}
