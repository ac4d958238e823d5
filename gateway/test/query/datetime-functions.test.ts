/**
 * Date and time functions (issue 17, family 2). Expected values are hand-written from Kusto's
 * documented behaviour (own dates), or computed from LOGS with JS Date arithmetic (a different
 * path than the engine's SQL). `print` runs in the gateway's merge database; queries over Logs
 * run on one worker and on three, and the summarize-then-extend query runs them in the merge.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, kustoDate, LOGS, run, sortedJson } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;
const DAY = 86_400_000;
const iso = (s: string) => kustoDate(Date.parse(s));
/** A JS Date as a Kusto datetime literal. */
const lit = (ms: number) => `datetime(${new Date(ms).toISOString().replace('T', ' ').replace('Z', '')})`;

describe('date and time functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('accessors of a leap day (Thursday); ISO week numbers at a year boundary', async () => {
    const r = await one(`let D = datetime(2024-02-29 13:45:30.250); print
      w = dayofweek(D), dm = dayofmonth(D), dy = dayofyear(D), y = getyear(D), m = getmonth(D), mo = monthofyear(D), h = hourofday(D),
      wk = week_of_year(D), wk2 = week_of_year(datetime(2021-01-01)), wk3 = week_of_year(datetime(2024-12-30)),
      sun = dayofweek(datetime(2024-03-03)), s1 = startofyear(D), s2 = startofyear(D, -1), n = getyear(datetime(null))`);
    assert.deepEqual(r, {
      w: '4.00:00:00',
      dm: 29,
      dy: 60,
      y: 2024,
      m: 2,
      mo: 2,
      h: 13,
      wk: 9,
      wk2: 53,
      wk3: 1,
      sun: '00:00:00',
      s1: iso('2024-01-01T00:00:00Z'),
      s2: iso('2023-01-01T00:00:00Z'),
      n: null,
    });
  });

  it('datetime_add: months clamp to the month’s last day; every part down to microseconds', async () => {
    const r = await one(`let D = datetime(2024-02-29 13:45:30.250); print
      a = datetime_add("month", 1, datetime(2024-01-31)), b = datetime_add("year", 1, D), c = datetime_add("quarter", -1, D),
      d = datetime_add("week", 2, D), e = datetime_add("day", -60, D), f = datetime_add("hour", 11, D), g = datetime_add("minute", -46, D),
      h = datetime_add("second", 30, D), i = datetime_add("millisecond", 750, D), j = datetime_add("microsecond", 5, D),
      k = datetime_add("Day", 1, datetime(null))`);
    assert.deepEqual(r, {
      a: iso('2024-02-29T00:00:00Z'),
      b: iso('2025-02-28T13:45:30.250Z'),
      c: iso('2023-11-29T13:45:30.250Z'),
      d: iso('2024-03-14T13:45:30.250Z'),
      e: kustoDate(Date.parse('2024-02-29T13:45:30.250Z') - 60 * DAY),
      f: iso('2024-03-01T00:45:30.250Z'),
      g: iso('2024-02-29T12:59:30.250Z'),
      h: iso('2024-02-29T13:46:00.250Z'),
      i: iso('2024-02-29T13:45:31.000Z'),
      j: '2024-02-29T13:45:30.2500050Z',
      k: null,
    });
    await assert.rejects(run('print datetime_add("fortnight", 1, now())'), /'fortnight' is not one of/);
  });

  it('datetime_diff counts boundaries crossed (first minus second), weeks from Sunday', async () => {
    const r = await one(`print
      y = datetime_diff("year", datetime(2025-01-01), datetime(2024-12-31 23:59)),
      q = datetime_diff("quarter", datetime(2024-04-01), datetime(2024-03-31)),
      m = datetime_diff("month", datetime(2024-03-01), datetime(2024-02-29 23:00)),
      w1 = datetime_diff("week", datetime(2024-03-03), datetime(2024-03-02)), w2 = datetime_diff("week", datetime(2024-03-09), datetime(2024-03-03)),
      d = datetime_diff("day", datetime(2024-03-01 00:00), datetime(2024-02-29 23:59)),
      h = datetime_diff("hour", datetime(2024-01-01 10:59), datetime(2024-01-01 10:01)),
      mi = datetime_diff("minute", datetime(2024-01-01 00:00), datetime(2024-01-01 00:02:30)),
      ms = datetime_diff("millisecond", datetime(2024-01-01 00:00:00.0019), datetime(2024-01-01 00:00:00.0001)),
      ns = datetime_diff("nanosecond", datetime(2024-01-01 00:00:00.001), datetime(2024-01-01)),
      n = datetime_diff("day", datetime(null), datetime(2024-01-01))`);
    assert.deepEqual(r, { y: 1, q: 1, m: 1, w1: 1, w2: 0, d: 1, h: 0, mi: -2, ms: 1, ns: 1_000_000, n: null });
  });

  it('a datetime below the 100 ns tick is refused where it is written, never rounded; whole microseconds stay exact', async () => {
    // The 7th digit is a tick Kusto keeps (datetime-ticks.test.ts); an 8th or 9th has no value to keep.
    for (const q of [
      'print datetime_diff("nanosecond", datetime(2023-03-04 05:06:07.00000001), datetime(2023-03-04 05:06:07.0000008))',
      'print todatetime("2023-03-04T05:06:07.12345678Z")',
      'print datetime(2023-03-04 05:06:07.000000010)',
    ])
      await assert.rejects(run(q), /has digits below Kusto's 100-nanosecond tick/);
    const r =
      await one(`print a = datetime_diff("nanosecond", datetime(2023-03-04 05:06:07.1234560), datetime(2023-03-04 05:06:07.123455)),
      b = datetime_diff("microsecond", datetime(2023-03-04 05:06:07.000002), datetime(2023-03-04 05:06:06.999999)),
      c = datetime_part("nanosecond", todatetime("2023-03-04T05:06:07.9876540Z"))`);
    assert.deepEqual(r, { a: 1000, b: 3, c: 987654000 });
  });

  it('format_timespan: every element, exact to the 100 ns tick, no sign; format_datetime drops the dot before empty F digits', async () => {
    const r = await one(`print a = format_timespan(2d + 3h + 4m + 5s + 607080tick, "d.hh:mm:ss.fffffff"),
      b = format_timespan(2d + 3h + 4m + 5s + 607080tick, "ddd h:m:s FFFFFFF F ff"),
      c = format_timespan(-90m, "hh:mm"), d = format_timespan(1tick, "fffffff|FFFFFFF|f"),
      e = format_timespan(timespan(null), "hh"), f = format_timespan(1234d, "dd/ddddd [HH]"),
      g = format_datetime(datetime(2024-01-02 03:04:05), "HH:mm:ss.FFF"), h = format_datetime(datetime(2024-01-02 03:04:05.120), "HH:mm:ss.FFF"),
      i = format_datetime(datetime(2024-01-02 03:04:05.120), "ss.fff")`);
    assert.deepEqual(r, {
      a: '2.03:04:05.0607080',
      b: '002 3:4:5 060708  06',
      c: '01:30',
      d: '0000001|0000001|0',
      e: '',
      f: '1234/01234 [00]',
      g: '03:04:05',
      h: '03:04:05.12',
      i: '05.120',
    });
    await assert.rejects(run('print format_timespan(1h, "hhh")'), /format_timespan: the format 'hhh' is not supported/);
    await assert.rejects(run('print format_timespan(now(), "hh")'), /must be timespan/);
    // Over stored rows (one worker and three): the JS arithmetic on the tick counts.
    const rows = await run('Logs | project id, t = format_timespan(duration, "d.hh:mm:ss.fffffff")');
    const two = (n: bigint) => String(n).padStart(2, '0');
    const want = LOGS.map((l) => {
      if (l.duration === null) return { id: l.id, t: '' };
      const t = l.duration;
      const text = `${t / 864_000_000_000n}.${two((t / 36_000_000_000n) % 24n)}:${two((t / 600_000_000n) % 60n)}:${two((t / 10_000_000n) % 60n)}.${String(t % 10_000_000n).padStart(7, '0')}`;
      return { id: l.id, t: text };
    });
    assert.deepEqual(sortedJson(rows.results), sortedJson(want));
  });

  it('todatetime reads the RFC 822 and RFC 850 forms, for constants and for column values alike', async () => {
    const r = await one(`print a = todatetime("Tue, 3 Feb 21 07:08:09 GMT"), b = todatetime("Wednesday, 17-Jul-96 23:59 PDT"),
      c = todatetime("5 Jan 2030 10:00:00.25 +0130"), d = todatetime("31 Feb 21 10:00"), e = todatetime("Tue, 3 Feb 21 07:08:09 XYZ"),
      f = todatetime(strcat("3 Feb 21 ", "07:08 UT")), g = datetime(4 Mar 29 01:02:03 edt), h = todatetime("3 Feb 21")`);
    assert.deepEqual(r, {
      a: '2021-02-03T07:08:09.0000000Z',
      b: '1996-07-18T06:59:00.0000000Z',
      c: '2030-01-05T08:30:00.2500000Z',
      d: null,
      e: null,
      f: '2021-02-03T07:08:00.0000000Z',
      g: '2029-03-04T05:02:03.0000000Z',
      h: null,
    });
    // Column values on the workers (one and three): each March timestamp written as RFC 850 in EST, read back.
    const rows = await run(
      'Logs | where getmonth(timestamp) == 3 | project id, back = todatetime(strcat("Sun, ", dayofmonth(timestamp), "-Mar-", getyear(timestamp) % 100, " ", format_datetime(timestamp, "HH:mm:ss.ffffff"), " EST"))',
    );
    const march = LOGS.filter((l) => l.timestamp.getUTCMonth() === 2);
    assert.ok(march.length > 10);
    const want = march.map((l) => ({ id: l.id, back: kustoDate(l.timestamp.getTime() + 5 * 3_600_000) }));
    assert.deepEqual(sortedJson(rows.results), sortedJson(want));
  });

  it('bin_auto bins by the query options: the size, and the fixed point when set; refused without a size', async () => {
    const r = await run(`set query_bin_auto_size = 1h;
      set query_bin_auto_at = datetime(2024-03-01 00:20);
      Logs | summarize n = count() by bin_auto(timestamp)`);
    const counts = new Map<string, number>();
    const at = Date.UTC(2024, 2, 1, 0, 20);
    for (const l of LOGS) {
      const t = l.timestamp.getTime();
      const bin = at + Math.floor((t - at) / 3_600_000) * 3_600_000;
      counts.set(kustoDate(bin), (counts.get(kustoDate(bin)) ?? 0) + 1);
    }
    assert.deepEqual(sortedJson(r.results), sortedJson([...counts].map(([timestamp, n]) => ({ timestamp, n }))));
    const plain = await one('set query_bin_auto_size = 7; print a = bin_auto(23), b = bin_auto(-1), c = bin_auto(2.5)');
    assert.deepEqual(plain, { a: 21, b: -7, c: 0 });
    await assert.rejects(
      run('print bin_auto(5)'),
      /bin_auto needs the bin size: put 'set query_bin_auto_size = <size>;' before the query/,
    );
  });

  it('totimespan reads timespan text (clock and unit forms) exactly, for constants and column values', async () => {
    const r = await one(`print a = totimespan("1.02:03:04.5"), b = totimespan("90m"), c = totimespan("nope"),
      d = totimespan("-00:00:01.0000001"), e = totimespan(strcat("2", "d")), f = totimespan("1.5h"), g = totimespan("25:00")`);
    assert.deepEqual(r, {
      a: '1.02:03:04.5000000',
      b: '01:30:00',
      c: null,
      d: '-00:00:01.0000001',
      e: '2.00:00:00',
      f: '01:30:00',
      g: null,
    });
    // Each stored duration written as text on the workers and read back, to the tick.
    const rows = await run('Logs | project id, ticks = tolong(totimespan(tostring(duration)))');
    const want = LOGS.map((l) => ({ id: l.id, ticks: l.duration === null ? null : Number(l.duration) }));
    assert.deepEqual(sortedJson(rows.results), sortedJson(want));
  });

  it('bin_at aligns bins to the fixed point for datetimes, timespans, longs and reals', async () => {
    const r = await one(`print
      a = bin_at(datetime(2024-03-10 12:40), 1h, datetime(2024-03-10 00:15)), b = bin_at(datetime(2024-03-10 00:05), 1h, datetime(2024-03-10 00:15)),
      c = bin_at(7, 5, 3), d = bin_at(-1, 5, 3), e = bin_at(6.5, 2.0, 0.5), f = bin_at(85m, 30m, 10m), g = bin_at(7, 0, 3)`);
    assert.deepEqual(r, {
      a: iso('2024-03-10T12:15:00Z'),
      b: iso('2024-03-09T23:15:00Z'),
      c: 3,
      d: -2,
      e: 6.5,
      f: '01:10:00',
      g: null,
    });
  });

  it('make_datetime and make_timespan; impossible dates give null', async () => {
    const r = await one(`print
      a = make_datetime(2024, 2, 29), b = make_datetime(2023, 2, 29), c = make_datetime(2024, 1, 2, 3, 4, 5.5), d = make_datetime(2024, 13, 1),
      e = make_datetime(2024, 1, 1, 24, 0), f = make_datetime(0, 1, 1),
      t1 = make_timespan(1, 30), t2 = make_timespan(2, 3, 4), t3 = make_timespan(1, 2, 3, 4), t4 = make_timespan(0, 90)`);
    await assert.rejects(run('print make_timespan(1, 2.5)'), /minutes of 'make_timespan' must be long/);
    assert.deepEqual(r, {
      a: iso('2024-02-29T00:00:00Z'),
      b: null,
      c: iso('2024-01-02T03:04:05.500Z'),
      d: null,
      e: null,
      f: null,
      t1: '01:30:00',
      t2: '02:03:04',
      t3: '1.02:03:04',
      t4: '01:30:00',
    });
  });

  it('datetime_add, startofyear with an offset and unixtime_* as summarize keys; past 0001–9999 gives null', async () => {
    // These were DuckDB try() expressions, which as GROUP BY keys failed DuckDB's binder (decision 0036).
    const r = await run(
      'Logs | summarize n = count() by d = datetime_add("day", 1, startofday(timestamp)), y = startofyear(timestamp, 1), u = unixtime_seconds_todatetime(1700000000 + latencyMs % 2) | summarize n = sum(n) by d, y',
    );
    const days = new Map<string, number>();
    for (const l of LOGS) {
      const t = l.timestamp;
      const k = kustoDate(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate() + 1));
      days.set(k, (days.get(k) ?? 0) + 1);
    }
    assert.deepEqual(sortedJson(r.results), sortedJson([...days].map(([d, n]) => ({ d, y: iso('2025-01-01T00:00:00Z'), n }))));
    const edge =
      await one(`print a = datetime_add("year", 7983, datetime(2017-01-01)), b = datetime_add("year", -2017, datetime(2017-01-01)),
      c = datetime_add("year", 7982, datetime(2017-01-01)), d = startofyear(datetime(2017-05-01), 7983), e = unixtime_seconds_todatetime(253402300800),
      f = unixtime_seconds_todatetime(253402300799), g = datetime_add("hour", 100000000000, datetime(2017-01-01))`);
    assert.deepEqual(edge, {
      a: null,
      b: null,
      c: iso('9999-01-01T00:00:00Z'),
      d: null,
      e: null,
      f: '9999-12-31T23:59:59.0000000Z',
      g: null,
    });
  });

  it('unixtime_*_todatetime in every unit; out of range gives null', async () => {
    const r = await one(`print
      s = unixtime_seconds_todatetime(1700000000), s2 = unixtime_seconds_todatetime(1.5), s3 = unixtime_seconds_todatetime(-1),
      ms = unixtime_milliseconds_todatetime(1700000000123), us = unixtime_microseconds_todatetime(1700000000123456),
      ns = unixtime_nanoseconds_todatetime(1700000000123456000), big = unixtime_seconds_todatetime(1000000000000000), n = unixtime_seconds_todatetime(long(null))`);
    assert.deepEqual(r, {
      s: kustoDate(1_700_000_000_000),
      s2: kustoDate(1500),
      s3: kustoDate(-1000),
      ms: kustoDate(1_700_000_000_123),
      us: '2023-11-14T22:13:20.1234560Z',
      ns: '2023-11-14T22:13:20.1234560Z',
      big: null,
      n: null,
    });
  });

  it('time zones: UTC to wall clock and back, across a daylight-saving change', async () => {
    const r = await one(`print
      a = datetime_utc_to_local(datetime(2024-07-01 12:00), "Europe/Berlin"), b = datetime_utc_to_local(datetime(2024-01-15 12:00), "America/New_York"),
      c = datetime_local_to_utc(datetime(2024-07-01 14:00), "Europe/Berlin"),
      d = datetime_utc_to_local(datetime(2024-03-31 00:59:59), "Europe/Berlin"), e = datetime_utc_to_local(datetime(2024-03-31 01:00:00), "Europe/Berlin"),
      f = datetime_utc_to_local(datetime(2024-07-01 12:00), "UTC")`);
    assert.deepEqual(r, {
      a: iso('2024-07-01T14:00:00Z'),
      b: iso('2024-01-15T07:00:00Z'),
      c: iso('2024-07-01T12:00:00Z'),
      d: iso('2024-03-31T01:59:59Z'),
      e: iso('2024-03-31T03:00:00Z'),
      f: iso('2024-07-01T12:00:00Z'),
    });
    await assert.rejects(run('print datetime_utc_to_local(now(), "Mars/Olympus")'), /not a known time zone/);
    await assert.rejects(run('print dayofmonth("2024-01-01")'), /must be datetime/);
  });

  it('over stored rows on one and three workers, and in the merge after a summarize', async () => {
    const base = Date.UTC(2024, 2, 9);
    const r = await run(
      'Logs | project id, dm = dayofmonth(timestamp), w = dayofweek(timestamp), h = hourofday(timestamp), mins = datetime_diff("minute", timestamp, datetime(2024-03-09)), b = bin_at(timestamp, 1h, datetime(2024-03-09 00:30))',
    );
    const expected = LOGS.map((l) => {
      const t = l.timestamp.getTime();
      const hour = 3_600_000;
      const b = t - ((((t - (base + hour / 2)) % hour) + hour) % hour);
      return {
        id: l.id,
        dm: l.timestamp.getUTCDate(),
        w: `${l.timestamp.getUTCDay() ? `${l.timestamp.getUTCDay()}.` : ''}00:00:00`,
        h: l.timestamp.getUTCHours(),
        mins: Math.floor((t - base) / 60_000),
        b: kustoDate(b),
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const merged = await run(
      'Logs | summarize t = max(timestamp) by level | extend y = getyear(t), next = datetime_add("day", 1, startofday(t))',
    );
    const levels = [...new Set(LOGS.map((l) => l.level))];
    const expectedMerge = levels.map((level) => {
      const t = Math.max(...LOGS.filter((l) => l.level === level).map((l) => l.timestamp.getTime()));
      return { level, t: kustoDate(t), y: new Date(t).getUTCFullYear(), next: kustoDate(Math.floor(t / DAY) * DAY + DAY) };
    });
    assert.deepEqual(sortedJson(merged.results), sortedJson(expectedMerge));
  });

  it('property: datetime_diff in days and weeks and bin_at agree with JS date arithmetic', async function () {
    this.timeout(60_000);
    const ms = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) });
    const sundayOf = (t: number) => Math.floor(t / DAY) * DAY - new Date(t).getUTCDay() * DAY;
    await fc.assert(
      fc.asyncProperty(ms, ms, async (a, b) => {
        const r = await one(
          `print d = datetime_diff("day", ${lit(a)}, ${lit(b)}), w = datetime_diff("week", ${lit(a)}, ${lit(b)}), x = bin_at(${lit(a)}, 7d, ${lit(b)})`,
        );
        const week = 7 * DAY;
        assert.deepEqual(r, {
          d: Math.floor(a / DAY) - Math.floor(b / DAY),
          w: (sundayOf(a) - sundayOf(b)) / week,
          x: kustoDate(a - ((((a - b) % week) + week) % week)),
        });
      }),
      { numRuns: 40 },
    );
  });
});
