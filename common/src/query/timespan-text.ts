/**
 * Timespan text as Kusto writes it — `5m`, `1.5h`, `10ms`, `2d`, `3tick`, or `[-][d.]hh:mm[:ss[.fffffff]]`
 * — to 100 ns ticks, exactly (decimal arithmetic on the digits, no floating point). Shared by the
 * gateway's literal reader and `kql_timespan_ticks`, the JS function `totimespan` of a column runs
 * inside DuckDB, so a constant and a column value read the same text the same way.
 */

const TICKS_PER_MICRO = 10n;
const TICKS_PER_MS = 10_000n;
export const TICKS_PER_SECOND = 10_000_000n;
const TICKS_PER_MINUTE = 60n * TICKS_PER_SECOND;
const TICKS_PER_HOUR = 60n * TICKS_PER_MINUTE;
export const TICKS_PER_DAY = 24n * TICKS_PER_HOUR;

const UNIT_TICKS: Record<string, bigint> = {
  d: TICKS_PER_DAY,
  day: TICKS_PER_DAY,
  days: TICKS_PER_DAY,
  h: TICKS_PER_HOUR,
  hr: TICKS_PER_HOUR,
  hrs: TICKS_PER_HOUR,
  hour: TICKS_PER_HOUR,
  hours: TICKS_PER_HOUR,
  m: TICKS_PER_MINUTE,
  min: TICKS_PER_MINUTE,
  minute: TICKS_PER_MINUTE,
  minutes: TICKS_PER_MINUTE,
  s: TICKS_PER_SECOND,
  sec: TICKS_PER_SECOND,
  second: TICKS_PER_SECOND,
  seconds: TICKS_PER_SECOND,
  ms: TICKS_PER_MS,
  milli: TICKS_PER_MS,
  millis: TICKS_PER_MS,
  millisecond: TICKS_PER_MS,
  milliseconds: TICKS_PER_MS,
  us: TICKS_PER_MICRO,
  microsecond: TICKS_PER_MICRO,
  microseconds: TICKS_PER_MICRO,
  tick: 1n,
  ticks: 1n,
};

/** Multiplies a decimal number text by a tick count exactly (no floating point). */
export function scaleDecimal(numberText: string, unit: bigint): bigint | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(numberText);
  if (!m || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) return undefined;
  const fraction = m[3] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const whole = BigInt((m[2] || '0') + fraction);
  const ticks = (whole * unit) / scale;
  return m[1] === '-' ? -ticks : ticks;
}

/** `5m`, `1.5h`, `10ms`, `2d` → ticks. */
export function parseTimespanUnitText(text: string): bigint | undefined {
  const m = /^([+-]?\d*\.?\d+)\s*([A-Za-z]+)$/.exec(text.trim());
  if (!m) return undefined;
  const unitName = (m[2] as string).toLowerCase();
  const unit = Object.hasOwn(UNIT_TICKS, unitName) ? UNIT_TICKS[unitName] : undefined;
  if (unit === undefined) return undefined;
  return scaleDecimal(m[1] as string, unit);
}

/** `[-][d.]hh:mm[:ss[.fffffff]]` → ticks. */
function parseTimespanClockText(text: string): bigint | undefined {
  const m = /^([+-]?)(?:(\d+)\.)?(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,7}))?)?$/.exec(text.trim());
  if (!m) return undefined;
  const days = BigInt(m[2] ?? '0');
  const [h, mi, s] = [BigInt(m[3] as string), BigInt(m[4] as string), BigInt(m[5] ?? '0')];
  if (h > 23n || mi > 59n || s > 59n) return undefined;
  const frac = BigInt(((m[6] ?? '') + '0000000').slice(0, 7));
  const ticks = days * TICKS_PER_DAY + h * TICKS_PER_HOUR + mi * TICKS_PER_MINUTE + s * TICKS_PER_SECOND + frac;
  return m[1] === '-' ? -ticks : ticks;
}

/** Unit or clock form → ticks; undefined when the text is neither. */
export function parseTimespanText(text: string): bigint | undefined {
  return parseTimespanUnitText(text) ?? parseTimespanClockText(text);
}
