/**
 * Result values as clients expect them: DateTime as fixed-width UTC ISO strings with 7 fractional
 * digits (Grafana sorts them as strings), TimeSpan as `[-][d.]hh:mm:ss[.fffffff]`, Int64 and
 * Float64 as JSON numbers (non-finite reals as "NaN", "Infinity", "-Infinity"), Decimal as its
 * SqlDecimal text in a JSON string ("1.50": every digit and the scale kept, which a JSON number read
 * as a double would lose; Grafana's converter takes a numeric string), Dynamic as JSON, strings
 * never null.
 */
import { decodeDecimal, sqlDecimal } from '@strata/common';
import { INT32_RESULT_TYPE } from '../semantic/int-columns.js';
import { type KqlType, RESULT_TYPE_NAME } from '../types.js';

const pad = (n: number | bigint, width: number) => String(n).padStart(width, '0');

/** Civil date from days since 1970-01-01 (proleptic Gregorian). */
function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [era * 400 + yoe + (m <= 2 ? 1 : 0), m, d];
}

const DAY_US = 86_400_000_000;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** The date part of the last day formatted: result rows mostly share a few days. */
let lastDay = Number.NaN;
let lastDayText = '';

/** µs since the Unix epoch → `2024-02-21T07:50:00.0000000Z`. */
export function formatDateTime(micros: bigint): string {
  if (micros < -MAX_SAFE_US || micros > MAX_SAFE_US) return formatDateTimeBig(micros);
  // Safe integers (years 1685–2255): exact in doubles, and much cheaper than BigInt arithmetic.
  const us = Number(micros);
  let days = Math.floor(us / DAY_US);
  let rem = us - days * DAY_US;
  // The division may round across a day boundary; the remainder is exact and corrects it.
  if (rem < 0) {
    days -= 1;
    rem += DAY_US;
  } else if (rem >= DAY_US) {
    days += 1;
    rem -= DAY_US;
  }
  if (days !== lastDay) {
    const [y, m, d] = civilFromDays(days);
    lastDayText = `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T`;
    lastDay = days;
  }
  const secs = Math.floor(rem / 1_000_000);
  const frac = rem - secs * 1_000_000;
  const h = Math.floor(secs / 3600);
  const mi = Math.floor((secs - h * 3600) / 60);
  const s = secs - h * 3600 - mi * 60;
  return `${lastDayText}${TWO_DIGITS[h]}:${TWO_DIGITS[mi]}:${TWO_DIGITS[s]}.${pad(frac, 6)}0Z`;
}

const MAX_SAFE_US = BigInt(Number.MAX_SAFE_INTEGER);

function formatDateTimeBig(micros: bigint): string {
  const dayUs = 86_400_000_000n;
  let days = micros / dayUs;
  let rem = micros % dayUs;
  if (rem < 0n) {
    rem += dayUs;
    days -= 1n;
  }
  const [y, m, d] = civilFromDays(Number(days));
  const secs = Number(rem / 1_000_000n);
  const frac = Number(rem % 1_000_000n);
  const h = Math.floor(secs / 3600);
  const mi = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}.${pad(frac, 6)}0Z`;
}

/** Ticks (100 ns) → `[-][d.]hh:mm:ss[.fffffff]`. */
export function formatTimespan(ticks: bigint): string {
  const neg = ticks < 0n;
  let t = neg ? -ticks : ticks;
  const day = 864_000_000_000n;
  const days = t / day;
  t %= day;
  const h = t / 36_000_000_000n;
  t %= 36_000_000_000n;
  const m = t / 600_000_000n;
  t %= 600_000_000n;
  const s = t / 10_000_000n;
  const f = t % 10_000_000n;
  return `${neg ? '-' : ''}${days > 0n ? `${days}.` : ''}${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}${f > 0n ? `.${pad(f, 7)}` : ''}`;
}

export type ResultValue = string | number | boolean | null | object;

/** A value read from the merge statement (see readableColumn) → its JSON form. */
export function formatValue(type: KqlType, raw: unknown): ResultValue {
  switch (type) {
    case 'string':
      return raw === null || raw === undefined ? '' : String(raw);
    case 'long':
      return raw === null || raw === undefined ? null : Number(raw as bigint);
    case 'real': {
      if (raw === null || raw === undefined) return null;
      const n = Number(raw);
      if (Number.isNaN(n)) return 'NaN';
      if (n === Number.POSITIVE_INFINITY) return 'Infinity';
      if (n === Number.NEGATIVE_INFINITY) return '-Infinity';
      return n;
    }
    case 'decimal': {
      // The cell travels as is (readable form = wire form); its text is made here.
      const v = typeof raw === 'string' ? decodeDecimal(raw) : undefined;
      return v ? sqlDecimal.toText(v) : null;
    }
    case 'bool':
      return raw === null || raw === undefined ? null : Boolean(raw);
    case 'datetime':
      // A datetime carried as ticks arrives as its text already (readableColumn; decision 0036).
      if (typeof raw === 'string') return raw;
      return raw === null || raw === undefined ? null : formatDateTime(BigInt(raw as bigint));
    case 'timespan':
      return raw === null || raw === undefined ? null : formatTimespan(BigInt(raw as bigint));
    case 'guid':
      return raw === null || raw === undefined ? null : String(raw);
    case 'dynamic':
      if (raw === null || raw === undefined) return null;
      try {
        return JSON.parse(String(raw)) as ResultValue;
      } catch {
        return String(raw);
      }
  }
}

export interface QueryResult {
  header: string[];
  columns: { name: string; type: string }[];
  results: Record<string, ResultValue>[];
  render?: { chartType: string; options?: Record<string, unknown> };
  /** True when the row cap cut the result. */
  truncated: boolean;
}

/** The answer's column types; a long Kusto types int (getyear, datetime_part, …) shows Int32 (decision 0048). */
export function resultColumns(columns: { name: string; type: KqlType; int32?: boolean }[]): QueryResult['columns'] {
  return columns.map((c) => ({ name: c.name, type: c.int32 ? INT32_RESULT_TYPE : RESULT_TYPE_NAME[c.type] }));
}
