/**
 * Result tests for scalar operators, scalar functions and aggregates: every answer is compared
 * with one computed in TypeScript from the fixture rows, on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { approx, closeCluster, getCluster, kustoDate, LOGS, type LogRow, NOW, run, scalar, sortedJson } from './fixture.js';

const s = (v: string | null) => v ?? '';
const TERM = /[\p{L}\p{N}]/u;

/** Kusto's `has`, written independently: the needle found with no letter/digit around it. */
function has(hay: string, needle: string, cs = false): boolean {
  const h = cs ? hay : hay.toLowerCase();
  const n = cs ? needle : needle.toLowerCase();
  if (n === '') return true;
  for (let i = h.indexOf(n); i >= 0; i = h.indexOf(n, i + 1)) {
    const before = i === 0 ? '' : (h[i - 1] as string);
    const after = h[i + n.length] ?? '';
    const okBefore = !TERM.test(n[0] as string) || before === '' || !TERM.test(before);
    const okAfter = !TERM.test(n[n.length - 1] as string) || after === '' || !TERM.test(after);
    if (okBefore && okAfter) return true;
  }
  return false;
}

async function ids(query: string): Promise<string[]> {
  const r = await run(`Logs | where ${query} | project id`);
  return r.results.map((x) => x.id as string).sort();
}

function expectIds(pred: (l: LogRow) => boolean): string[] {
  return LOGS.filter(pred)
    .map((l) => l.id)
    .sort();
}

describe('query scalar operators (answers computed independently)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('== != < <= > >= on numbers, strings and datetimes', async () => {
    assert.deepEqual(
      await ids('latencyMs == 1313'),
      expectIds((l) => l.latencyMs === 1313),
    );
    assert.deepEqual(
      await ids('latencyMs != 1313'),
      expectIds((l) => l.latencyMs !== 1313),
    );
    assert.deepEqual(
      await ids('latencyMs < 0'),
      expectIds((l) => l.latencyMs !== null && l.latencyMs < 0),
    );
    assert.deepEqual(
      await ids('latencyMs <= 10'),
      expectIds((l) => l.latencyMs !== null && l.latencyMs <= 10),
    );
    assert.deepEqual(
      await ids('ratio > 2.5'),
      expectIds((l) => l.ratio !== null && l.ratio > 2.5),
    );
    assert.deepEqual(
      await ids('ratio >= latencyMs'),
      expectIds((l) => l.ratio !== null && l.latencyMs !== null && l.ratio >= l.latencyMs),
    );
    assert.deepEqual(
      await ids('host == "web-1"'),
      expectIds((l) => l.host === 'web-1'),
    );
    assert.deepEqual(
      await ids('host < "e"'),
      expectIds((l) => s(l.host) < 'e'),
    );
    const t = Date.UTC(2024, 2, 9, 12);
    assert.deepEqual(
      await ids('timestamp >= datetime(2024-03-09 12:00)'),
      expectIds((l) => l.timestamp.getTime() >= t),
    );
  });

  it('=~ and !~ compare case-insensitively', async () => {
    assert.deepEqual(
      await ids('host =~ "WEB-1"'),
      expectIds((l) => s(l.host).toLowerCase() === 'web-1'),
    );
    assert.deepEqual(
      await ids('host !~ "WEB-1"'),
      expectIds((l) => s(l.host).toLowerCase() !== 'web-1'),
    );
  });

  it('and, or, not()', async () => {
    assert.deepEqual(
      await ids('level == "Error" and ok'),
      expectIds((l) => l.level === 'Error' && l.ok === true),
    );
    assert.deepEqual(
      await ids('level == "Error" or ok'),
      expectIds((l) => l.level === 'Error' || l.ok === true),
    );
    assert.deepEqual(
      await ids('not(ok)'),
      expectIds((l) => l.ok === false),
    );
    assert.deepEqual(
      await ids('not(level == "Info" or level == "Error")'),
      expectIds((l) => l.level === 'Warning'),
    );
  });

  it('has, !has, has_cs, !has_cs', async () => {
    for (const needle of ['hello', 'timeout', 'user', 'world', 'HIT', 'session opened', '10.0.0.1', 'ello']) {
      assert.deepEqual(
        await ids(`message has "${needle}"`),
        expectIds((l) => has(l.message, needle)),
        `has ${needle}`,
      );
      assert.deepEqual(
        await ids(`message !has "${needle}"`),
        expectIds((l) => !has(l.message, needle)),
        `!has ${needle}`,
      );
      assert.deepEqual(
        await ids(`message has_cs "${needle}"`),
        expectIds((l) => has(l.message, needle, true)),
        `has_cs ${needle}`,
      );
      assert.deepEqual(
        await ids(`message !has_cs "${needle}"`),
        expectIds((l) => !has(l.message, needle, true)),
        `!has_cs ${needle}`,
      );
    }
  });

  it('contains, startswith, endswith and their negated and _cs forms', async () => {
    const lc = (x: string) => x.toLowerCase();
    const cases: [string, (m: string) => boolean][] = [
      ['contains "LLO"', (m) => lc(m).includes('llo')],
      ['!contains "llo"', (m) => !lc(m).includes('llo')],
      ['contains_cs "Hello"', (m) => m.includes('Hello')],
      ['!contains_cs "Hello"', (m) => !m.includes('Hello')],
      ['startswith "get"', (m) => lc(m).startsWith('get')],
      ['!startswith "get"', (m) => !lc(m).startsWith('get')],
      ['startswith_cs "GET"', (m) => m.startsWith('GET')],
      ['!startswith_cs "get"', (m) => !m.startsWith('get')],
      ['endswith "WORLD"', (m) => lc(m).endsWith('world')],
      ['!endswith "world"', (m) => !lc(m).endsWith('world')],
      ['endswith_cs "worker"', (m) => m.endsWith('worker')],
      ['!endswith_cs "Worker"', (m) => !m.endsWith('Worker')],
    ];
    for (const [op, f] of cases)
      assert.deepEqual(
        await ids(`message ${op}`),
        expectIds((l) => f(l.message)),
        op,
      );
  });

  it('in, !in, in~ and !in~', async () => {
    assert.deepEqual(
      await ids('host in ("web-1", "db-1")'),
      expectIds((l) => l.host === 'web-1' || l.host === 'db-1'),
    );
    assert.deepEqual(
      await ids('host !in ("web-1", "db-1")'),
      expectIds((l) => !(l.host === 'web-1' || l.host === 'db-1')),
    );
    assert.deepEqual(
      await ids('host in~ ("WEB-1")'),
      expectIds((l) => s(l.host).toLowerCase() === 'web-1'),
    );
    assert.deepEqual(
      await ids('host !in~ ("WEB-1")'),
      expectIds((l) => s(l.host).toLowerCase() !== 'web-1'),
    );
    assert.deepEqual(
      await ids('latencyMs in (1313, 1290, 5)'),
      expectIds((l) => [1313, 1290, 5].includes(l.latencyMs as number)),
    );
    assert.deepEqual(
      await ids('latencyMs !in (1313, 1290)'),
      expectIds((l) => ![1313, 1290].includes(l.latencyMs as number)),
    );
  });

  it('between and !between, with numbers and datetimes', async () => {
    assert.deepEqual(
      await ids('latencyMs between (100 .. 500)'),
      expectIds((l) => l.latencyMs !== null && l.latencyMs >= 100 && l.latencyMs <= 500),
    );
    assert.deepEqual(
      await ids('latencyMs !between (100 .. 500)'),
      expectIds((l) => !(l.latencyMs !== null && l.latencyMs >= 100 && l.latencyMs <= 500)),
    );
    const a = Date.UTC(2024, 2, 9, 6);
    assert.deepEqual(
      await ids('timestamp between (datetime(2024-03-09 06:00) .. 2h)'),
      expectIds((l) => l.timestamp.getTime() >= a && l.timestamp.getTime() <= a + 7_200_000),
    );
  });

  it('matches regex', async () => {
    assert.deepEqual(
      await ids('message matches regex "[0-9]{3}"'),
      expectIds((l) => /[0-9]{3}/.test(l.message)),
    );
    assert.deepEqual(
      await ids('message matches regex "^[A-Z]"'),
      expectIds((l) => /^[A-Z]/.test(l.message)),
    );
  });

  it('arithmetic on longs, reals, datetimes and timespans', async () => {
    const r = await run(
      'Logs | where isnotnull(latencyMs) and isnotnull(ratio) and isnotnull(duration) | project id, a = latencyMs + 3 * 2, b = ratio * 2 - 1, c = timestamp + 1h, d = duration * 2, e = duration / 1m, f = -latencyMs',
    );
    const expected = LOGS.filter((l) => l.latencyMs !== null && l.ratio !== null && l.duration !== null).map((l) => ({
      id: l.id,
      a: (l.latencyMs as number) + 6,
      b: (l.ratio as number) * 2 - 1,
      c: kustoDate(l.timestamp.getTime() + 3_600_000),
      d: formatTicks((l.duration as bigint) * 2n),
      e: Number(l.duration) / 600_000_000,
      f: -(l.latencyMs as number),
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('timespan and datetime literals', async () => {
    const r = await run(
      'print a = 2d, b = 1.5h, c = 30s, d = 10ms, e = time(1.02:03:04), f = datetime(2024-01-02), g = datetime(2022/01/10), h = datetime(2024-01-02T03:04:05.678Z)',
    );
    assert.deepEqual(r.results, [
      {
        a: '2.00:00:00',
        b: '01:30:00',
        c: '00:00:30',
        d: '00:00:00.0100000',
        e: '1.02:03:04',
        f: '2024-01-02T00:00:00.0000000Z',
        g: '2022-01-10T00:00:00.0000000Z',
        h: '2024-01-02T03:04:05.6780000Z',
      },
    ]);
  });

  it('datetime - datetime is a timespan', async () => {
    assert.equal(await scalar('print datetime(2024-01-02 03:00) - datetime(2024-01-01)'), '1.03:00:00');
  });

  it('dynamic access a.b, a["b"], a[0]', async () => {
    const r = await run(
      'Logs | where isnotnull(props) | project id, uid = props.user.id, name = props["user"]["name"], tag = props.tags[0], code = toint(props.code)',
    );
    const expected = LOGS.filter((l) => l.props !== null).map((l) => {
      const p = l.props as { user: { id: number; name: string }; tags: string[]; code: number };
      return { id: l.id, uid: p.user.id, name: p.user.name, tag: p.tags[0], code: p.code };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('dynamic values compare with typed values', async () => {
    assert.deepEqual(
      await ids('props.code >= 400'),
      expectIds((l) => l.props !== null && (l.props.code as number) >= 400),
    );
    assert.deepEqual(
      await ids('props.user.name == "u2"'),
      expectIds((l) => l.props !== null && (l.props.user as { name: string }).name === 'u2'),
    );
  });
});

function formatTicks(t: bigint): string {
  const neg = t < 0n;
  let v = neg ? -t : t;
  const days = v / 864_000_000_000n;
  v %= 864_000_000_000n;
  const hh = v / 36_000_000_000n;
  v %= 36_000_000_000n;
  const mm = v / 600_000_000n;
  v %= 600_000_000n;
  const ss = v / 10_000_000n;
  const f = v % 10_000_000n;
  const p = (x: bigint, n = 2) => x.toString().padStart(n, '0');
  return `${neg ? '-' : ''}${days ? `${days}.` : ''}${p(hh)}:${p(mm)}:${p(ss)}${f ? `.${p(f, 7)}` : ''}`;
}

describe('query scalar functions (answers computed independently)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('ago and now', async () => {
    const r = await run('print a = ago(1h), b = now(), c = now(-2d), d = ago(90)');
    assert.deepEqual(r.results, [
      {
        a: kustoDate(NOW.getTime() - 3_600_000),
        b: kustoDate(NOW),
        c: kustoDate(NOW.getTime() - 2 * 86_400_000),
        d: kustoDate(NOW.getTime() - 90_000),
      },
    ]);
  });

  it('bin and floor on numbers, datetimes and timespans', async () => {
    const r = await run(
      'Logs | where isnotnull(latencyMs) and isnotnull(ratio) and isnotnull(duration) | project id, a = bin(latencyMs, 100), b = bin(ratio, 0.5), c = bin(timestamp, 15m), d = floor(duration, 10m), e = floor(ratio)',
    );
    const expected = LOGS.filter((l) => l.latencyMs !== null && l.ratio !== null && l.duration !== null).map((l) => ({
      id: l.id,
      a: Math.floor((l.latencyMs as number) / 100) * 100,
      b: Math.floor((l.ratio as number) / 0.5) * 0.5,
      c: kustoDate(Math.floor(l.timestamp.getTime() / 900_000) * 900_000),
      d: formatTicks(((l.duration as bigint) / 6_000_000_000n) * 6_000_000_000n),
      e: Math.floor(l.ratio as number),
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('datetime and todatetime', async () => {
    const r = await run(
      'print a = todatetime("2024-05-06T07:08:09Z"), b = todatetime("2024-05-06 07:08"), c = todatetime(datetime(2024-01-01))',
    );
    assert.deepEqual(r.results, [
      { a: '2024-05-06T07:08:09.0000000Z', b: '2024-05-06T07:08:00.0000000Z', c: '2024-01-01T00:00:00.0000000Z' },
    ]);
    const t = await run('Logs | project id, t = todatetime(tostring(timestamp))');
    assert.deepEqual(sortedJson(t.results), sortedJson(LOGS.map((l) => ({ id: l.id, t: kustoDate(l.timestamp) }))));
  });

  it('tostring of every type', async () => {
    const r = await run(
      'print a = tostring(42), b = tostring(1.5), c = tostring(2.0), d = tostring(true), e = tostring(datetime(2024-01-01)), f = tostring(90m), g = tostring(dynamic({"a":1})), h = tostring(guid(00000000-0000-0000-0000-000000000001)), i = tostring(long(null))',
    );
    assert.deepEqual(r.results, [
      {
        a: '42',
        b: '1.5',
        c: '2',
        d: 'true',
        e: '2024-01-01T00:00:00.0000000Z',
        f: '01:30:00',
        g: '{"a":1}',
        h: '00000000-0000-0000-0000-000000000001',
        i: '',
      },
    ]);
  });

  it('toint, tolong, todouble, tobool', async () => {
    const r = await run(
      'Logs | project id, a = toint(ratio), b = tolong(tostring(latencyMs)), c = todouble(latencyMs), d = tobool(latencyMs), e = todouble(tostring(ratio))',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      a: l.ratio === null ? null : Math.trunc(l.ratio),
      b: l.latencyMs,
      c: l.latencyMs,
      d: l.latencyMs === null ? null : l.latencyMs !== 0,
      e: l.ratio,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('strlen, substring, tolower, toupper, strcat', async () => {
    const r = await run(
      'Logs | project id, a = strlen(message), b = substring(message, 2, 5), c = tolower(host), d = toupper(level), e = strcat(level, "/", host, "/", latencyMs), f = substring(message, 4)',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      a: [...l.message].length,
      b: l.message.substring(2, 7),
      c: s(l.host).toLowerCase(),
      d: l.level.toUpperCase(),
      e: `${l.level}/${s(l.host)}/${l.latencyMs ?? ''}`,
      f: l.message.substring(4),
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('extract', async () => {
    const r = await run(
      'Logs | project id, code = extract("([0-9]{3})", 1, message), whole = extract("[A-Z][a-z]+", 0, message)',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      code: /([0-9]{3})/.exec(l.message)?.[1] ?? '',
      whole: /[A-Z][a-z]+/.exec(l.message)?.[0] ?? '',
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('iff and case', async () => {
    const r = await run(
      'Logs | project id, a = iff(latencyMs > 1000, "slow", "fast"), b = case(level == "Error", 3, level == "Warning", 2, 1)',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      a: l.latencyMs !== null && l.latencyMs > 1000 ? 'slow' : 'fast',
      b: l.level === 'Error' ? 3 : l.level === 'Warning' ? 2 : 1,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('coalesce and the product notnull(x, default)', async () => {
    const r = await run('Logs | project id, a = coalesce(latencyMs, -1), b = coalesce(host, level), c = notnull(ratio, 99.5)');
    const expected = LOGS.map((l) => ({ id: l.id, a: l.latencyMs ?? -1, b: l.host || l.level, c: l.ratio ?? 99.5 }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const d = await run('datatable(val:int64)[1, null, 3] | extend result = notnull(val, 99)', { ordered: true });
    assert.deepEqual(d.results, [
      { val: 1, result: 1 },
      { val: null, result: 99 },
      { val: 3, result: 3 },
    ]);
  });

  it('isnull, isnotnull, isempty, isnotempty', async () => {
    const r = await run(
      'Logs | project id, a = isnull(latencyMs), b = isnotnull(ratio), c = isempty(host), d = isnotempty(message), e = isempty(latencyMs)',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      a: l.latencyMs === null,
      b: l.ratio !== null,
      c: s(l.host) === '',
      d: l.message !== '',
      e: l.latencyMs === null,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('round, abs, sqrt', async () => {
    const r = await run(
      'Logs | where isnotnull(ratio) | project id, a = round(ratio, 1), b = abs(ratio), c = sqrt(abs(ratio)), d = round(ratio), e = sqrt(-1.0)',
    );
    const roundAway = (x: number, d: number) => {
      const f = 10 ** d;
      return (Math.sign(x) * Math.round(Math.abs(x) * f)) / f;
    };
    const expected = LOGS.filter((l) => l.ratio !== null).map((l) => {
      const x = l.ratio as number;
      return { id: l.id, a: roundAway(x, 1), b: Math.abs(x), c: Math.sqrt(Math.abs(x)), d: roundAway(x, 0), e: null };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('parse_json and the product json()', async () => {
    const r = await run(
      'Logs | project id, a = parse_json(strcat("{\\"n\\":", latencyMs, "}")).n, b = json(tostring(props)).user.name',
    );
    const expected = LOGS.map((l) => ({
      id: l.id,
      a: l.latencyMs,
      b: l.props === null ? null : (l.props.user as { name: string }).name,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const doc = await run(
      'datatable (string_column: string, json_column: json) [ \'{ "field1": 3 }\', json(\'{ "field1": 3 }\') ] | project left = json(string_column).field1, right = json_column.field1',
    );
    assert.deepEqual(doc.results, [{ left: 3, right: 3 }]);
  });

  it('startofday, startofweek, startofmonth', async () => {
    const r = await run(
      'Logs | project id, a = startofday(timestamp), b = startofweek(timestamp), c = startofmonth(timestamp), d = startofday(timestamp, 1)',
    );
    const day = 86_400_000;
    const expected = LOGS.map((l) => {
      const t = l.timestamp.getTime();
      const sod = Math.floor(t / day) * day;
      const d = l.timestamp;
      return {
        id: l.id,
        a: kustoDate(sod),
        b: kustoDate(sod - d.getUTCDay() * day),
        c: kustoDate(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)),
        d: kustoDate(sod + day),
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('datetime_part', async () => {
    const r = await run(
      'Logs | project id, y = datetime_part("Year", timestamp), m = datetime_part("month", timestamp), d = datetime_part("Day", timestamp), h = datetime_part("Hour", timestamp), mi = datetime_part("Minute", timestamp), s = datetime_part("Second", timestamp), ms = datetime_part("Millisecond", timestamp), dy = datetime_part("DayOfYear", timestamp), q = datetime_part("Quarter", timestamp)',
    );
    const expected = LOGS.map((l) => {
      const d = l.timestamp;
      const doy = Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
      return {
        id: l.id,
        y: d.getUTCFullYear(),
        m: d.getUTCMonth() + 1,
        d: d.getUTCDate(),
        h: d.getUTCHours(),
        mi: d.getUTCMinutes(),
        s: d.getUTCSeconds(),
        ms: d.getUTCMilliseconds(),
        dy: doy,
        q: Math.floor(d.getUTCMonth() / 3) + 1,
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('format_datetime', async () => {
    const r = await run(
      'Logs | project id, a = format_datetime(timestamp, "yyyy-MM-dd HH:mm:ss.fff"), b = format_datetime(timestamp, "M/d/yy h tt")',
    );
    const p = (n: number, w = 2) => String(n).padStart(w, '0');
    const expected = LOGS.map((l) => {
      const d = l.timestamp;
      const h12 = ((d.getUTCHours() + 11) % 12) + 1;
      return {
        id: l.id,
        a: `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}`,
        b: `${d.getUTCMonth() + 1}/${d.getUTCDate()}/${p(d.getUTCFullYear() % 100)} ${h12} ${d.getUTCHours() < 12 ? 'AM' : 'PM'}`,
      };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });
});

interface Group {
  rows: LogRow[];
}

function groupBy(key: (l: LogRow) => string): Map<string, Group> {
  const m = new Map<string, Group>();
  for (const l of LOGS) {
    const k = key(l);
    const g = m.get(k) ?? { rows: [] };
    g.rows.push(l);
    m.set(k, g);
  }
  return m;
}

const nums = (rows: LogRow[], f: (l: LogRow) => number | null) => rows.map(f).filter((v): v is number => v !== null);

function nearestRank(values: number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] as number;
}

function sampleVariance(values: number[]): number | null {
  if (values.length === 0) return null;
  if (values.length === 1) return 0;
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
}

describe('query aggregates (answers computed independently)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  const byLevel = () => groupBy((l) => l.level);

  it('count, countif, sum, sumif, avg, min, max, agg_min, agg_max', async () => {
    const r = await run(
      'Logs | summarize c = count(), ci = countif(latencyMs > 500), su = sum(latencyMs), si = sumif(latencyMs, ok), av = avg(ratio), mi = min(latencyMs), ma = max(timestamp), ami = agg_min(ratio), ama = agg_max(latencyMs) by level',
    );
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      const lat = nums(g.rows, (l) => l.latencyMs);
      const rat = nums(g.rows, (l) => l.ratio);
      assert.equal(row.c, g.rows.length);
      assert.equal(row.ci, lat.filter((v) => v > 500).length);
      assert.equal(
        row.su,
        lat.reduce((a, b) => a + b, 0),
      );
      assert.equal(
        row.si,
        nums(
          g.rows.filter((l) => l.ok === true),
          (l) => l.latencyMs,
        ).reduce((a, b) => a + b, 0),
      );
      approx(row.av, rat.reduce((a, b) => a + b, 0) / rat.length);
      assert.equal(row.mi, Math.min(...lat));
      assert.equal(row.ma, kustoDate(Math.max(...g.rows.map((l) => l.timestamp.getTime()))));
      assert.equal(row.ami, Math.min(...rat));
      assert.equal(row.ama, Math.max(...lat));
    }
  });

  it('dcount', async () => {
    const r = await run('Logs | summarize d = dcount(host), u = dcount(tostring(props.user.id)) by level');
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      assert.equal(row.d, new Set(g.rows.map((l) => s(l.host))).size);
      assert.equal(row.u, new Set(g.rows.map((l) => (l.props === null ? '' : String((l.props.user as { id: number }).id)))).size);
    }
  });

  it('percentile and percentiles (nearest rank)', async () => {
    const r = await run('Logs | summarize p = percentile(latencyMs, 90), percentiles(ratio, 5, 50, 99.5) by level');
    assert.deepEqual(r.header, ['level', 'p', 'percentile_ratio_5', 'percentile_ratio_50', 'percentile_ratio_99_5']);
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      assert.equal(
        row.p,
        nearestRank(
          nums(g.rows, (l) => l.latencyMs),
          90,
        ),
      );
      const rat = nums(g.rows, (l) => l.ratio);
      assert.equal(row.percentile_ratio_5, nearestRank(rat, 5));
      assert.equal(row.percentile_ratio_50, nearestRank(rat, 50));
      assert.equal(row.percentile_ratio_99_5, nearestRank(rat, 99.5));
    }
  });

  it('arg_max and arg_min return the row of the extreme value', async () => {
    const r = await run('Logs | summarize arg_max(latencyMs, id, host), arg_min(timestamp, *) by level');
    assert.deepEqual(r.header.slice(0, 6), ['level', 'latencyMs', 'id', 'host', 'timestamp', 'host1']);
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      const withLat = g.rows.filter((l) => l.latencyMs !== null);
      const max = Math.max(...withLat.map((l) => l.latencyMs as number));
      const top = withLat.filter((l) => l.latencyMs === max);
      assert.equal(row.latencyMs, max);
      assert.ok(top.some((l) => l.id === row.id && s(l.host) === row.host));
      const first = [...g.rows].sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime())[0] as LogRow;
      assert.equal(row.timestamp, kustoDate(first.timestamp));
      assert.equal(row.id1, first.id);
      assert.equal(row.ratio, first.ratio);
      assert.deepEqual(row.props, first.props);
    }
    const named = await run('Logs | summarize latest = arg_max(timestamp, latencyMs) by host');
    assert.deepEqual(named.header, ['host', 'latest', 'latencyMs']);
  });

  it('make_list and make_set', async () => {
    const r = await run(
      'Logs | summarize l = make_list(level), st = make_set(host), lim = make_set(level, 1) by b = bin(latencyMs, 1000)',
      { anyRows: true },
    );
    const groups = groupBy((l) => String(l.latencyMs === null ? null : Math.floor(l.latencyMs / 1000) * 1000));
    for (const [k, g] of groups) {
      const row = r.results.find((x) => String(x.b) === k) as Record<string, unknown>;
      assert.deepEqual([...(row.l as string[])].sort(), g.rows.map((l) => l.level).sort());
      assert.deepEqual([...(row.st as string[])].sort(), [...new Set(g.rows.map((l) => s(l.host)))].sort());
      assert.equal((row.lim as string[]).length, 1);
    }
  });

  it('take_any returns a value of the group', async () => {
    const r = await run('Logs | summarize take_any(host) by level', { anyRows: true });
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      assert.ok(g.rows.some((l) => s(l.host) === row.host));
    }
  });

  it('stdev and variance (sample)', async () => {
    const r = await run('Logs | summarize sd = stdev(latencyMs), v = variance(ratio) by level');
    for (const [level, g] of byLevel()) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      approx(row.sd, Math.sqrt(sampleVariance(nums(g.rows, (l) => l.latencyMs)) as number), 1e-9);
      approx(row.v, sampleVariance(nums(g.rows, (l) => l.ratio)) as number, 1e-9);
    }
    const one = await run('print x = 5 | summarize stdev(x), variance(x)');
    assert.deepEqual(one.results, [{ stdev_x: 0, variance_x: 0 }]);
  });

  it('the product join(x, sep) aggregate concatenates', async () => {
    const r = await run(
      'datatable(group:string, val:string)["A", "foo", "A", "bar", "B", "baz"] | summarize joined = join(val, ",") by group',
    );
    const byGroup = Object.fromEntries(r.results.map((x) => [x.group, String(x.joined).split(',').sort().join(',')]));
    assert.deepEqual(byGroup, { A: 'bar,foo', B: 'baz' });
  });

  it('aggregates over a time-filtered table on several workers', async () => {
    const r = await run('Logs | where timestamp > ago(1d) | summarize n = count(), s = sum(latencyMs) by bin(timestamp, 1h)');
    const cutoff = NOW.getTime() - 86_400_000;
    const g = new Map<number, { n: number; s: number | null }>();
    for (const l of LOGS.filter((x) => x.timestamp.getTime() > cutoff)) {
      const k = Math.floor(l.timestamp.getTime() / 3_600_000) * 3_600_000;
      const v = g.get(k) ?? { n: 0, s: null };
      v.n++;
      if (l.latencyMs !== null) v.s = (v.s ?? 0) + l.latencyMs;
      g.set(k, v);
    }
    const expected = [...g].map(([k, v]) => ({ timestamp: kustoDate(k), n: v.n, s: v.s }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });
});
