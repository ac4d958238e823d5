/**
 * serialize and the row functions (issue 16, item 4): row_number, prev, next, row_cumsum and
 * row_window_session over
 * serialized rows. Expected values are computed from LOGS in TypeScript; every query runs on one
 * worker and on three (row functions run where all rows are, in order).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, kustoDate, LOGS, run } from './fixture.js';

const byTime = [...LOGS].sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());

/**
 * Kusto's row_window_session, written from its documented model: a row starts a session when
 * there is no session (first row, or after a null), when it is at or past the session's first
 * value plus maxFirst, at or past the previous value plus maxGap, or where restart is true.
 */
function sessionStarts(values: (number | null)[], maxFirst: number, maxGap: number, restart: boolean[] = []): (number | null)[] {
  let start: number | null = null;
  let prev: number | null = null;
  return values.map((v, i) => {
    if (v === null) {
      start = null;
      prev = null;
      return null;
    }
    if (start === null || prev === null || restart[i] === true || v - start >= maxFirst || v - prev >= maxGap) start = v;
    prev = v;
    return start;
  });
}

const MINUTE = 60_000;
const iso = (ms: number | null): string | null => (ms === null ? null : kustoDate(ms));

describe('serialize and row functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('row_number, prev, next and row_cumsum follow the sort order', async () => {
    const r = await run(
      'Logs | sort by timestamp asc | extend rn = row_number(), p = prev(id), n = next(latencyMs, 2, -1), total = row_cumsum(coalesce(latencyMs, 0)) | project id, rn, p, n, total',
      { ordered: true },
    );
    let total = 0;
    const expected = byTime.map((l, i) => {
      total += l.latencyMs ?? 0;
      return {
        id: l.id,
        rn: i + 1,
        p: i > 0 ? (byTime[i - 1]?.id as string) : null, // id is a guid: null before the first row
        n: i + 2 < byTime.length ? (byTime[i + 2]?.latencyMs ?? null) : -1,
        total,
      };
    });
    assert.deepEqual(r.results, expected);
  });

  it('row_number(start) after top; serialize gives rows an order that later steps keep', async () => {
    const top = await run('Logs | top 5 by timestamp desc | extend rn = row_number(0) | project id, rn', { ordered: true });
    const newest = [...byTime].reverse().slice(0, 5);
    assert.deepEqual(
      top.results,
      newest.map((l, i) => ({ id: l.id, rn: i })),
    );
    const ser = await run('range x from 1 to 4 step 1 | serialize s = row_cumsum(x) | where x > 1 | extend p = prev(s)', {
      ordered: true,
    });
    assert.deepEqual(ser.results, [
      { x: 2, s: 3, p: null },
      { x: 3, s: 6, p: 3 },
      { x: 4, s: 10, p: 6 },
    ]);
  });

  it('row_number and row_cumsum restart where their restart argument is true (which may use prev)', async () => {
    const r = await run(
      `Logs | sort by timestamp asc
         | extend rn = row_number(1, level != prev(level)), cs = row_cumsum(coalesce(latencyMs, 0), level != prev(level)),
           every4 = row_number(0, row_number() % 4 == 1)
         | project id, rn, cs, every4`,
      { ordered: true },
    );
    let rn = 0;
    let cs = 0;
    let every4 = 0;
    const expected = byTime.map((l, i) => {
      const restart = i === 0 || l.level !== byTime[i - 1]?.level;
      rn = restart ? 1 : rn + 1;
      cs = (restart ? 0 : cs) + (l.latencyMs ?? 0);
      every4 = (i + 1) % 4 === 1 ? 0 : every4 + 1;
      return { id: l.id, rn, cs, every4 };
    });
    assert.deepEqual(r.results, expected);
    await assert.rejects(
      run('Logs | sort by timestamp | extend row_number(1, 5)'),
      /restart argument of 'row_number' must be a bool/,
    );
  });

  it('row_window_session: sessions cut by the distance from the first row, by gaps, by restart and by nulls', async () => {
    // Rows 7.2 minutes apart; dropping Info rows makes gaps past 10 minutes.
    const rows = byTime.filter((l) => l.level !== 'Info');
    const r = await run(
      `Logs | where level != 'Info' | sort by timestamp asc
         | extend s = row_window_session(timestamp, 30m, 10m),
                  r = row_window_session(timestamp, 1h, 10m, level != prev(level)),
                  n = row_window_session(iff(isnull(latencyMs), datetime(null), timestamp), 20m, 8m)
         | project id, s, r, n`,
      { ordered: true },
    );
    const times = rows.map((l) => l.timestamp.getTime());
    const s = sessionStarts(times, 30 * MINUTE, 10 * MINUTE);
    const restart = rows.map((l, i) => i > 0 && l.level !== rows[i - 1]?.level);
    const rr = sessionStarts(times, 60 * MINUTE, 10 * MINUTE, restart);
    const n = sessionStarts(
      rows.map((l) => (l.latencyMs === null || l.latencyMs === undefined ? null : l.timestamp.getTime())),
      20 * MINUTE,
      8 * MINUTE,
    );
    // The data must exercise every rule: gaps, several sessions, restarts that cut one, and nulls.
    assert.ok(times.some((t, i) => i > 0 && t - (times[i - 1] as number) >= 10 * MINUTE));
    assert.ok(times.some((t, i) => i > 0 && t - (times[i - 1] as number) < 10 * MINUTE));
    assert.ok(new Set(s).size > 3 && new Set(s).size < rows.length);
    assert.notDeepEqual(rr, sessionStarts(times, 60 * MINUTE, 10 * MINUTE));
    assert.ok(n.includes(null));
    assert.deepEqual(
      r.results,
      rows.map((l, i) => ({ id: l.id, s: iso(s[i] ?? null), r: iso(rr[i] ?? null), n: iso(n[i] ?? null) })),
    );
  });

  it("row_window_session: Kusto's documented example, and in serialize", async () => {
    const r = await run(
      `datatable (ID:string, Timestamp:datetime) [
         "1", datetime(2024-04-11 10:00:00), "2", datetime(2024-04-11 10:18:00), "1", datetime(2024-04-11 11:00:00),
         "3", datetime(2024-04-11 11:30:00), "2", datetime(2024-04-11 13:30:00), "2", datetime(2024-04-11 10:16:00)]
       | sort by ID asc, Timestamp asc
       | extend SessionStarted = row_window_session(Timestamp, 1h, 5m, ID != prev(ID))`,
      { ordered: true },
    );
    const t = (hm: string) => `2024-04-11T${hm}:00.0000000Z`;
    assert.deepEqual(r.results, [
      { ID: '1', Timestamp: t('10:00'), SessionStarted: t('10:00') },
      { ID: '1', Timestamp: t('11:00'), SessionStarted: t('11:00') },
      { ID: '2', Timestamp: t('10:16'), SessionStarted: t('10:16') },
      { ID: '2', Timestamp: t('10:18'), SessionStarted: t('10:16') },
      { ID: '2', Timestamp: t('13:30'), SessionStarted: t('13:30') },
      { ID: '3', Timestamp: t('11:30'), SessionStarted: t('11:30') },
    ]);
    // Both limits count as reached when equal (Kusto: "equals or exceeds").
    const edges = await run(
      `datatable (m:long) [0, 4, 8, 12, 17, 22] | extend t = datetime(2024-01-01) + m * 1m
       | serialize s = row_window_session(t, 8m, 5m) | project m, s = (s - datetime(2024-01-01)) / 1m`,
      { ordered: true },
    );
    assert.deepEqual(
      edges.results.map((row) => row.s),
      [0, 0, 8, 8, 17, 22],
    );
    const ser = await run(
      'Logs | sort by timestamp asc | serialize s = row_window_session(timestamp, 15m, 10m) | project id, s',
      {
        ordered: true,
      },
    );
    const expected = sessionStarts(
      byTime.map((l) => l.timestamp.getTime()),
      15 * MINUTE,
      10 * MINUTE,
    );
    assert.deepEqual(
      ser.results,
      byTime.map((l, i) => ({ id: l.id, s: iso(expected[i] ?? null) })),
    );
    await assert.rejects(
      run('Logs | sort by timestamp | extend row_window_session(timestamp, 1h, latencyMs)'),
      /maximum distance between neighbors of 'row_window_session' must be a constant timespan/,
    );
    await assert.rejects(
      run('Logs | extend row_window_session(timestamp, 1h, 5m)'),
      /'row_window_session' needs serialized rows/,
    );
    await assert.rejects(
      run('Logs | sort by timestamp | extend row_window_session(prev(timestamp), 1h, 5m)'),
      /The value of 'row_window_session' cannot use row functions itself/,
    );
    await assert.rejects(
      run('Logs | sort by timestamp | extend row_window_session(latencyMs, 1h, 5m)'),
      /first argument of 'row_window_session' must be a datetime/,
    );
  });

  it('refuses row functions over rows without an order, and outside extend/project/serialize', async () => {
    await assert.rejects(run('Logs | extend rn = row_number()'), /'row_number' needs serialized rows/);
    await assert.rejects(
      run('Logs | sort by timestamp | summarize by level | extend p = prev(level)'),
      /'prev' needs serialized rows/,
    );
    await assert.rejects(
      run('Logs | sort by timestamp | where prev(latencyMs) > 1'),
      /'prev' is supported in extend, project and serialize/,
    );
  });
});
