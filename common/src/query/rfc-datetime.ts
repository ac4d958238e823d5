/**
 * The RFC 822 and RFC 850 datetime forms Kusto's `todatetime` and `datetime()` accept beside
 * ISO 8601 (`Sat, 8 Nov 14 15:05:02 GMT`, `Saturday, 08-Nov-14 15:05 EST`, `8 Nov 2014 15:05`).
 * ISO text is read elsewhere (DuckDB's cast for columns, the gateway's literal reader for
 * constants); this reader runs where those fail, in the gateway for constants and inside DuckDB as
 * `kql_rfc_datetime_us` for column values, so both give the same answer.
 *
 * The weekday is optional and not checked against the date (Kusto does not either); two-digit years
 * use .NET's default window (00–29 → 20xx, 30–99 → 19xx); zones are GMT/UT/UTC/Z, the four US
 * zones with daylight forms, and ±hhmm. Seconds may carry a fraction down to the microsecond.
 */

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

const ZONE_MINUTES: Record<string, number> = {
  gmt: 0,
  ut: 0,
  utc: 0,
  z: 0,
  est: -300,
  edt: -240,
  cst: -360,
  cdt: -300,
  mst: -420,
  mdt: -360,
  pst: -480,
  pdt: -420,
};

const PATTERN =
  /^(?:[A-Za-z]+,\s*)?(\d{1,2})([\s-])([A-Za-z]{3})\2(\d{2}|\d{4})\s+(\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(?:\s+([A-Za-z]{1,3}|[+-]\d{4}))?$/;

/** Microseconds since the Unix epoch, or undefined when the text is not one of the forms. */
export function parseRfcDateTime(text: string): bigint | undefined {
  const m = PATTERN.exec(text.trim());
  if (!m) return undefined;
  const day = Number(m[1]);
  const month = MONTHS.indexOf((m[3] as string).toLowerCase());
  const yearText = m[4] as string;
  let year = Number(yearText);
  if (yearText.length === 2) year += year < 30 ? 2000 : 1900;
  const [hour, minute, second] = [Number(m[5]), Number(m[6]), Number(m[7] ?? 0)];
  if (month < 0 || hour > 23 || minute > 59 || second > 59 || day < 1) return undefined;
  const ms = Date.UTC(year, month, day, hour, minute, second);
  const check = new Date(ms);
  // Date.UTC rolls 31 Feb over into March: only days that exist are dates.
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month) return undefined;
  let offsetMinutes = 0;
  const zone = m[9];
  if (zone !== undefined) {
    if (/^[+-]\d{4}$/.test(zone)) {
      const sign = zone.startsWith('-') ? -1 : 1;
      offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3)));
    } else {
      const known = ZONE_MINUTES[zone.toLowerCase()];
      if (known === undefined) return undefined;
      offsetMinutes = known;
    }
  }
  const fraction = BigInt(((m[8] ?? '') + '000000').slice(0, 6));
  return BigInt(ms) * 1000n + fraction - BigInt(offsetMinutes) * 60_000_000n;
}
