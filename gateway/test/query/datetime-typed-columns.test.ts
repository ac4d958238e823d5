/**
 * Typed columns keep Kusto's 7th fractional digit (decision 0048): `parse … with x:datetime`,
 * `parse-where`, `parse-kv`, `mv-expand … to typeof(datetime)`, `bag_unpack` with a datetime column
 * and `todatetime` of a dynamic value make datetime columns carried as ticks, read exactly by
 * where/sort/summarize/join/union and the answer — on one worker, three (fixture.run insists on the
 * same answer) and in the gateway's merge (`print`). Also the two text defects of the same family:
 * todynamic of text that is not JSON, and two-digit offsets.
 *
 * Expected values come from the fixture's LOGS in JS: the row's millisecond instant as BigInt ticks
 * plus `strlen(message)` ticks, written by hand into Kusto's 7-digit text (a different path than
 * the engine's SQL, which parses the text DuckDB-side).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

/** Ticks since the Unix epoch → Kusto's text `yyyy-MM-ddTHH:mm:ss.fffffffZ` (BigInt, floor for negatives). */
function ticksIso(t: bigint): string {
  const sec = t >= 0n ? t / 10_000_000n : -((-t + 9_999_999n) / 10_000_000n);
  const frac = t - sec * 10_000_000n;
  return new Date(Number(sec) * 1000).toISOString().replace(/\.\d{3}Z$/, `.${String(frac).padStart(7, '0')}Z`);
}

/** Each stored row's instant plus strlen(message) ticks: a 7th digit on most rows, in ticks since the Unix epoch. */
const rowTicks = LOGS.map((r) => BigInt(r.timestamp.getTime()) * 10_000n + BigInt(r.message.length));
const rowTexts = rowTicks.map(ticksIso);
const maxText = ticksIso(rowTicks.reduce((a, b) => (b > a ? b : a)));
const minText = ticksIso(rowTicks.reduce((a, b) => (b < a ? b : a)));

/** A per-row text holding a 7-digit datetime, built in the query (the stored rows keep microseconds). */
const WITH_TEXT = `Logs | extend s = strcat('at ', tostring(timestamp + strlen(message) * 1tick), ' end')`;

describe('typed datetime columns keep the 7th fractional digit (decision 0048)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('parse … with t:datetime: the answer, max/min, sort and distinct keys keep the tick', async () => {
    const rows = (await run(`${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | project t | sort by t asc`, { ordered: true }))
      .results;
    assert.deepEqual(
      rows.map((r) => r.t),
      [...rowTexts].sort(),
    );
    const agg = await one(
      `${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | summarize mx = max(t), mn = min(t), n = dcount(t)`,
    );
    assert.deepEqual(agg, { mx: maxText, mn: minText, n: new Set(rowTexts).size });
  });

  it('parse-where with t:datetime keeps the tick through a boundary filter (the row a tick above is kept, the one at it dropped)', async () => {
    // The first row's value has a 7th digit; `> value - 1tick` keeps it and `> value` drops it.
    const first = rowTicks.find((t) => t % 10n !== 0n) as bigint;
    const at = ticksIso(first);
    const below = ticksIso(first - 1n);
    const count = (bound: string) =>
      one(`${WITH_TEXT} | parse-where s with 'at ' t:datetime ' end' | where t > datetime(${bound.replace('Z', '')}) | count`);
    assert.equal((await count(below)).Count, rowTicks.filter((t) => t > first - 1n).length);
    assert.equal((await count(at)).Count, rowTicks.filter((t) => t > first).length);
    assert.equal(((await count(at)).Count as number) + 1, (await count(below)).Count);
  });

  it('summarize by a parsed datetime: one group per distinct tick, merged at the gateway', async () => {
    const rows = (await run(`${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | summarize n = count() by t`)).results;
    const expected = new Map<string, number>();
    for (const t of rowTexts) expected.set(t, (expected.get(t) ?? 0) + 1);
    assert.deepEqual(new Map(rows.map((r) => [r.t as string, r.n as number])), expected);
  });

  it('parse-kv with t:datetime keeps the tick', async () => {
    const r = await one(
      `${WITH_TEXT} | extend kv = strcat('t=', tostring(timestamp + strlen(message) * 1tick), ';k=1') | parse-kv kv as (t: datetime, k: long) with (pair_delimiter=';', kv_delimiter='=') | summarize mx = max(t), n = countif(t == todatetime(substring(s, 3, 28)))`,
    );
    assert.deepEqual(r, { mx: maxText, n: LOGS.length });
  });

  it('mv-expand … to typeof(datetime) keeps the tick of each element', async () => {
    const rows = (
      await run(
        `print a = dynamic(["2024-03-09T10:00:00.1234567Z", "2024-03-09T10:00:00.1234566Z", "bad", 5]) | mv-expand t = a to typeof(datetime) | project t, l = tostring(tolong(t))`,
        { ordered: true },
      )
    ).results;
    const base = (BigInt(Date.UTC(2024, 2, 9, 10)) * 10_000n + 621_355_968_000_000_000n) as bigint;
    assert.deepEqual(rows, [
      { t: '2024-03-09T10:00:00.1234567Z', l: String(base + 1_234_567n) },
      { t: '2024-03-09T10:00:00.1234566Z', l: String(base + 1_234_566n) },
      { t: null, l: '' },
      { t: null, l: '' },
    ]);
    // Per stored row, on the workers: the maximum over every element.
    const r = await one(
      `${WITH_TEXT} | extend a = pack_array(substring(s, 3, 28)) | mv-expand t = a to typeof(datetime) | summarize mx = max(t), n = countif(t > datetime(2024-03-09))`,
    );
    assert.deepEqual(r, { mx: maxText, n: rowTicks.filter((t) => t > BigInt(Date.UTC(2024, 2, 9)) * 10_000n).length });
  });

  it('bag_unpack with a datetime column in its output schema keeps the tick', async () => {
    const r = await one(
      `${WITH_TEXT} | extend b = bag_pack('t', substring(s, 3, 28)) | evaluate bag_unpack(b) : (s: string, t: datetime) | summarize mx = max(t), mn = min(t)`,
    );
    assert.deepEqual(r, { mx: maxText, mn: minText });
  });

  it('todatetime of a dynamic value per row and of todynamic text keeps the tick', async () => {
    const r = await one(
      `${WITH_TEXT} | extend d = todynamic(strcat('"', substring(s, 3, 28), '"')) | summarize mx = max(todatetime(d)), mn = min(todatetime(d.nothing))`,
    );
    assert.deepEqual(r, { mx: maxText, mn: null });
  });

  it('join on a parsed datetime matches the tick, not its microsecond', async () => {
    // The right side holds every row's value one tick later: only rows whose values are a tick
    // apart from another row's would match, and there is none (distinct µs instants), so a match
    // on the floor would count rows the exact key does not.
    const q = (shift: string) =>
      `${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | project t | join kind=inner (${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | project t = t + ${shift}) on t | count`;
    const shifted = new Set(rowTicks.map((t) => t + 1n));
    assert.equal((await one(q('1tick'))).Count, rowTicks.filter((t) => shifted.has(t)).length);
    const same = new Map<bigint, number>();
    for (const t of rowTicks) same.set(t, (same.get(t) ?? 0) + 1);
    assert.equal(
      (await one(q('0tick'))).Count,
      [...same.values()].reduce((a, n) => a + n * n, 0),
    );
  });

  it('union of a parsed (ticks) column with a stored (µs) one keeps both exactly', async () => {
    const r = await one(
      `union (${WITH_TEXT} | parse s with 'at ' t:datetime ' end' | project t), (Logs | project t = timestamp) | summarize mx = max(t), n = count()`,
    );
    const storedMax = ticksIso(BigInt(Math.max(...LOGS.map((l) => l.timestamp.getTime()))) * 10_000n);
    assert.deepEqual(r, { mx: maxText > storedMax ? maxText : storedMax, n: 2 * LOGS.length });
  });

  it('a parsed datetime without a 7th digit answers as before, and floor readers read its floor', async () => {
    const r = await one(
      `print s = 'x 2024-03-09T23:59:59.9999999Z y' | parse s with 'x ' t:datetime ' y' | project t, d = startofday(t), y = getyear(t), b = bin(t, 1s)`,
    );
    assert.deepEqual(r, {
      t: '2024-03-09T23:59:59.9999999Z',
      d: '2024-03-09T00:00:00.0000000Z',
      y: 2024,
      b: '2024-03-09T23:59:59.0000000Z',
    });
    const plain = await one(`print s = 'x 2024-03-09 10:11:12 y' | parse s with 'x ' t:datetime ' y'`);
    assert.equal(plain.t, '2024-03-09T10:11:12.0000000Z');
  });
});

describe('datetime text defects and int-typed calendar fields (decision 0048)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('todynamic of text that is not JSON is a dynamic string, so todatetime reads it', async () => {
    const r = await one(
      `print a = todatetime(todynamic("2024-01-02T03:04:05.1234567Z")), b = gettype(todynamic("abc")), c = tostring(parse_json("abc")), d = todynamic("{\\"x\\":1}").x, e = isnull(todynamic(""))`,
    );
    assert.deepEqual(r, { a: '2024-01-02T03:04:05.1234567Z', b: 'string', c: 'abc', d: 1, e: true });
    // Per row, on the workers.
    const n = await one(`Logs | where todatetime(todynamic(tostring(timestamp))) == timestamp | count`);
    assert.equal(n.Count, LOGS.length);
  });

  it('an offset of two digits (+hh) is applied, as ±hh:mm and ±hhmm are, as a constant and per row', async () => {
    const forms = [
      '2024-01-02T10:00:00+02',
      '2024-01-02T10:00:00+02:00',
      '2024-01-02T10:00:00+0200',
      '2024-01-02T06:30:00-01:30',
    ];
    for (const text of forms) {
      assert.equal((await one(`print t = todatetime("${text}")`)).t, '2024-01-02T08:00:00.0000000Z', text);
      assert.equal((await one(`print s = "${text}" | extend t = todatetime(s)`)).t, '2024-01-02T08:00:00.0000000Z', text);
    }
    // With a 7th digit, and a date alone is not read as an offset.
    assert.equal(
      (await one(`print s = "2024-01-02T10:00:00.1234567-03" | extend t = todatetime(s)`)).t,
      '2024-01-02T13:00:00.1234567Z',
    );
    assert.equal((await one(`print s = "2024-01-02" | extend t = todatetime(s)`)).t, '2024-01-02T00:00:00.0000000Z');
  });

  it('the calendar fields and datetime_part are typed int, as Kusto types them: answer columns, getschema, keys', async () => {
    const q = `Logs | extend y = getyear(timestamp), m = getmonth(timestamp), mo = monthofyear(timestamp), dm = dayofmonth(timestamp),
      dy = dayofyear(timestamp), h = hourofday(timestamp), w = week_of_year(timestamp), p = datetime_part('minute', timestamp),
      n = datetime_part('nanosecond', endofday(timestamp)), l = getyear(timestamp) + 1, d = datetime_diff('day', timestamp, timestamp)`;
    const ints = ['y', 'm', 'mo', 'dm', 'dy', 'h', 'w', 'p', 'n'];
    const schema = (await run(`${q} | project ${[...ints, 'l', 'd'].join(', ')} | getschema`, { ordered: true })).results;
    assert.deepEqual(
      schema.map((r) => [r.ColumnName, r.DataType, r.ColumnType]),
      [
        ...ints.map((c) => [c, 'System.Int32', 'int']),
        // Arithmetic on an int answers long here (Kusto keeps int for int + int; decision 0048), and datetime_diff is long.
        ['l', 'System.Int64', 'long'],
        ['d', 'System.Int64', 'long'],
      ],
    );
    const answer = await run(`${q} | take 1 | project ${[...ints, 'l'].join(', ')}`, { anyRows: true });
    assert.deepEqual(
      answer.columns.map((c) => c.type),
      [...ints.map(() => 'Int32'), 'Int64'],
    );
    // A summarize key, renamed and passed through a join, stays int; on one worker and three (fixture.run).
    const keyed = await run(
      `Logs | summarize n = count() by y = getyear(timestamp), h = hourofday(timestamp) | project-rename year = y | join kind=inner (Logs | summarize by h = hourofday(timestamp)) on h`,
    );
    assert.deepEqual(
      keyed.columns.map((c) => [c.name, c.type]),
      [
        ['year', 'Int32'],
        ['h', 'Int32'],
        ['n', 'Int64'],
        ['h1', 'Int32'],
      ],
    );
    // min/max/take_any answer one of the ints (Kusto: int); sum and arithmetic are long (Kusto's analyzer too).
    const agg = await run(
      'Logs | summarize mx = max(getyear(timestamp)), mn = min(hourofday(timestamp)), s = sum(getmonth(timestamp)), p = getyear(max(timestamp)) + 1',
    );
    assert.deepEqual(
      agg.columns.map((c) => [c.name, c.type]),
      [
        ['mx', 'Int32'],
        ['mn', 'Int32'],
        ['s', 'Int64'],
        ['p', 'Int64'],
      ],
    );
    assert.deepEqual(agg.results, [
      {
        mx: 2024,
        mn: Math.min(...LOGS.map((r) => r.timestamp.getUTCHours())),
        s: LOGS.reduce((a, r) => a + r.timestamp.getUTCMonth() + 1, 0),
        p: 2025,
      },
    ]);
    const hours = new Set(LOGS.map((r) => r.timestamp.getUTCHours()));
    assert.equal(keyed.results.length, hours.size);
  });

  it('tolong of an int answers long', async () => {
    const conv = await run(
      'Logs | take 1 | project a = tolong(getyear(timestamp)), b = tolong(toint(7)), c = toint(getyear(timestamp))',
      {
        anyRows: true,
      },
    );
    assert.deepEqual(
      conv.columns.map((c) => [c.name, c.type]),
      [
        ['a', 'Int64'],
        ['b', 'Int64'],
        ['c', 'Int32'],
      ],
    );
  });

  it("arg_max and arg_min answer an int as int: the maximized value and the returned columns are rows' values", async () => {
    const lastHour = [...LOGS].sort((a, b) => b.timestamp.getTime() - a.timestamp.getTime())[0]?.timestamp.getUTCHours();
    const r = await run(
      'Logs | extend y = getyear(timestamp), h = hourofday(timestamp), m = getmonth(timestamp) | summarize arg_max(timestamp, y, h), arg_min(m, level) | project timestamp, y, h, m',
    );
    assert.deepEqual(
      r.columns.map((c) => [c.name, c.type]),
      [
        ['timestamp', 'DateTime'],
        ['y', 'Int32'],
        ['h', 'Int32'],
        ['m', 'Int32'],
      ],
    );
    assert.deepEqual(
      [r.results[0]?.y, r.results[0]?.h, r.results[0]?.m],
      [2024, lastHour, Math.min(...LOGS.map((x) => x.timestamp.getUTCMonth() + 1))],
    );
    const star = await run('Logs | extend y = getyear(timestamp) | summarize arg_max(timestamp, *) | project y');
    assert.deepEqual(star.columns, [{ name: 'y', type: 'Int32' }]);
  });

  it('a union of an int with a long answers long, whatever the order of the inputs', async () => {
    const year = 'Logs | summarize by y = getyear(timestamp)';
    for (const q of [`${year} | union (print y = 1)`, `print y = 1 | union (${year})`]) {
      const r = await run(q);
      assert.deepEqual(r.columns, [{ name: 'y', type: 'Int64' }], q);
      assert.deepEqual(r.results.map((x) => x.y).sort(), [1, 2024], q);
    }
    const ints = await run(`${year} | union (print y = getmonth(datetime(2024-05-01)))`);
    assert.deepEqual(ints.columns, [{ name: 'y', type: 'Int32' }]);
  });

  it('a ± offset that does not directly follow a time with seconds makes no datetime, as a constant and per row alike', async () => {
    // The datetime type's ISO forms write the offset as `%H:%M:%s%z`; a date's `-02` is no offset.
    const texts = [
      '2024-01-02-02',
      '2024-01-02-0200',
      '2024-01-02+02:00',
      '2024-01-02 -02',
      '2024-01-02T10:00:00 +02',
      '2024-01-02T10:00:00 +02:00',
      '2024-01-02 10:00-02:00',
    ];
    for (const text of texts) {
      const r = await one(`print s = '${text}' | extend row = todatetime(s), constant = todatetime('${text}')`);
      assert.deepEqual([r.row, r.constant], [null, null], text);
    }
    // The documented form still reads its offset both ways.
    const r = await one(
      `print s = '2024-01-02T10:00:00-02' | extend row = todatetime(s), constant = todatetime('2024-01-02T10:00:00-02')`,
    );
    assert.deepEqual([r.row, r.constant], ['2024-01-02T12:00:00.0000000Z', '2024-01-02T12:00:00.0000000Z']);
  });

  it('datatable: a string cell of a datetime column converts as todatetime, a 7th digit kept', async () => {
    const r = await run(
      `datatable(d:datetime, k:long)['2024-01-02T03:04:05.1234567Z', 1, datetime(2024-01-02), 2, '2024-01-02 10:00:00+02', 3, 'nonsense', 4] | order by k asc | project d`,
      { ordered: true },
    );
    assert.deepEqual(
      r.results.map((x) => x.d),
      ['2024-01-02T03:04:05.1234567Z', '2024-01-02T00:00:00.0000000Z', '2024-01-02T08:00:00.0000000Z', null],
    );
    const plain = await one(`datatable(d:datetime)['2024-01-02 03:04:05'] | extend y = getyear(d)`);
    assert.deepEqual(plain, { d: '2024-01-02T03:04:05.0000000Z', y: 2024 });
  });

  it('property: random ticks written as text read back the same per row (SQL) and as a constant (JS)', async function () {
    this.timeout(120_000);
    // 0001-01-01 … 9999-12-31 in ticks since the Unix epoch, with and without a 7th digit.
    const min = -621_355_968_000_000_000n;
    const max = 3_155_378_975_999_999_999n - 621_355_968_000_000_000n;
    await fc.assert(
      fc.asyncProperty(fc.bigInt({ min, max }), async (t) => {
        const text = ticksIso(t);
        const r = await one(
          `print s = "${text}" | extend row = tostring(tolong(todatetime(s))), c = tostring(tolong(todatetime("${text}")))`,
        );
        const expected = String(t + 621_355_968_000_000_000n);
        assert.equal(r.row, expected, text);
        assert.equal(r.c, expected, text);
      }),
      { numRuns: 40 },
    );
  });
});
