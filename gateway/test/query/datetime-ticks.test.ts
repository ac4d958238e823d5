/**
 * Datetimes with Kusto's 100 ns ticks (decision 0036): endofday/week/month/year, nanosecond adds,
 * 7-digit literals and everything that reads them. Expected values are hand-written from Kusto's
 * documented behaviour (own dates), or computed in JS with Date.UTC and BigInt ticks (a different
 * path than the engine's SQL). `print` runs in the gateway's merge database; queries over Logs run
 * on one worker and on three (fixture.run insists on the same answer), with the summarize keys
 * merged at the gateway.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { xxhash64 } from 'hash-wasm';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

/** Kusto's text of a datetime given as ticks since the Unix epoch (may be negative). */
function ticksIso(t: bigint): string {
  const sec = t >= 0n ? t / 10_000_000n : -((-t + 9_999_999n) / 10_000_000n);
  const frac = t - sec * 10_000_000n;
  const d = new Date(Number(sec) * 1000);
  return d.toISOString().replace(/\.\d{3}Z$/, `.${String(frac).padStart(7, '0')}Z`);
}

/** A datetime literal of ticks since the Unix epoch, with all 7 fractional digits. */
const tickLit = (t: bigint) => `datetime(${ticksIso(t).replace('T', ' ').replace('Z', '')})`;

/** The last tick before a JS millisecond instant. */
const lastTickBefore = (ms: number) => ticksIso(BigInt(ms) * 10_000n - 1n);

/** Ticks since 0001-01-01 (Kusto's `tolong` of a datetime) of ticks since the Unix epoch. */
const kustoTicks = (t: bigint) => t + 621_355_968_000_000_000n;

/** Kusto's endof… in JS: the next period's start (Date.UTC normalises overflowing fields) minus one tick. */
function endOf(unit: 'day' | 'week' | 'month' | 'year', ms: number, offset: number): string {
  const d = new Date(ms);
  const [y, m, day, dow] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCDay()];
  const next =
    unit === 'day'
      ? Date.UTC(y, m, day + offset + 1)
      : unit === 'week'
        ? Date.UTC(y, m, day - dow + 7 * (offset + 1))
        : unit === 'month'
          ? Date.UTC(y, m + offset + 1, 1)
          : Date.UTC(y + offset + 1, 0, 1);
  return lastTickBefore(next);
}

describe('datetimes with 100 ns ticks (decision 0036)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it("endofday/week/month/year answer the period's last tick, with offsets -1, 0 and +1", async () => {
    // 2017-01-01 is a Sunday: its week runs to Saturday 2017-01-07.
    const d = 'datetime(2017-01-01 10:10:17)';
    const r = await one(`print
      d0 = endofday(${d}), dm = endofday(${d}, -1), dp = endofday(${d}, 1),
      w0 = endofweek(${d}), wm = endofweek(${d}, -1), wp = endofweek(${d}, 1),
      m0 = endofmonth(${d}), mm = endofmonth(${d}, -1), mp = endofmonth(${d}, 1),
      y0 = endofyear(${d}), ym = endofyear(${d}, -1), yp = endofyear(${d}, 1)`);
    assert.deepEqual(r, {
      d0: '2017-01-01T23:59:59.9999999Z',
      dm: '2016-12-31T23:59:59.9999999Z',
      dp: '2017-01-02T23:59:59.9999999Z',
      w0: '2017-01-07T23:59:59.9999999Z',
      wm: '2016-12-31T23:59:59.9999999Z',
      wp: '2017-01-14T23:59:59.9999999Z',
      m0: '2017-01-31T23:59:59.9999999Z',
      mm: '2016-12-31T23:59:59.9999999Z',
      mp: '2017-02-28T23:59:59.9999999Z',
      y0: '2017-12-31T23:59:59.9999999Z',
      ym: '2016-12-31T23:59:59.9999999Z',
      yp: '2018-12-31T23:59:59.9999999Z',
    });
  });

  it("the documentation's shapes: offsets from a range, and a Sunday-ending week built from endofweek", async () => {
    // The endof… pages list the ends for offsets -1, 0, 1 from a range; own date (a Wednesday).
    const r = await run(
      'range offset from -1 to 1 step 1 | project offset, d = endofday(datetime(2023-08-16 07:00), offset), w = endofweek(datetime(2023-08-16 07:00), offset), m = endofmonth(datetime(2023-08-16 07:00), offset), y = endofyear(datetime(2023-08-16 07:00), offset) | sort by offset asc',
      { ordered: true },
    );
    assert.deepEqual(r.results, [
      {
        offset: -1,
        d: '2023-08-15T23:59:59.9999999Z',
        w: '2023-08-12T23:59:59.9999999Z',
        m: '2023-07-31T23:59:59.9999999Z',
        y: '2022-12-31T23:59:59.9999999Z',
      },
      {
        offset: 0,
        d: '2023-08-16T23:59:59.9999999Z',
        w: '2023-08-19T23:59:59.9999999Z',
        m: '2023-08-31T23:59:59.9999999Z',
        y: '2023-12-31T23:59:59.9999999Z',
      },
      {
        offset: 1,
        d: '2023-08-17T23:59:59.9999999Z',
        w: '2023-08-26T23:59:59.9999999Z',
        m: '2023-09-30T23:59:59.9999999Z',
        y: '2024-12-31T23:59:59.9999999Z',
      },
    ]);
    // The endofweek page builds a week ending on Sunday: 8 days after the Saturday end of the week 8 days before.
    const sunday = await run(
      `let endofweekSunday = (d: datetime) { datetime_add('day', 8, endofweek(datetime_add('day', -8, d))) };
       datatable(Date: datetime, Day: string)[datetime(2023-08-12), "Saturday", datetime(2023-08-13), "Sunday", datetime(2023-08-14), "Monday"]
       | extend SundayEnd = endofweekSunday(Date) | project Day, SundayEnd`,
    );
    assert.deepEqual(
      sunday.results.map((x) => JSON.stringify(x)).sort(),
      [
        { Day: 'Saturday', SundayEnd: '2023-08-13T23:59:59.9999999Z' },
        { Day: 'Sunday', SundayEnd: '2023-08-13T23:59:59.9999999Z' },
        { Day: 'Monday', SundayEnd: '2023-08-20T23:59:59.9999999Z' },
      ]
        .map((x) => JSON.stringify(x))
        .sort(),
    );
  });

  it('leap years, month ends, a Saturday, negative offsets across years, the ends of the range, nulls', async () => {
    const r = await one(`print
      feb24 = endofmonth(datetime(2024-02-10)), feb00 = endofmonth(datetime(2000-02-01)), feb00p = endofmonth(datetime(2100-02-01)),
      apr = endofmonth(datetime(2023-04-30 23:59:59.999999)), back13 = endofmonth(datetime(2017-01-15), -13),
      sat = endofweek(datetime(2021-01-02 23:00)), satm = endofweek(datetime(2021-01-02), -1),
      leapday = endofyear(datetime(2024-02-29), -4), old = endofday(datetime(1960-06-15 12:00)),
      y1 = endofyear(datetime(0001-03-01)), y9999 = endofyear(datetime(9999-01-01)), past = endofyear(datetime(9999-01-01), 1),
      n = endofday(datetime(null)), nofs = endofmonth(datetime(2017-01-01), long(null))`);
    assert.deepEqual(r, {
      feb24: '2024-02-29T23:59:59.9999999Z',
      feb00: '2000-02-29T23:59:59.9999999Z',
      feb00p: '2100-02-28T23:59:59.9999999Z',
      apr: '2023-04-30T23:59:59.9999999Z',
      back13: '2015-12-31T23:59:59.9999999Z',
      sat: '2021-01-02T23:59:59.9999999Z',
      satm: '2020-12-26T23:59:59.9999999Z',
      leapday: '2020-12-31T23:59:59.9999999Z',
      old: '1960-06-15T23:59:59.9999999Z',
      y1: '0001-12-31T23:59:59.9999999Z',
      y9999: '9999-12-31T23:59:59.9999999Z',
      past: null, // beyond Kusto's last datetime
      n: null,
      nofs: null,
    });
  });

  it('endof… refuses arguments of other types (400 from the binder)', async () => {
    await assert.rejects(run('print endofday("2017-01-01")'), /must be datetime; this is a string/);
    await assert.rejects(run('print endofmonth(datetime(2017-01-01), "1")'), /offset of 'endofmonth' must be long or real/);
    await assert.rejects(run('print endofyear(1)'), /must be datetime; this is a long/);
    await assert.rejects(run('print endofweek()'), /takes 1 to 2 arguments/);
  });

  it('subtraction gives timespan ticks; datetime_diff and datetime_part see the ticks', async () => {
    const x = 'datetime(2017-01-01 10:10:17)';
    const r = await one(`print
      span = endofday(${x}) - startofday(${x}), back = startofday(${x}) - endofday(${x}),
      ns = datetime_diff('nanosecond', endofday(${x}), ${x}), us = datetime_diff('microsecond', endofday(${x}), ${x}),
      s = datetime_diff('second', endofday(${x}), ${x}), dd = datetime_diff('day', endofday(${x}), ${x}),
      lit = datetime_diff('nanosecond', datetime(2023-03-04 05:06:07.0000001), datetime(2023-03-04 05:06:07.0000008)),
      usb = datetime_diff('microsecond', datetime(2023-03-04 05:06:07.0000019), datetime(2023-03-04 05:06:07.0000001)),
      pns = datetime_part('nanosecond', datetime(2017-01-01 00:00:00.1234567)), pus = datetime_part('microsecond', datetime(2017-01-01 00:00:00.1234567)),
      pms = datetime_part('millisecond', endofday(${x})), py = datetime_part('year', endofyear(${x})),
      gy = getyear(endofyear(${x})), gm = getmonth(endofmonth(${x})), dow = dayofweek(endofweek(${x})), sod = startofday(endofday(${x}))`);
    assert.deepEqual(r, {
      span: '23:59:59.9999999',
      back: '-23:59:59.9999999',
      // 23:59:59.9999999 − 10:10:17 = 13:49:42.9999999 = 49,782 s and 9,999,999 ticks.
      ns: 49_782_999_999_900,
      us: 49_782_999_999,
      s: 49_782,
      dd: 0,
      lit: -700,
      usb: 1,
      pns: 123_456_700,
      pus: 123_456,
      pms: 999,
      py: 2017,
      gy: 2017,
      gm: 1,
      dow: '6.00:00:00',
      sod: '2017-01-01T00:00:00.0000000Z',
    });
  });

  it('format_datetime, tostring, tolong and hash read the seventh digit', async () => {
    const e = 'endofday(datetime(2017-01-01))';
    const r = await one(`print
      f7 = format_datetime(${e}, 'yyyy-MM-dd HH:mm:ss.fffffff'), f2 = format_datetime(${e}, 'ss.ff'),
      F = format_datetime(datetime(2017-01-01 00:00:00.1200001), 'HH:mm:ss.FFFFFFF'),
      Fz = format_datetime(datetime(2017-01-01 00:00:00.1200000), 'HH:mm:ss.FFFFFFF'),
      s = tostring(${e}), l = tolong(${e}), lit = tostring(datetime(2017-01-01 00:00:00.123456700)),
      h = tostring(hash(${e})), hm = hash(${e}, 1000), d = todynamic(${e}), c = strcat('end: ', ${e})`);
    const ticks = kustoTicks(BigInt(Date.UTC(2017, 0, 2)) * 10_000n - 1n);
    const le = Buffer.alloc(8);
    le.writeBigInt64LE(ticks);
    // Kusto hashes a datetime as XXH64 of its ticks' 8 little-endian bytes (decision 0023).
    const h = BigInt.asIntN(64, BigInt(`0x${await xxhash64(le)}`));
    assert.deepEqual(r, {
      f7: '2017-01-01 23:59:59.9999999',
      f2: '59.99',
      F: '00:00:00.1200001',
      Fz: '00:00:00.12',
      s: '2017-01-01T23:59:59.9999999Z',
      l: Number(ticks),
      lit: '2017-01-01T00:00:00.1234567Z',
      h: h.toString(),
      hm: Number(BigInt.asUintN(64, h) % 1000n),
      d: '2017-01-01T23:59:59.9999999Z',
      c: 'end: 2017-01-01T23:59:59.9999999Z',
    });
  });

  it('7-digit literals, todatetime of a constant and query parameters are values; digits below the tick are refused', async () => {
    const r = await run(
      `declare query_parameters(p:datetime); print a = datetime(2017-01-01 00:00:00.0000001), b = todatetime("2017-01-01T00:00:00.9999999Z"), c = p,
        lt = datetime(2017-01-01 00:00:00.0000001) > datetime(2017-01-01), eq = datetime(2017-01-01 00:00:00.0000010) == datetime(2017-01-01 00:00:00.000001),
        ne = datetime(2017-01-01 00:00:00.0000001) == datetime(2017-01-01), inl = datetime(2017-01-01 00:00:00.0000001) in (datetime(2017-01-01), datetime(2017-01-01 00:00:00.0000001))`,
      { parameters: new Map([['p', '2017-01-01T00:00:00.0000009Z']]) },
    );
    assert.deepEqual(r.results[0], {
      a: '2017-01-01T00:00:00.0000001Z',
      b: '2017-01-01T00:00:00.9999999Z',
      c: '2017-01-01T00:00:00.0000009Z',
      lt: true,
      eq: true,
      ne: false,
      inl: true,
    });
    for (const q of ['print datetime(2023-03-04 05:06:07.00000001)', 'print todatetime("2023-03-04T05:06:07.123456789Z")'])
      await assert.rejects(run(q), /digits below Kusto's 100-nanosecond tick/);
  });

  it("datetime_add: nanoseconds in whole ticks; other parts keep a datetime's ticks", async () => {
    const r = await one(`print
      n100 = datetime_add('nanosecond', 100, datetime(2017-01-01)), n99 = datetime_add('nanosecond', 99, datetime(2017-01-01)),
      nneg = datetime_add('nanosecond', -100, datetime(2017-01-01)), n1s = datetime_add('nanosecond', 1000000000, datetime(2017-01-01)),
      day = datetime_add('day', 1, endofday(datetime(2017-01-01))), mon = datetime_add('month', 1, endofmonth(datetime(2017-01-15))),
      us = datetime_add('microsecond', 1, datetime(2017-01-01 00:00:00.0000001)), hr = datetime_add('hour', -1, endofyear(datetime(2017-06-01))),
      plus = datetime(2017-01-01) + 1tick, minus = endofday(datetime(2017-01-01)) - 1tick, whole = datetime(2017-01-01) + 10tick,
      n = datetime_add('nanosecond', 100, datetime(null))`);
    assert.deepEqual(r, {
      n100: '2017-01-01T00:00:00.0000001Z',
      n99: '2017-01-01T00:00:00.0000000Z',
      nneg: '2016-12-31T23:59:59.9999999Z',
      n1s: '2017-01-01T00:00:01.0000000Z',
      day: '2017-01-02T23:59:59.9999999Z',
      mon: '2017-02-28T23:59:59.9999999Z',
      us: '2017-01-01T00:00:00.0000011Z',
      hr: '2017-12-31T22:59:59.9999999Z',
      plus: '2017-01-01T00:00:00.0000001Z',
      minus: '2017-01-01T23:59:59.9999998Z',
      whole: '2017-01-01T00:00:00.0000010Z',
      n: null,
    });
  });

  it('stored microsecond rows against ticks: each boundary row included or excluded exactly', async () => {
    const stamps = LOGS.map((l) => l.timestamp.getTime());
    const t0 = stamps[57] as number;
    const t = BigInt(t0) * 10_000n;
    const count = (pred: (ms: number) => boolean) => stamps.filter(pred).length;
    const n = async (where: string) => (await one(`Logs | where ${where} | count`)).Count;
    assert.equal(
      await n(`timestamp < ${tickLit(t + 1n)}`),
      count((s) => s <= t0),
    );
    assert.equal(
      await n(`timestamp <= ${tickLit(t - 1n)}`),
      count((s) => s < t0),
    );
    assert.equal(
      await n(`timestamp > ${tickLit(t - 1n)}`),
      count((s) => s >= t0),
    );
    assert.equal(
      await n(`timestamp >= ${tickLit(t + 1n)}`),
      count((s) => s > t0),
    );
    assert.equal(
      await n(`${tickLit(t + 1n)} > timestamp`),
      count((s) => s <= t0),
    );
    assert.equal(await n(`timestamp == ${tickLit(t + 1n)}`), 0);
    assert.equal(await n(`timestamp != ${tickLit(t + 1n)}`), stamps.length);
    assert.equal(
      await n(`timestamp between (${tickLit(t - 1n)} .. ${tickLit(t + 1n)})`),
      count((s) => s === t0),
    );
    assert.equal(
      await n(`timestamp !between (${tickLit(t - 1n)} .. ${tickLit(t + 1n)})`),
      count((s) => s !== t0),
    );
    assert.equal(
      await n(`timestamp + 1tick > ${tickLit(t)}`),
      count((s) => s >= t0),
    );
    assert.equal(
      await n(`timestamp in (${tickLit(t)}, ${tickLit(t + 1n)})`),
      count((s) => s === t0),
    );
    const dayEnd = Date.UTC(2024, 2, 10);
    assert.equal(
      await n('timestamp <= endofday(datetime(2024-03-09))'),
      count((s) => s < dayEnd),
    );
    assert.equal(
      await n('timestamp > endofday(datetime(2024-03-09))'),
      count((s) => s >= dayEnd),
    );
  });

  it('summarize by endofmonth/endofday of stored rows, per-row offsets, sort and top, on one worker and three', async () => {
    const months = await run(
      'Logs | where isnotnull(latencyMs) | summarize n = count() by e = endofmonth(timestamp, latencyMs % 5 - 2) | sort by e asc',
      { ordered: true },
    );
    const expected = new Map<string, number>();
    for (const l of LOGS) {
      if (l.latencyMs === null) continue;
      const k = endOf('month', l.timestamp.getTime(), (((l.latencyMs % 5) + 5) % 5) - 2);
      expected.set(k, (expected.get(k) ?? 0) + 1);
    }
    assert.deepEqual(
      months.results,
      [...expected.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([e, n]) => ({ e, n })),
    );
    assert.deepEqual(months.columns, [
      { name: 'e', type: 'DateTime' },
      { name: 'n', type: 'Int64' },
    ]);
    const days = await run(
      'Logs | extend e = endofday(timestamp) | summarize n = count() by e, level | sort by e desc, level asc | take 2',
      {
        ordered: true,
      },
    );
    const last = endOf('day', Math.max(...LOGS.map((l) => l.timestamp.getTime())), 0);
    const levels = [...new Set(LOGS.filter((l) => endOf('day', l.timestamp.getTime(), 0) === last).map((l) => l.level))].sort();
    assert.deepEqual(
      days.results.map((x) => [x.e, x.level]),
      levels.slice(0, 2).map((lv) => [last, lv]),
    );
    const ends = await run(
      'Logs | summarize mn = min(endofday(timestamp)), mx = max(endofday(timestamp)), c = maxif(endofday(timestamp), level == "Info"), a = take_any(endofday(datetime(2017-01-01))) by level | sort by level asc',
      { ordered: true },
    );
    assert.deepEqual(
      ends.results,
      [...new Set(LOGS.map((l) => l.level))].sort().map((level) => {
        const of = LOGS.filter((l) => l.level === level).map((l) => endOf('day', l.timestamp.getTime(), 0));
        return {
          level,
          mn: of.reduce((a, b) => (a < b ? a : b)),
          mx: of.reduce((a, b) => (a > b ? a : b)),
          c: level === 'Info' ? of.reduce((a, b) => (a > b ? a : b)) : null,
          a: '2017-01-01T23:59:59.9999999Z',
        };
      }),
    );
    // Join keys: ticks against ticks, and ticks against stored microseconds (no row is 1 tick off).
    const joined = await run(
      'Logs | summarize n = count() by e = endofday(timestamp) | join kind=inner (Logs | summarize m = count() by e = endofday(timestamp)) on e | project e, n, m | sort by e asc',
      { ordered: true },
    );
    const perDay = new Map<string, number>();
    for (const l of LOGS)
      perDay.set(endOf('day', l.timestamp.getTime(), 0), (perDay.get(endOf('day', l.timestamp.getTime(), 0)) ?? 0) + 1);
    assert.deepEqual(
      joined.results,
      [...perDay.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([e, n]) => ({ e, n, m: n })),
    );
    const offByOne = await run(
      'Logs | extend e = timestamp + 1tick | join kind=inner (Logs | project e = timestamp) on e | count',
    );
    assert.equal(offByOne.results[0]?.Count, 0);
    // arg_max by a ticks value, and a ticks column among the returned ones.
    const arg = await run(
      'Logs | extend e = timestamp + 1tick | summarize arg_max(e, level), arg_min(timestamp, e) | project e, e1, level',
    );
    const firstRow = LOGS.reduce((a, b) => (a.timestamp <= b.timestamp ? a : b));
    const lastRow = LOGS.reduce((a, b) => (a.timestamp >= b.timestamp ? a : b));
    const plusTick = (d: Date) => ticksIso(BigInt(d.getTime()) * 10_000n + 1n);
    assert.deepEqual(arg.results, [{ e: plusTick(lastRow.timestamp), e1: plusTick(firstRow.timestamp), level: lastRow.level }]);
    assert.deepEqual(
      arg.columns.map((c) => c.type),
      ['DateTime', 'DateTime', 'String'],
    );
    const spans = await run('Logs | summarize m = max(endofday(timestamp) - timestamp)');
    const maxSpan = Math.max(
      ...LOGS.map((l) =>
        Number(BigInt(Date.UTC(2024, 2, l.timestamp.getUTCDate() + 1)) * 10_000n - 1n - BigInt(l.timestamp.getTime()) * 10_000n),
      ),
    );
    assert.equal(spans.results[0]?.m, ticksIsoSpan(BigInt(maxSpan)));
  });

  it('a datetime plus or minus a per-row timespan keeps its ticks; floor readers take the exact floor', async () => {
    // latencyMs * 1tick is a per-row span of -100 … 1899 ticks: mostly not whole microseconds.
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const us = (l: (typeof LOGS)[number]) => BigInt(l.timestamp.getTime()) * 10_000n;
    const span = (l: (typeof LOGS)[number]) => BigInt(l.latencyMs as number);
    const r = await run(
      `Logs | where isnotnull(latencyMs) | project id, p = timestamp + latencyMs * 1tick, q = 1tick * latencyMs + timestamp, m = timestamp - latencyMs * 1tick,
         l = tolong(timestamp + latencyMs * 1tick), ns = datetime_part('nanosecond', timestamp - latencyMs * 1tick),
         bp = bin(timestamp + latencyMs * 1tick, 1ms), bm = bin(timestamp - latencyMs * 1tick, 1ms), d = getyear(timestamp + latencyMs * 1tick)`,
    );
    const floorMs = (t: bigint) => ticksIso((t >= 0n ? t / 10_000n : -((-t + 9_999n) / 10_000n)) * 10_000n);
    const expected = rows.map((l) => ({
      id: l.id,
      p: ticksIso(us(l) + span(l)),
      q: ticksIso(us(l) + span(l)),
      m: ticksIso(us(l) - span(l)),
      l: Number(kustoTicks(us(l) + span(l))),
      ns: Number(((us(l) - span(l)) % 10_000_000n) * 100n),
      bp: floorMs(us(l) + span(l)),
      bm: floorMs(us(l) - span(l)),
      d: 2024,
    }));
    const byId = (a: { id?: unknown }, b: { id?: unknown }) => String(a.id).localeCompare(String(b.id));
    assert.deepEqual([...r.results].sort(byId), expected.sort(byId));
    assert.deepEqual(
      r.columns.map((c) => c.type),
      // datetime_part and getyear are typed int, as Kusto types them (decision 0048).
      ['Guid', 'DateTime', 'DateTime', 'DateTime', 'Int64', 'Int32', 'DateTime', 'DateTime', 'Int32'],
    );
    // Comparisons in ticks: the rows whose sum passes a row's own instant by a tick or more.
    const at = us(rows[20] as (typeof LOGS)[number]);
    const n = async (where: string) => (await run(`Logs | where ${where} | count`)).results[0]?.Count;
    assert.equal(await n(`timestamp + latencyMs * 1tick > ${tickLit(at)}`), rows.filter((l) => us(l) + span(l) > at).length);
    assert.equal(await n(`timestamp - latencyMs * 1tick <= ${tickLit(at)}`), rows.filter((l) => us(l) - span(l) <= at).length);
    assert.equal(await n(`timestamp + latencyMs * 1tick == ${tickLit(at)}`), rows.filter((l) => us(l) + span(l) === at).length);
    assert.equal(await n('timestamp + latencyMs * 1tick > timestamp'), rows.filter((l) => span(l) > 0n).length);
    // Grouped by the sum (a ticks key merged at the gateway), sorted, and its largest value.
    const g = await run(
      'Logs | where isnotnull(latencyMs) | summarize c = count() by e = timestamp + latencyMs * 1tick | sort by e desc | take 3',
      { ordered: true },
    );
    const sums = rows.map((l) => us(l) + span(l)).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    assert.deepEqual(
      g.results,
      sums.slice(0, 3).map((t) => ({ e: ticksIso(t), c: sums.filter((x) => x === t).length })),
    );
    // ago() and now() with a span below the microsecond (NOW is the fixture's query time).
    const a = await one('print a = ago(1tick), b = now(3tick), c = ago(-1tick) - now()');
    const now = BigInt(Date.UTC(2024, 2, 10, 12)) * 10_000n;
    assert.deepEqual(a, { a: ticksIso(now - 1n), b: ticksIso(now + 3n), c: '00:00:00.0000001' });
  });

  it('iff, case, coalesce, max_of and min_of keep the chosen value’s ticks; bin by whole microseconds reads the floor', async () => {
    const e = 'endofday(datetime(2017-01-01))';
    const r = await one(`print
      i1 = iff(true, ${e}, datetime(2017-01-01)), i2 = iff(false, ${e}, datetime(2017-01-01)), i3 = iif(1 > 2, datetime(null), ${e}),
      c = case(false, datetime(2000-01-01), ${e}), co = coalesce(datetime(null), ${e}), mx = max_of(${e}, datetime(2017-01-01 23:59:59.999999)),
      mn = min_of(${e}, datetime(2017-01-02), datetime(null)), b = bin(${e}, 1h), b2 = bin(datetime(2017-01-01 00:00:00.0000015), 1microsecond),
      t = gettype(${e}), em = isempty(${e}), n = isnull(iff(false, ${e}, datetime(null)))`);
    assert.deepEqual(r, {
      i1: '2017-01-01T23:59:59.9999999Z',
      i2: '2017-01-01T00:00:00.0000000Z',
      i3: '2017-01-01T23:59:59.9999999Z',
      c: '2017-01-01T23:59:59.9999999Z',
      co: '2017-01-01T23:59:59.9999999Z',
      mx: '2017-01-01T23:59:59.9999999Z',
      mn: '2017-01-01T23:59:59.9999999Z',
      b: '2017-01-01T23:00:00.0000000Z',
      b2: '2017-01-01T00:00:00.0000010Z',
      t: 'datetime',
      em: false,
      n: true,
    });
    // Per row, on one worker and three: the branches of stored microsecond rows and ticks.
    const rows = await run(
      'Logs | extend x = iff(level == "Error", endofday(timestamp), timestamp) | summarize n = count() by x | where x == endofday(x) | count',
    );
    const errorDays = new Set(LOGS.filter((l) => l.level === 'Error').map((l) => endOf('day', l.timestamp.getTime(), 0)));
    assert.equal(rows.results[0]?.Count, errorDays.size);
  });

  it('make-series bounds compare in ticks: a row at the microsecond after endofday(…) is in, one before is out', async () => {
    const stamps = LOGS.map((l) => l.timestamp.getTime());
    const t0 = stamps[30] as number;
    const r = await run(
      `Logs | make-series n = count() default = 0 on timestamp from datetime(2024-03-09) to ${tickLit(BigInt(t0) * 10_000n + 1n)} step 1d`,
    );
    // One bin (2024-03-09), counting the rows up to and including t0 (to is exclusive, one tick past t0).
    assert.deepEqual(r.results[0]?.n, [stamps.filter((s) => s >= Date.UTC(2024, 2, 9) && s <= t0).length]);
  });

  it('places that do not carry ticks yet refuse them by name (400), never truncate', async () => {
    for (const q of [
      'Logs | summarize hll(endofday(timestamp))',
      'Logs | summarize tdigest(timestamp + latencyMs * 1tick)',
      'Logs | summarize percentilew(endofday(timestamp), 1, 50)',
      'Logs | make-series count() on timestamp from endofday(datetime(2024-03-08)) to datetime(2024-03-11) step 1h',
    ])
      await assert.rejects(run(q), /100-nanosecond ticks below the microsecond/, q);
  });

  it('unixtime_nanoseconds_todatetime keeps the 100 ns tick (the floor of nanoseconds / 100)', async () => {
    // Kusto's documented example, then ticks below the microsecond, before 1970, a real, the range's ends.
    const r = await one(`print a = unixtime_nanoseconds_todatetime(1546300800000000000),
      b = unixtime_nanoseconds_todatetime(1546300800000000150), c = unixtime_nanoseconds_todatetime(-150),
      d = unixtime_nanoseconds_todatetime(1.5e2), e = unixtime_nanoseconds_todatetime(-1),
      f = unixtime_nanoseconds_todatetime(long(null)), g = unixtime_nanoseconds_todatetime(9223372036854775807)`);
    assert.deepEqual(r, {
      a: '2019-01-01T00:00:00.0000000Z',
      b: '2019-01-01T00:00:00.0000001Z',
      c: '1969-12-31T23:59:59.9999998Z',
      d: '1970-01-01T00:00:00.0000001Z',
      e: '1969-12-31T23:59:59.9999999Z',
      f: null,
      g: '2262-04-11T23:47:16.8547758Z',
    });
    // Per row on one worker and three: ticks = floor(ns / 100), computed with BigInt.
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const got = await run(
      'Logs | where isnotnull(latencyMs) | project id, t = unixtime_nanoseconds_todatetime(latencyMs * 123456789 + 1700000000000000000)',
    );
    const ns = (l: (typeof LOGS)[number]) => BigInt(l.latencyMs as number) * 123_456_789n + 1_700_000_000_000_000_000n;
    const byId = (a: { id?: unknown }, b: { id?: unknown }) => String(a.id).localeCompare(String(b.id));
    assert.deepEqual([...got.results].sort(byId), rows.map((l) => ({ id: l.id, t: ticksIso(ns(l) / 100n) })).sort(byId));
  });

  it('todatetime of per-row text keeps a 7th fractional digit (strings and dynamic values)', async () => {
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const digit = (l: (typeof LOGS)[number]) => BigInt(Math.abs(l.latencyMs as number) % 10);
    const text = `strcat(format_datetime(timestamp, 'yyyy-MM-dd HH:mm:ss.ffffff'), tostring(abs(latencyMs) % 10))`;
    const got = await run(
      `Logs | where isnotnull(latencyMs) | project id, t = todatetime(${text}), d = todatetime(bag_pack('v', ${text}).v),
         n = datetime_part('nanosecond', todatetime(${text})), s = startofday(todatetime(${text}))`,
    );
    const byId = (a: { id?: unknown }, b: { id?: unknown }) => String(a.id).localeCompare(String(b.id));
    assert.deepEqual(
      [...got.results].sort(byId),
      rows
        .map((l) => {
          const t = BigInt(l.timestamp.getTime()) * 10_000n + digit(l);
          const day = new Date(l.timestamp);
          day.setUTCHours(0, 0, 0, 0);
          return {
            id: l.id,
            t: ticksIso(t),
            d: ticksIso(t),
            n: Number((t % 10_000_000n) * 100n),
            s: ticksIso(BigInt(day.getTime()) * 10_000n),
          };
        })
        .sort(byId),
    );
    // Text without a 7th digit, before 1970, with an offset, and not a datetime.
    const r =
      await one(`print a = todatetime(strcat('2024-01-01 10:00:00.12', '')), b = todatetime(strcat('1960-01-01 00:00:00.999999', '9')),
      c = todatetime(strcat('2024-01-01T10:00:00.1234567', '+02:00')), d = todatetime(strcat('not a ', 'date')), e = todatetime(strcat('2024-01-01', '')),
      f = todatetime(strcat('1600-01-01 00:00:00.999999', '9')), g = todatetime(strcat('2024-01-01T10:00:00.123456789', 'Z')),
      h = todatetime(strcat('9999-12-31 23:59:59.999999', '9'))`);
    assert.deepEqual(r, {
      a: '2024-01-01T10:00:00.1200000Z',
      b: '1960-01-01T00:00:00.9999999Z',
      c: '2024-01-01T08:00:00.1234567Z',
      d: null,
      e: '2024-01-01T00:00:00.0000000Z',
      // Outside TIMESTAMP_NS's range the 7th digit is read from the text.
      f: '1600-01-01T00:00:00.9999999Z',
      // Digits past the 7th are dropped (the floor).
      g: '2024-01-01T10:00:00.1234567Z',
      h: '9999-12-31T23:59:59.9999999Z',
    });
  });

  it('time zones, prev/next and dynamic values keep the ticks', async () => {
    // Paris is UTC+1 in January and UTC+2 in June (whole hours: the digit below moves along).
    const r = await one(`print a = datetime_utc_to_local(datetime(2017-01-01 10:00:00.0000001), 'Europe/Paris'),
      b = datetime_local_to_utc(datetime(2017-06-01 10:00:00.9999999), 'Europe/Paris'),
      c = bag_pack('e', endofday(datetime(2017-01-01))), d = pack_array(endofday(datetime(2017-01-01)), datetime(2017-01-01)),
      e = todynamic(datetime(2017-01-01) + 1tick)`);
    assert.deepEqual(r, {
      a: '2017-01-01T11:00:00.0000001Z',
      b: '2017-06-01T08:00:00.9999999Z',
      c: { e: '2017-01-01T23:59:59.9999999Z' },
      d: ['2017-01-01T23:59:59.9999999Z', '2017-01-01T00:00:00.0000000Z'],
      e: '2017-01-01T00:00:00.0000001Z',
    });
    const rows = await run(
      `datatable(m: long)[1, 2, 3] | serialize | extend t = datetime(2024-01-01) + m * 1tick
       | extend p = prev(t), n = next(t, 1, datetime(2030-01-01)), q = prev(t, 2, datetime(null))`,
      { ordered: true },
    );
    const at = (k: bigint) => ticksIso(BigInt(Date.UTC(2024, 0, 1)) * 10_000n + k);
    assert.deepEqual(rows.results, [
      { m: 1, t: at(1n), p: null, n: at(2n), q: null },
      { m: 2, t: at(2n), p: at(1n), n: at(3n), q: null },
      { m: 3, t: at(3n), p: at(2n), n: '2030-01-01T00:00:00.0000000Z', q: at(1n) },
    ]);
  });

  it('bin and bin_at by sizes below the microsecond answer in ticks, aligned to 0001-01-01', async () => {
    // 2017-01-01 is 636188256000000000 ticks after 0001-01-01; that is 3 past a multiple of 7.
    const r = await one(`print a = bin(datetime(2017-01-01 00:00:00.0000009), 4tick), b = bin(datetime(2017-01-01), 7tick),
      c = bin(endofday(datetime(2017-01-01)), 1h), d = bin_at(datetime(2017-01-01 00:00:00.0000005), 2tick, datetime(2017-01-01 00:00:00.0000002)),
      e = bin_at(endofday(datetime(2017-01-01)), 1h, datetime(2017-01-01 00:30)), f = floor(datetime(2017-01-01 00:00:00.0000009), 1tick),
      g = bin(datetime(2017-01-01 00:00:00.0000009), 0tick)`);
    assert.deepEqual(r, {
      a: '2017-01-01T00:00:00.0000008Z',
      b: '2016-12-31T23:59:59.9999997Z',
      c: '2017-01-01T23:00:00.0000000Z',
      d: '2017-01-01T00:00:00.0000004Z',
      e: '2017-01-01T23:30:00.0000000Z',
      f: '2017-01-01T00:00:00.0000009Z',
      g: null,
    });
    // Per row, on one worker and three: bins of 3 ticks of the per-row sums.
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const got = await run(
      'Logs | where isnotnull(latencyMs) | summarize n = count() by b = bin(timestamp + latencyMs * 1tick, 3tick) | sort by b asc | take 5',
      { ordered: true },
    );
    const counts = new Map<bigint, number>();
    for (const l of rows) {
      const t = kustoTicks(BigInt(l.timestamp.getTime()) * 10_000n + BigInt(l.latencyMs as number));
      const b = t - (t % 3n);
      counts.set(b, (counts.get(b) ?? 0) + 1);
    }
    const firstBins = [...counts.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).slice(0, 5);
    assert.deepEqual(
      got.results,
      firstBins.map(([b, n]) => ({ b: ticksIso(b - 621_355_968_000_000_000n), n })),
    );
  });

  it('union: a ticks column in one input makes the column ticks in every input', async () => {
    const r = await run(
      `union (print e = endofday(datetime(2017-01-01)), k = 1), (print e = datetime(2017-01-02), k = 2), (print k = 3)
       | sort by k asc`,
      { ordered: true },
    );
    assert.deepEqual(r.results, [
      { e: '2017-01-01T23:59:59.9999999Z', k: 1 },
      { e: '2017-01-02T00:00:00.0000000Z', k: 2 },
      { e: null, k: 3 },
    ]);
    // Stored rows on one worker and three: the per-row sums and the plain timestamps together.
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const sums = rows.map((l) => BigInt(l.timestamp.getTime()) * 10_000n + BigInt(l.latencyMs as number));
    const stamps = LOGS.map((l) => BigInt(l.timestamp.getTime()) * 10_000n);
    const all = [...sums, ...stamps];
    const u = await run(
      'union (Logs | where isnotnull(latencyMs) | project e = timestamp + latencyMs * 1tick), (Logs | project e = timestamp) | summarize n = count(), mx = max(e), d = dcount(e)',
    );
    assert.deepEqual(u.results, [{ n: all.length, mx: ticksIso(all.reduce((a, b) => (a > b ? a : b))), d: new Set(all).size }]);
  });

  it('row_window_session folds ticks values and limits below the microsecond', async () => {
    // Values 0, 1, 2, 5, 6, 20 ticks after midnight; a session ends 4 ticks after its first value or
    // at a gap of 2 ticks: sessions start at 0, 5 and 20 (the same shape as the µs fold in seconds).
    const q = (unit: string, first: string, gap: string) =>
      run(
        `datatable(m: long)[0, 1, 2, 5, 6, 20] | serialize | extend t = datetime(2024-01-01) + m * ${unit}
         | extend s = row_window_session(t, ${first}, ${gap}) | project m, s`,
        { ordered: true },
      );
    const at = (k: bigint) => ticksIso(BigInt(Date.UTC(2024, 0, 1)) * 10_000n + k);
    const starts = [0n, 0n, 0n, 5n, 5n, 20n];
    const ticks = await q('1tick', '4tick', '2tick');
    assert.deepEqual(
      ticks.results,
      [0, 1, 2, 5, 6, 20].map((m, i) => ({ m, s: at(starts[i] as bigint) })),
    );
    const seconds = await q('1s', '4s', '2s');
    assert.deepEqual(
      seconds.results,
      [0, 1, 2, 5, 6, 20].map((m, i) => ({ m, s: at((starts[i] as bigint) * 10_000_000n) })),
    );
  });

  it('datatable holds 7-digit literals, and toscalar carries a ticks value', async () => {
    const d = await run(
      `datatable(t: datetime, k: long)[datetime(2017-01-01 00:00:00.0000001), 1, datetime(2017-01-01), 2, datetime(null), 3]
       | extend u = t + 1tick | sort by k asc`,
      { ordered: true },
    );
    assert.deepEqual(d.results, [
      { t: '2017-01-01T00:00:00.0000001Z', k: 1, u: '2017-01-01T00:00:00.0000002Z' },
      { t: '2017-01-01T00:00:00.0000000Z', k: 2, u: '2017-01-01T00:00:00.0000001Z' },
      { t: null, k: 3, u: null },
    ]);
    // A string cell converts as todatetime (decision 0048: "x" is null); a number is refused.
    await assert.rejects(
      run('datatable(t: datetime)[datetime(2017-01-01 00:00:00.0000001), 5]'),
      /long value cannot go into a datetime/,
    );
    const s = await one(
      'let t = toscalar(print endofday(datetime(2017-01-01))); print a = t, b = t + 1tick, c = t > datetime(2017-01-01 23:59:59.999999)',
    );
    assert.deepEqual(s, { a: '2017-01-01T23:59:59.9999999Z', b: '2017-01-02T00:00:00.0000000Z', c: true });
    // The largest per-row sum, found by a subquery, selects its row on one worker and three.
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const sum = (l: (typeof LOGS)[number]) => BigInt(l.timestamp.getTime()) * 10_000n + BigInt(l.latencyMs as number);
    const top = rows.reduce((a, b) => (sum(a) >= sum(b) ? a : b));
    const m = await run(
      'let m = toscalar(Logs | summarize max(timestamp + latencyMs * 1tick)); Logs | where timestamp + latencyMs * 1tick == m | project id, m',
    );
    assert.deepEqual(m.results, [{ id: top.id, m: ticksIso(sum(top)) }]);
  });

  it('count, dcount, make_list, make_set and percentiles of ticks values, on one worker and three', async () => {
    const rows = LOGS.filter((l) => l.latencyMs !== null);
    const ticks = rows.map((l) => BigInt(l.timestamp.getTime()) * 10_000n + BigInt(l.latencyMs as number));
    const sorted = [...ticks].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // Kusto's nearest-rank percentile: the value at rank ceil(p / 100 × n), at least 1.
    const rank = (p: number) => sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] as bigint;
    const e = 'timestamp + latencyMs * 1tick';
    const r = await run(
      `Logs | summarize c = count(${e}), d = dcount(${e}), d2 = dcount(endofday(timestamp)), di = dcountif(${e}, latencyMs > 0),
         p = percentile(${e}, 50), percentiles(${e}, 0, 90, 100), l = make_list(${e}), s = make_set(endofday(timestamp))`,
      { unorderedLists: true },
    );
    const row = r.results[0] as Record<string, unknown>;
    const days = [...new Set(LOGS.map((l) => endOf('day', l.timestamp.getTime(), 0)))];
    assert.deepEqual(
      { ...row, l: [...(row.l as string[])].sort(), s: [...(row.s as string[])].sort() },
      {
        c: ticks.length,
        d: new Set(ticks).size,
        d2: days.length,
        di: new Set(
          rows
            .filter((l) => (l.latencyMs as number) > 0)
            .map((l) => BigInt(l.timestamp.getTime()) * 10_000n + BigInt(l.latencyMs as number)),
        ).size,
        p: ticksIso(rank(50)),
        percentile__0: ticksIso(rank(0)),
        percentile__90: ticksIso(rank(90)),
        percentile__100: ticksIso(rank(100)),
        l: ticks.map(ticksIso).sort(),
        s: days.sort(),
      },
    );
  });

  it('property: a datetime plus or minus random per-row spans equals BigInt tick arithmetic', async function () {
    this.timeout(120_000);
    const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2200, 0, 1) }),
        fc.array(fc.bigInt({ min: -1_000_000_000_000n, max: 1_000_000_000_000n }), { minLength: 1, maxLength: 12 }),
        async (ms, spans) => {
          const base = BigInt(ms) * 10_000n;
          const r = await run(
            `datatable(i: long, n: long)[${spans.map((n, i) => `${i}, ${n}`).join(', ')}]
             | extend e = ${tickLit(base)} + n * 1tick, m = ${tickLit(base)} - n * 1tick
             | extend b = bin(e, 1ms), d = dayofmonth(m), lt = e < ${tickLit(base)}
             | project i, e, m, b, d, lt`,
          );
          const byI = [...r.results].sort((a, b) => Number(a.i) - Number(b.i));
          assert.deepEqual(
            byI,
            spans.map((n, i) => ({
              i,
              e: ticksIso(base + n),
              m: ticksIso(base - n),
              b: ticksIso(floorDiv(base + n, 10_000n) * 10_000n),
              d: new Date(Number(floorDiv(base - n, 10_000n))).getUTCDate(),
              lt: n < 0n,
            })),
          );
        },
      ),
      { numRuns: 12 },
    );
  });

  it('property: endof… of random instants and offsets equals the JS Date computation', async function () {
    this.timeout(120_000);
    const units = ['day', 'week', 'month', 'year'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.integer({ min: Date.UTC(1900, 0, 1), max: Date.UTC(2200, 0, 1) }),
            fc.integer({ min: -30, max: 30 }),
            fc.constantFrom(...units),
          ),
          { minLength: 1, maxLength: 16 },
        ),
        async (cases) => {
          const items = cases.map(([ms, k, u], i) => `c${i} = endof${u}(${tickLit(BigInt(ms) * 10_000n)}, ${k})`);
          const r = await one(`print ${items.join(', ')}`);
          assert.deepEqual(r, Object.fromEntries(cases.map(([ms, k, u], i) => [`c${i}`, endOf(u, ms, k)])));
        },
      ),
      { numRuns: 12 },
    );
  });

  it('property: random tick values print, compare, subtract and split as BigInt arithmetic says', async function () {
    this.timeout(120_000);
    // Kusto's datetimes, 0001-01-01 … 9999-12-31, in ticks since the Unix epoch; the second of each
    // pair within ±250 years of the first, so nanoseconds between them fit a long.
    const range = { min: -621_355_968_000_000_000n, max: 2_534_023_007_999_999_999n };
    const pair = fc
      .tuple(fc.bigInt(range), fc.bigInt({ min: -78_000_000_000_000_000n, max: 78_000_000_000_000_000n }))
      .map(([a, d]) => [a, a + d < range.min || a + d > range.max ? a - d : a + d] as const);
    await fc.assert(
      fc.asyncProperty(fc.array(pair, { minLength: 1, maxLength: 10 }), async (pairs) => {
        const items = pairs.flatMap(([a, b], i) => [
          `s${i} = tostring(${tickLit(a)})`,
          `l${i} = ${tickLit(a)} < ${tickLit(b)}`,
          `d${i} = tostring(datetime_diff('nanosecond', ${tickLit(a)}, ${tickLit(b)}))`,
          `p${i} = datetime_part('nanosecond', ${tickLit(a)})`,
          `f${i} = format_datetime(${tickLit(a)}, 'fffffff')`,
        ]);
        const r = await one(`print ${items.join(', ')}`);
        const mod = (x: bigint) => ((x % 10_000_000n) + 10_000_000n) % 10_000_000n;
        assert.deepEqual(
          r,
          Object.fromEntries(
            pairs.flatMap(([a, b], i) => [
              [`s${i}`, ticksIso(a)],
              [`l${i}`, a < b],
              [`d${i}`, ((a - b) * 100n).toString()],
              [`p${i}`, Number(mod(a) * 100n)],
              [`f${i}`, String(mod(a)).padStart(7, '0')],
            ]),
          ),
        );
      }),
      { numRuns: 12 },
    );
  });
});

/** Kusto's text of a non-negative timespan in ticks: [d.]hh:mm:ss[.fffffff]. */
function ticksIsoSpan(t: bigint): string {
  const day = 864_000_000_000n;
  const d = t / day;
  const rest = t % day;
  const hms = new Date(Number(rest / 10_000n)).toISOString().slice(11, 19);
  const f = rest % 10_000_000n;
  return `${d > 0n ? `${d}.` : ''}${hms}${f > 0n ? `.${String(f).padStart(7, '0')}` : ''}`;
}
