/**
 * make-series (issue 16, item 4): arrays per group along the axis, built at the gateway from
 * partial aggregates per (group, bin) computed on the workers. Every query runs on one worker and
 * on three (fixture.run insists on the same answer); datatable sources run in the gateway's merge
 * database. Expected arrays are computed here from LOGS/EVENTS with plain loops; result names and
 * types are checked against Microsoft's analyzer.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'mocha';
import { bindQuery } from '../../src/query/engine.js';
import { warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';
import { EVENTS, getCluster, kustoDate, LOGS, run } from './fixture.js';
import { kustoColumns } from './kusto-analyzer.js';

const HOUR = 3_600_000;
/** Ticks (100 ns) from 0001-01-01 to the Unix epoch: Kusto's bin() counts from there. */
const EPOCH_TICKS = 621_355_968_000_000_000n;

const COLUMNS = 'timestamp:datetime, x:long, y:real, s:string, d:dynamic, ts:timespan';
const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'T',
      columns: COLUMNS.split(', ').map((c) => {
        const [name, type] = c.split(':') as [string, SchemaCatalog['tables'][0]['columns'][0]['type']];
        return { name, type };
      }),
    },
  ],
};

const engineColumns = (query: string): string[] => bindQuery(query, CATALOG).bound.columns.map((c) => `${c.name}:${c.type}`);

describe('make-series', () => {
  before(async function () {
    this.timeout(60_000);
    await warmKustoParser();
    await getCluster();
  });

  it('names and types its columns as Microsoft’s analyzer does', () => {
    for (const q of [
      'T | make-series count() on timestamp from datetime(2024-01-01) to datetime(2024-01-02) step 1h',
      'T | make-series avg(y), m = max(x) default = -1, sum(x) on timestamp step 1d by s',
      'T | make-series count(), dcount(s) on x in range(0, 100, 10) by k = strlen(s)',
      'T | make-series sum(y) on ts from 0s to 1h step 10m',
      'T | make-series c = countif(x > 1) on timestamp step 1h | extend f = series_fill_forward(c)',
    ]) {
      assert.deepEqual(engineColumns(q), kustoColumns(q, COLUMNS), q);
    }
  });

  it('from … to … step … by: one row per group, Kusto’s aggregates per bin and the default elsewhere', async () => {
    const from = Date.UTC(2024, 2, 9, 2);
    const to = Date.UTC(2024, 2, 10, 1);
    const step = 5 * HOUR;
    const r = await run(
      `Logs | make-series n = count(), avg(latencyMs) default = -1, m = max(latencyMs) on timestamp
         from datetime(2024-03-09 02:00) to datetime(2024-03-10 01:00) step 5h by level`,
    );
    assert.deepEqual(
      r.columns.map((c) => `${c.name}:${c.type}`),
      ['level:String', 'n:Dynamic', 'avg_latencyMs:Dynamic', 'm:Dynamic', 'timestamp:Dynamic'],
    );
    const bins = Math.ceil((to - from) / step); // the last bin starts before `to`
    assert.equal(bins, 5);
    const levels = [
      ...new Set(LOGS.filter((l) => l.timestamp.getTime() >= from && l.timestamp.getTime() < to).map((l) => l.level)),
    ];
    const expected = levels.map((level) => {
      const n: number[] = [];
      const avg: (number | null)[] = [];
      const max: (number | null)[] = [];
      for (let k = 0; k < bins; k++) {
        const rows = LOGS.filter((l) => {
          const t = l.timestamp.getTime();
          return l.level === level && t >= from + k * step && t < Math.min(from + (k + 1) * step, to);
        });
        const lat = rows.map((l) => l.latencyMs).filter((v): v is number => v !== null);
        n.push(rows.length);
        avg.push(rows.length === 0 ? -1 : lat.length === 0 ? null : lat.reduce((a, b) => a + b, 0) / lat.length);
        max.push(rows.length === 0 ? 0 : lat.length === 0 ? null : Math.max(...lat));
      }
      const axis = Array.from({ length: bins }, (_, k) => kustoDate(from + k * step));
      return { level, n, avg_latencyMs: avg, m: max, timestamp: axis };
    });
    const byLevel = (rows: Record<string, unknown>[]) => [...rows].sort((a, b) => String(a.level).localeCompare(String(b.level)));
    const got = byLevel(r.results);
    const want = byLevel(expected);
    assert.equal(got.length, want.length);
    got.forEach((row, i) => {
      const w = want[i] as Record<string, unknown>;
      assert.deepEqual(row.n, w.n);
      assert.deepEqual(row.m, w.m);
      assert.deepEqual(row.timestamp, w.timestamp);
      (row.avg_latencyMs as (number | null)[]).forEach((v, k) => {
        const e = (w.avg_latencyMs as (number | null)[])[k];
        if (e === null || e === undefined) assert.equal(v, e ?? null);
        else assert.ok(Math.abs((v as number) - e) < 1e-9, `${v} ≠ ${e}`);
      });
    });
  });

  it('without from and to: the axis spans the data’s bins (aligned as bin() aligns), the same for every group', async () => {
    const step = 7n * 36_000_000_000n; // 7h in ticks
    const r = await run('logship.agent.events | make-series total = sum(value) on timestamp step 7h by host');
    const binOf = (d: Date) => (BigInt(d.getTime()) * 10_000n + EPOCH_TICKS) / step;
    const idx = EVENTS.map((e) => binOf(e.timestamp));
    const lo = idx.reduce((a, b) => (b < a ? b : a));
    const hi = idx.reduce((a, b) => (b > a ? b : a)) + 1n;
    const axis: string[] = [];
    for (let k = lo; k < hi; k++) axis.push(kustoDate(Number((k * step - EPOCH_TICKS) / 10_000n)));
    const expected = ['web-1', 'db-9'].map((host) => {
      const total: number[] = [];
      for (let k = lo; k < hi; k++)
        total.push(EVENTS.filter((e, i) => e.host === host && idx[i] === k).reduce((a, e) => a + e.value, 0));
      return { host, total, timestamp: axis };
    });
    assert.deepEqual(
      [...r.results].sort((a, b) => String(a.host).localeCompare(String(b.host))),
      expected.sort((a, b) => a.host.localeCompare(b.host)),
    );
  });

  it('in range(start, stop, step): bins as bin() numbers them, the stop inclusive (gateway merge database)', async () => {
    const data: [number, number][] = [
      [-1.2, 1],
      [-0.9, 2],
      [0.1, 3],
      [0.4, 4],
      [1.75, 5],
      [2.2, 6],
      [2.6, 7],
    ];
    const rows = data.map(([x, v]) => `${x}, ${v}`).join(', ');
    const r = await run(
      `datatable(x:real, v:long)[${rows}] | make-series s = sum(v), c = count() default = 9 on x in range(-1.0, 2.0, 0.5)`,
    );
    // Bins floor(x / 0.5) from floor(-1 / 0.5) to floor(2 / 0.5), both included; rows outside
    // [start, stop] do not count.
    const s: number[] = [];
    const c: number[] = [];
    const axis: number[] = [];
    for (let k = -2; k <= 4; k++) {
      const inBin = data.filter(([x]) => x >= -1 && x <= 2 && Math.floor(x / 0.5) === k);
      s.push(inBin.reduce((a, [, v]) => a + v, 0));
      c.push(inBin.length === 0 ? 9 : inBin.length);
      axis.push(k * 0.5);
    }
    assert.deepEqual(r.results, [{ s, c, x: axis }]);
  });

  it('its arrays expand back into the per-bin counts of summarize (mv-expand of make-series output)', async () => {
    const r = await run(
      `Logs | make-series c = count() on timestamp from datetime(2024-03-09) to datetime(2024-03-10) step 1h
         | mv-expand c to typeof(long), timestamp to typeof(datetime) | where c > 0 | project timestamp, c`,
    );
    const counts = new Map<string, number>();
    const start = Date.UTC(2024, 2, 9);
    for (const l of LOGS) {
      const t = l.timestamp.getTime();
      if (t < start || t >= start + 24 * HOUR) continue;
      const key = kustoDate(t - ((t - start) % HOUR));
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const expected = [...counts].map(([timestamp, c]) => ({ timestamp, c }));
    const sort = (rows: Record<string, unknown>[]) =>
      [...rows].sort((a, b) => String(a.timestamp).localeCompare(String(b.timestamp)));
    assert.deepEqual(sort(r.results), sort(expected));
  });

  it('gives no rows for empty input, with or without by', async () => {
    assert.equal((await run('Logs | where level == "none" | make-series count() on timestamp step 1h')).results.length, 0);
    assert.equal(
      (
        await run(
          'Logs | where level == "none" | make-series count() on timestamp from datetime(2024-03-09) to datetime(2024-03-10) step 1h by host',
        )
      ).results.length,
      0,
    );
  });

  it('cuts an axis longer than Kusto’s 2^20 limit', async () => {
    const r = await run('range x from 1 to 3 step 1 | make-series c = count() on x from 0 to 5000000 step 1');
    const row = r.results[0] as { c: number[]; x: number[] };
    assert.equal(row.c.length, 1_048_576);
    assert.deepEqual(row.c.slice(0, 5), [0, 1, 1, 1, 0]);
    assert.equal(row.x[1_048_575], 1_048_575);
  });

  it('refuses what it does not implement, by name and with a reason', async () => {
    const refused: [string, RegExp][] = [
      ['Logs | make-series kind=nonempty count() on timestamp step 1h', /parameter 'kind=nonempty' of 'make-series'/],
      ['Logs | make-series max(host) on timestamp step 1h', /numeric results; this one gives a string/],
      ['Logs | make-series arg_max(latencyMs, host) on timestamp step 1h', /one numeric result/],
      ['Logs | make-series latencyMs on timestamp step 1h', /one numeric result/],
      ['Logs | make-series count() on host step 1h', /axis of make-series must be a datetime, timespan or number/],
      ['Logs | make-series count() on timestamp step 0s', /step of make-series must be positive/],
      ['Logs | make-series count() on timestamp step 1', /step of a datetime axis must be a timespan/],
      ['Logs | make-series count() default = latencyMs on timestamp step 1h', /latencyMs/],
      ['Logs | make-series count() on timestamp from 1 to 2 step 1h', /from of make-series must be a datetime/],
    ];
    for (const [q, re] of refused) await assert.rejects(run(q), re, q);
  });
});
