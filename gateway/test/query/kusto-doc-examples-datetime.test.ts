/**
 * The documented examples of the date/time functions and conversions decision 0048 touches
 * (todatetime, parse_json/todynamic, datetime_part, week_of_year, getyear, getmonth, monthofyear,
 * dayofmonth, dayofyear, hourofday, the datetime type's text forms, typed mv-expand and bag_unpack),
 * each reproduced with our own dates and queries of the same shape; expected answers written by hand
 * from Kusto's documented behaviour or computed in JS (Date.UTC, an ISO-week function of its own).
 * The number of these cases that pass is the coverage measure reported for issue 17's date/time
 * family; a documented example Strata cannot answer as Kusto does is listed in `NOT_ANSWERED` with
 * its reason and checked to still differ, so the count stays honest. Every query runs on one worker
 * and on three (`print`/`datatable` in the merge database).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, run } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

/** ISO 8601 week number of a UTC date (the week with the year's first Thursday is week 1), in JS. */
function isoWeek(y: number, m: number, d: number): number {
  const t = Date.UTC(y, m - 1, d);
  const dow = (new Date(t).getUTCDay() + 6) % 7; // Monday 0
  const thursday = t + (3 - dow) * 86_400_000; // the Thursday of this ISO week decides its year
  const yearStart = Date.UTC(new Date(thursday).getUTCFullYear(), 0, 1);
  return Math.floor((thursday - yearStart) / (7 * 86_400_000)) + 1;
}

describe('documented examples of the date/time functions, with our own data (decision 0048)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('todatetime of a date and time text with one fractional digit', async () => {
    assert.deepEqual(await one('print todatetime("2019-07-04 08:15:30.5")'), { print_0: '2019-07-04T08:15:30.5000000Z' });
  });

  it('todatetime of a text compared with the same datetime literal', async () => {
    assert.deepEqual(await one("print todatetime('2021-03-04 10:20') == datetime('2021-03-04 10:20')"), { print_0: true });
  });

  it('datetime_part: every part of one datetime with seven fractional digits', async () => {
    const r = await one(`let dt = datetime(2021-02-03 04:05:06.7890123);
      print year = datetime_part("year", dt), quarter = datetime_part("quarter", dt), month = datetime_part("month", dt),
        weekOfYear = datetime_part("week_of_year", dt), day = datetime_part("day", dt), dayOfYear = datetime_part("dayOfYear", dt),
        hour = datetime_part("hour", dt), minute = datetime_part("minute", dt), second = datetime_part("second", dt),
        millisecond = datetime_part("millisecond", dt), microsecond = datetime_part("microsecond", dt),
        nanosecond = datetime_part("nanosecond", dt)`);
    assert.deepEqual(r, {
      year: 2021,
      quarter: 1,
      month: 2,
      weekOfYear: isoWeek(2021, 2, 3),
      day: 3,
      dayOfYear: 31 + 3,
      hour: 4,
      minute: 5,
      second: 6,
      millisecond: 789,
      microsecond: 789012,
      nanosecond: 789012300,
    });
  });

  it('week_of_year: the last days of a 53-week year, mid-year, and a January 1st in the previous year', async () => {
    const dates: [number, number, number][] = [
      [2015, 12, 31],
      [2021, 6, 15],
      [1971, 1, 1],
      [2005, 1, 1],
    ];
    const r = await one(`print ${dates.map(([y, m, d], i) => `w${i} = week_of_year(datetime(${y}-${m}-${d}))`).join(', ')}`);
    assert.deepEqual(r, Object.fromEntries(dates.map(([y, m, d], i) => [`w${i}`, isoWeek(y, m, d)])));
    // Hand-checked against the calendar too: 2015 has 53 ISO weeks; 1971-01-01 and 2005-01-01 are in their previous years' week 53.
    assert.deepEqual(Object.values(r), [53, 24, 53, 53]);
  });

  it('getyear, getmonth, monthofyear, dayofmonth, dayofyear, hourofday of one datetime', async () => {
    const r = await one(`let d = datetime(2016-11-27 21:44:10);
      print y = getyear(d), m = getmonth(d), mo = monthofyear(d), dm = dayofmonth(d), dy = dayofyear(d), h = hourofday(d)`);
    // 2016 is a leap year: 31+29+31+30+31+30+31+31+30+31 = 305 days before November.
    assert.deepEqual(r, { y: 2016, m: 11, mo: 11, dm: 27, dy: 305 + 27, h: 21 });
  });

  it('parse_json of a JSON text: members read from the parsed value', async () => {
    const r = await run(
      `datatable(metrics:string)['{"latency":{"value":42.5,"count":3,"min":40.0,"max":45.0}}']
       | extend d = parse_json(metrics) | project v = d.latency.value, lo = d.latency.min`,
    );
    assert.deepEqual(r.results, [{ v: 42.5, lo: 40 }]);
  });

  it('parse_json of text that is not JSON: a dynamic holding the original string', async () => {
    const r = await one('print d = parse_json("not json {"), t = gettype(parse_json("not json {"))');
    assert.deepEqual(r, { d: 'not json {', t: 'string' });
  });

  it('the datetime type: each ISO 8601 form of its table, with our own instant', async () => {
    const forms = [
      ['2019-04-07T09:10:11.123456Z', '2019-04-07T09:10:11.1234560Z'],
      ['2019-04-07T09:10:11.123456', '2019-04-07T09:10:11.1234560Z'],
      ['2019-04-07T09:10', '2019-04-07T09:10:00.0000000Z'],
      ['2019-04-07 09:10:11.123456Z', '2019-04-07T09:10:11.1234560Z'],
      ['2019-04-07 09:10:11', '2019-04-07T09:10:11.0000000Z'],
      ['2019-04-07 09:10', '2019-04-07T09:10:00.0000000Z'],
      ['2019-04-07', '2019-04-07T00:00:00.0000000Z'],
    ];
    for (const [text, expected] of forms) {
      assert.equal((await one(`print t = todatetime("${text}")`)).t, expected, text);
      assert.equal((await one(`print s = "${text}" | project t = todatetime(s)`)).t, expected, `${text} per row`);
    }
  });

  it('the datetime type: RFC 822 and RFC 850 forms, with our own instant', async () => {
    const forms = [
      'Sun, 7 Apr 19 09:10:11 GMT',
      'Sun, 7 Apr 19 09:10:11',
      '7 Apr 19 09:10:11 GMT',
      '7 Apr 19 09:10:11',
      'Sunday, 07-Apr-19 09:10:11 GMT',
      'Sunday, 07-Apr-19 09:10:11',
    ];
    for (const text of forms) {
      assert.equal((await one(`print t = todatetime("${text}")`)).t, '2019-04-07T09:10:11.0000000Z', text);
      assert.equal(
        (await one(`print s = "${text}" | project t = todatetime(s)`)).t,
        '2019-04-07T09:10:11.0000000Z',
        `${text} per row`,
      );
    }
  });

  it('mv-expand … to typeof(datetime): each element converted, a 7th digit kept', async () => {
    const r = await run(
      `datatable(k:string, a:dynamic)["x", dynamic(["2020-02-29T12:00:00.0000001Z", "2020-03-01"])] | mv-expand a to typeof(datetime)`,
      { ordered: true },
    );
    assert.deepEqual(r.results, [
      { k: 'x', a: '2020-02-29T12:00:00.0000001Z' },
      { k: 'x', a: '2020-03-01T00:00:00.0000000Z' },
    ]);
  });

  it('bag_unpack with an output schema: a datetime property typed datetime', async () => {
    const r = await run(
      `datatable(d:dynamic)[dynamic({"Name":"ann","Seen":"2022-05-06T07:08:09.1234567Z"}), dynamic({"Name":"bob"})]
       | evaluate bag_unpack(d) : (Name:string, Seen:datetime)`,
    );
    assert.deepEqual(
      r.results.map((x) => JSON.stringify(x)).sort(),
      [
        { Name: 'ann', Seen: '2022-05-06T07:08:09.1234567Z' },
        { Name: 'bob', Seen: null },
      ].map((x) => JSON.stringify(x)),
    );
  });

  it('datetime_part and the calendar fields are typed int (getschema)', async () => {
    const r = await run(
      `print d = datetime(2021-02-03 04:05:06) | project y = datetime_part('year', d), g = getyear(d), w = week_of_year(d) | getschema`,
      { ordered: true },
    );
    assert.deepEqual(
      r.results.map((x) => x.ColumnType),
      ['int', 'int', 'int'],
    );
  });

  /** Documented examples Strata does not answer as Kusto does, with why (checked to still differ). */
  const NOT_ANSWERED: [string, string, (r: Record<string, unknown>) => boolean][] = [
    // Kusto's example compares todatetime('12-02-2022') with the literal and answers true; the
    // month-first (or day-first) form is not in the datetime type's table of forms, and which one
    // Kusto reads is not documented: Strata reads neither (null).
    ["print todatetime('11-03-2021')", 'a dd-MM-yyyy / MM-dd-yyyy text (form not documented)', (r) => r.print_0 === null],
    // mv-expand's "to typeof(int)" example shows the column typed int; Strata folds int into long
    // (common/src/query/value-types.ts) and marks int only for the calendar fields (decision 0048).
    [
      'datatable(a:dynamic)[dynamic([6, 7])] | mv-expand a to typeof(int) | getschema | project ColumnType',
      'mv-expand … to typeof(int) shows long (int folded into long)',
      (r) => r.ColumnType === 'long',
    ],
  ];
  for (const [query, why, stillDiffers] of NOT_ANSWERED)
    it(`not answered as Kusto: ${why}`, async () => {
      assert.ok(stillDiffers(await one(query)), `${query} now answers; move it to the passing examples`);
    });
});
