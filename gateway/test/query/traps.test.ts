/**
 * The trap catalogue: one test per place where Kusto answers differently from what SQL (or
 * intuition) gives. Every test names its trap. Data runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, kustoDate, LOGS, NOW, run, scalar, sortedJson } from './fixture.js';

describe('query traps (Kusto semantics)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('trap: sort without a direction sorts descending', async () => {
    const r = await run('range x from 1 to 5 step 1 | sort by x', { ordered: true });
    assert.deepEqual(
      r.results.map((x) => x.x),
      [5, 4, 3, 2, 1],
    );
  });

  it('trap: order by is sort (descending by default)', async () => {
    const r = await run('range x from 1 to 3 step 1 | order by x', { ordered: true });
    assert.deepEqual(
      r.results.map((x) => x.x),
      [3, 2, 1],
    );
  });

  it('trap: top without a direction takes the largest values', async () => {
    const r = await run('Logs | where isnotnull(latencyMs) | top 3 by latencyMs | project latencyMs', { ordered: true });
    const expected = LOGS.map((l) => l.latencyMs)
      .filter((v): v is number => v !== null)
      .sort((a, b) => b - a)
      .slice(0, 3);
    assert.deepEqual(
      r.results.map((x) => x.latencyMs),
      expected,
    );
  });

  it('trap: descending sort puts nulls last, ascending puts them first', async () => {
    const q = (dir: string) => `datatable(v:long)[2, long(null), 1] | sort by v ${dir}`;
    assert.deepEqual(
      (await run(q('desc'), { ordered: true })).results.map((x) => x.v),
      [2, 1, null],
    );
    assert.deepEqual(
      (await run(q('asc'), { ordered: true })).results.map((x) => x.v),
      [null, 1, 2],
    );
  });

  it('trap: has matches whole terms, not substrings', async () => {
    assert.equal(await scalar('print "hello-world" has "hello"'), true);
    assert.equal(await scalar('print "Helloworld" has "hello"'), false);
    assert.equal(await scalar('print "Helloworld" contains "hello"'), true);
    assert.equal(await scalar('print "say HELLO there" has "hello"'), true);
    assert.equal(await scalar('print "say HELLO there" has_cs "hello"'), false);
    assert.equal(await scalar('print "a.b.c" has "b.c"'), true);
    assert.equal(await scalar('print "ab.c" has "b.c"'), false);
  });

  it('trap: string operators are case-insensitive unless _cs', async () => {
    assert.equal(await scalar('print "FabriKam" contains "BRik"'), true);
    assert.equal(await scalar('print "FabriKam" contains_cs "BRik"'), false);
    assert.equal(await scalar('print "Fabrikam" startswith "fab"'), true);
    assert.equal(await scalar('print "Fabrikam" startswith_cs "fab"'), false);
    assert.equal(await scalar('print "abc" =~ "ABC"'), true);
    assert.equal(await scalar('print "abc" == "ABC"'), false);
  });

  it('trap: % is never negative (0 <= N % D < abs(D))', async () => {
    const r = await run('print plusPlus = 14 % 12, minusPlus = -14 % 12, plusMinus = 14 % -12, minusMinus = -14 % -12');
    assert.deepEqual(r.results, [{ plusPlus: 2, minusPlus: 10, plusMinus: 2, minusMinus: 10 }]);
  });

  it('trap: integer / is integer division (truncating)', async () => {
    const r = await run('print a = 1 / 2, b = 7 / 2, c = -7 / 2, d = 1.0 / 2, e = 1 / 2.0, f = real(1) / 2');
    assert.deepEqual(r.results, [{ a: 0, b: 3, c: -3, d: 0.5, e: 0.5, f: 0.5 }]);
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['Int64', 'Int64', 'Int64', 'Float64', 'Float64', 'Float64'],
    );
  });

  it('trap: startofweek starts on Sunday', async () => {
    // 2024-01-10 is a Wednesday; the week began on Sunday 2024-01-07.
    assert.equal(await scalar('print startofweek(datetime(2024-01-10 15:30))'), '2024-01-07T00:00:00.0000000Z');
    assert.equal(await scalar('print startofweek(datetime(2024-01-07 00:00))'), '2024-01-07T00:00:00.0000000Z');
    assert.equal(await scalar('print startofweek(datetime(2024-01-06 23:59))'), '2023-12-31T00:00:00.0000000Z');
  });

  it("trap: bin on datetimes floors as Kusto's documented examples show", async () => {
    assert.equal(await scalar('print bin(datetime(1970-05-11 13:45:07), 1d)'), '1970-05-11T00:00:00.0000000Z');
    // Before 1970 (negative Unix microseconds) the bins floor too, not toward 1970.
    assert.equal(await scalar('print bin(datetime(1969-12-31 23:57:30), 5m)'), '1969-12-31T23:55:00.0000000Z');
    assert.equal(await scalar('print bin(datetime(1969-12-31 23:55:00), 5m)'), '1969-12-31T23:55:00.0000000Z');
    assert.equal(await scalar('print bin(datetime(1900-03-01 10:30:00.5), 1h)'), '1900-03-01T10:00:00.0000000Z');
    assert.equal(await scalar('print bin(datetime(1970-01-01 00:04:59.9999999), 5m)'), '1970-01-01T00:00:00.0000000Z');
    assert.equal(await scalar('print bin(4.5, 1)'), 4);
    assert.equal(await scalar('print bin(time(16d), 7d)'), '14.00:00:00');
    assert.equal(await scalar('print bin(-7, 5)'), -10);
    // Week bins count from DateTime's zero (0001-01-01, a Monday), not from 1970 (a Thursday).
    assert.equal(await scalar('print bin(datetime(2024-01-10), 7d)'), '2024-01-08T00:00:00.0000000Z');
  });

  it('trap: datetime offsets convert to UTC', async () => {
    assert.equal(await scalar('print datetime(2024-01-01T10:00:00+02:00)'), '2024-01-01T08:00:00.0000000Z');
    assert.equal(await scalar('print todatetime("2024-01-01T10:00:00-05:30")'), '2024-01-01T15:30:00.0000000Z');
    assert.equal(await scalar('print todatetime(strcat("2024-01-01T10:00:00", "+01:00"))'), '2024-01-01T09:00:00.0000000Z');
  });

  it('trap: now() is one value for the whole query', async () => {
    const r = await run('range i from 1 to 50 step 1 | extend t = now() | summarize dcount(t), min(t)');
    assert.deepEqual(r.results, [{ dcount_t: 1, min_t: kustoDate(NOW) }]);
    const p = await run('print a = now(), b = now(), c = ago(0s)');
    assert.deepEqual(p.results, [{ a: kustoDate(NOW), b: kustoDate(NOW), c: kustoDate(NOW) }]);
  });

  it('trap: conversions of bad input give null', async () => {
    const r = await run(
      'print a = toint("abc"), b = tolong("12x"), c = todouble("x1"), d = todatetime("garbage"), e = tobool("maybe"), f = toguid("nope"), g = parse_json("{bad")',
    );
    // parse_json of text that is not JSON is not null: Kusto documents a dynamic holding the
    // original string (decision 0048).
    assert.deepEqual(r.results, [{ a: null, b: null, c: null, d: null, e: null, f: null, g: '{bad' }]);
    const ok = await run(
      'print a = toint("42"), b = tolong(" -7 "), c = todouble("1e3"), d = tobool("TRUE"), e = toint(2.9), f = toint(-2.9)',
    );
    assert.deepEqual(ok.results, [{ a: 42, b: -7, c: 1000, d: true, e: 2, f: -2 }]);
  });

  it('trap: result columns are named as Kusto names them', async () => {
    const r = await run('Logs | summarize count(), avg(latencyMs), percentile(latencyMs, 95), count() by level');
    assert.deepEqual(r.header, ['level', 'count_', 'avg_latencyMs', 'percentile_latencyMs_95', 'count_1']);
    const p = await run(
      'Logs | take 1 | project latencyMs + 1, tolower(host), strlen(message), toint(ratio), props.user.id, bin(timestamp, 1h)',
    );
    assert.deepEqual(p.header, ['Column1', 'Column2', 'strlen_message', 'ratio', 'props_user_id', 'timestamp']);
    assert.deepEqual((await run('print 1, x = 2, 3')).header, ['print_0', 'x', 'print_2']);
    assert.deepEqual((await run('Logs | count')).header, ['Count']);
  });

  it('trap: null == value is false and null != value is true', async () => {
    const r = await run('datatable(v:long)[5, long(null)] | extend eq = v == 5, ne = v != 5, gt = v > 3', { ordered: true });
    assert.deepEqual(r.results, [
      { v: 5, eq: true, ne: false, gt: true },
      { v: null, eq: false, ne: true, gt: null },
    ]);
    const n = await run('datatable(v:long)[long(null)] | where v != 5 | count');
    assert.deepEqual(n.results, [{ Count: 1 }]);
  });

  it('trap: strings are never null (a missing string reads as "")', async () => {
    const missing = LOGS.filter((l) => l.host === null).length;
    assert.ok(missing > 0);
    assert.equal(await scalar('Logs | where isempty(host) | count'), missing);
    assert.equal(await scalar('Logs | where isnull(host) | count'), 0);
    assert.equal(await scalar('Logs | where host == "" | count'), missing);
    assert.equal(await scalar('Logs | where host != "web-1" | count'), LOGS.filter((l) => l.host !== 'web-1').length);
    const r = await run('Logs | where isempty(host) | take 1 | project host');
    assert.deepEqual(r.results, [{ host: '' }]);
  });

  it('trap: DateTime values are fixed-width UTC strings with 7 fractional digits', async () => {
    assert.equal(await scalar('print datetime(2024-02-21 07:50)'), '2024-02-21T07:50:00.0000000Z');
    assert.equal(await scalar('print datetime(2024-02-21T07:50:00.1234560Z)'), '2024-02-21T07:50:00.1234560Z');
    // The 100 ns digit is kept (decision 0036), never shown as .1234560.
    assert.equal(await scalar('print datetime(2024-02-21T07:50:00.1234567Z)'), '2024-02-21T07:50:00.1234567Z');
    assert.equal(await scalar('print datetime(0001-01-01)'), '0001-01-01T00:00:00.0000000Z');
  });

  it('trap: TimeSpan values are written [d.]hh:mm:ss[.fffffff]', async () => {
    const r = await run('print a = 90m, b = 1d + 2h + 3s, c = -1500ms, d = 1tick, e = 0s');
    assert.deepEqual(r.results, [
      { a: '01:30:00', b: '1.02:00:03', c: '-00:00:01.5000000', d: '00:00:00.0000001', e: '00:00:00' },
    ]);
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['TimeSpan', 'TimeSpan', 'TimeSpan', 'TimeSpan', 'TimeSpan'],
    );
  });

  it('trap: summarize with no rows and no keys still returns one row (count 0, sum null, list [])', async () => {
    const r = await run('Logs | where latencyMs > 100000 | summarize count(), sum(latencyMs), make_list(host), dcount(host)');
    assert.deepEqual(r.results, [{ count_: 0, sum_latencyMs: null, list_host: [], dcount_host: 0 }]);
    const keyed = await run('Logs | where latencyMs > 100000 | summarize count() by host');
    assert.deepEqual(keyed.results, []);
  });

  it('trap: extend with an existing name replaces the column in place', async () => {
    const r = await run('datatable(a:long, b:long)[1, 2] | extend a = "x"');
    assert.deepEqual(r.header, ['a', 'b']);
    assert.deepEqual(r.results, [{ a: 'x', b: 2 }]);
  });

  it('trap: every item of one extend reads the input row (not the items before it)', async () => {
    // SQL-minded engines let `y = x` read the x the same extend just computed; Kusto does not.
    const r = await run('print x = 1 | extend x = x + 1, y = x');
    assert.deepEqual(r.header, ['x', 'y']);
    assert.deepEqual(r.results, [{ x: 2, y: 1 }]);
    const logs = await run(
      'Logs | where isnotnull(latencyMs) | extend latencyMs = latencyMs * 2, original = latencyMs | project id, latencyMs, original',
    );
    const expected = LOGS.filter((l) => l.latencyMs !== null).map((l) => ({
      id: l.id,
      latencyMs: (l.latencyMs as number) * 2,
      original: l.latencyMs,
    }));
    assert.deepEqual(sortedJson(logs.results), sortedJson(expected));
  });

  it('trap: every item of one project reads the input row, so two columns can swap', async () => {
    const r = await run('print x = 1, y = "b" | project y = x, x = y');
    assert.deepEqual(r.header, ['y', 'x']);
    assert.deepEqual(r.results, [{ y: 1, x: 'b' }]);
  });

  it('trap: a column that one extend or project defines is not visible to its other items', async () => {
    for (const q of ['print x = 1 | extend z = x + 1, w = z', 'print x = 1 | project z = x + 1, w = z * 2']) {
      await assert.rejects(run(q), (err: Error) => {
        assert.match(err.message, /The name 'z' does not refer to any known column.*Use a second (extend|project)/);
        return true;
      });
    }
    // A scalar let of that name is what the item reads (the name is not a column of the input).
    assert.deepEqual((await run('let z = 10; print x = 1 | extend z = x + 1, w = z')).results, [{ x: 1, z: 2, w: 10 }]);
    // In a second extend the new column is there.
    assert.deepEqual((await run('print x = 1 | extend z = x + 1 | extend w = z')).results, [{ x: 1, z: 2, w: 2 }]);
  });

  it('trap: `summarize by x` and the product form `summarize x` list distinct values', async () => {
    const expected = [...new Set(LOGS.map((l) => l.level))].sort();
    const a = await run('Logs | summarize by level');
    const b = await run('Logs | summarize level');
    assert.deepEqual(a.results.map((r) => r.level).sort(), expected);
    assert.deepEqual(b.results.map((r) => r.level).sort(), expected);
  });

  it('trap: percentile is nearest-rank (a value of the set, not interpolated)', async () => {
    const r = await run(
      'range x from 1 to 4 step 1 | summarize p50 = percentile(x, 50), p95 = percentile(x, 95), p0 = percentile(x, 0)',
    );
    assert.deepEqual(r.results, [{ p50: 2, p95: 4, p0: 1 }]);
  });
});
