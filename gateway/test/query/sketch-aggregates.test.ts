/**
 * Weighted percentiles, hll and tdigest sketches and the covariance family (issue 16, item 8;
 * decision 0021). Expected values are computed from LOGS in TypeScript by a different path than
 * the engine (weighted percentiles by expanding each value `weight` times, covariance by the
 * textbook two-pass formula) or written by hand from Kusto's documented examples; every query
 * runs on one worker and on three, and the sketches are merged inside the gateway's merge.
 */
import assert from 'node:assert/strict';
import { isStrataError } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { approx, closeCluster, getCluster, LOGS, type LogRow, run } from './fixture.js';

const LEVELS = [...new Set(LOGS.map((l) => l.level))].sort();
const byLevel = (level: string) => LOGS.filter((l) => l.level === level);

/** Nearest rank over the list with each value repeated `weight` times. */
function expandedPercentile(pairs: [number, number][], p: number): number | null {
  const expanded: number[] = [];
  for (const [v, w] of pairs) for (let i = 0; i < w; i++) expanded.push(v);
  if (expanded.length === 0) return null;
  expanded.sort((a, b) => a - b);
  return expanded[Math.max(1, Math.ceil((p / 100) * expanded.length)) - 1] as number;
}

/** The sample (n − 1) or population (n) covariance of the pairs where both are set. */
function covariance(xs: (number | null)[], ys: (number | null)[], population: boolean): number | null {
  const pairs = xs.map((x, i) => [x, ys[i]] as const).filter((p): p is [number, number] => p[0] !== null && p[1] !== null);
  const n = pairs.length;
  if (n === 0) return null;
  const mx = pairs.reduce((a, [x]) => a + x, 0) / n;
  const my = pairs.reduce((a, [, y]) => a + y, 0) / n;
  const s = pairs.reduce((a, [x, y]) => a + (x - mx) * (y - my), 0);
  if (population) return s / n;
  return n === 1 ? 0 : s / (n - 1);
}

const weightOf = (l: LogRow) => (l.ok === true ? 3 : l.ok === false ? 1 : 0);

async function perLevel(query: string): Promise<Map<string, Record<string, unknown>>> {
  const r = await run(query);
  return new Map(r.results.map((row) => [row.level as string, row]));
}

async function refused(query: string, message: RegExp): Promise<void> {
  await assert.rejects(run(query), (err: unknown) => isStrataError(err) && message.test((err as Error).message));
}

describe('weighted percentiles, hll, tdigest and covariance', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('percentilew and percentilesw count each value weight times (nearest rank); null or 0 weights count 0 times', async () => {
    const rows = await perLevel(
      'Logs | extend w = iff(ok == true, 3, iff(ok == false, 1, 0)) | summarize percentilew(latencyMs, w, 50), percentilesw(ratio, w, 10, 99.5) by level',
    );
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      const lat = ls.filter((l) => l.latencyMs !== null).map((l) => [l.latencyMs as number, weightOf(l)] as [number, number]);
      const rat = ls.filter((l) => l.ratio !== null).map((l) => [l.ratio as number, weightOf(l)] as [number, number]);
      assert.equal(row.percentile_latencyMs_50, expandedPercentile(lat, 50));
      assert.equal(row.percentile_ratio_10, expandedPercentile(rat, 10));
      assert.equal(row.percentile_ratio_99_5, expandedPercentile(rat, 99.5));
    }
  });

  it('percentilesw on Kusto’s documented pre-aggregated latency buckets', async () => {
    const r = await run(
      'datatable(ReqCount:long, LatencyBucket:long)[8, 10, 6, 20, 3, 30, 1, 40] | summarize percentilesw(LatencyBucket, ReqCount, 50, 75, 99.9)',
    );
    assert.deepEqual(
      r.columns.map((c) => `${c.name}:${c.type}`),
      ['percentile_LatencyBucket_50:Int64', 'percentile_LatencyBucket_75:Int64', 'percentile_LatencyBucket_99_9:Int64'],
    );
    assert.deepEqual(r.results, [
      { percentile_LatencyBucket_50: 20, percentile_LatencyBucket_75: 20, percentile_LatencyBucket_99_9: 40 },
    ]);
    const a = await run(
      'datatable(ReqCount:long, LatencyBucket:long)[8, 10, 6, 20, 3, 30, 1, 40] | summarize percentilesw_array(LatencyBucket, ReqCount, 50, 75, 99.9)',
    );
    assert.deepEqual(a.results, [{ percentiles_LatencyBucket: [20, 20, 40] }]);
    const d = await run(
      'datatable(ReqCount:long, LatencyBucket:long)[8, 10, 6, 20, 3, 30, 1, 40] | summarize p = percentilesw_array(LatencyBucket, ReqCount, dynamic([50, 75, 99.9])), t = tdigest(LatencyBucket, ReqCount) | project p, q = percentiles_array_tdigest(t, dynamic([50, 99.9]))',
    );
    assert.deepEqual(d.results, [{ p: [20, 20, 40], q: [20, 40] }]);
  });

  it('percentilew keeps datetimes and timespans as such', async () => {
    const r = await run('Logs | summarize percentilew(timestamp, 2, 25), percentilew(duration, 1, 90)');
    const times = LOGS.map((l) => [l.timestamp.getTime(), 2] as [number, number]);
    const spans = LOGS.filter((l) => l.duration !== null).map((l) => [Number(l.duration), 1] as [number, number]);
    const row = r.results[0] as Record<string, unknown>;
    assert.equal(
      row.percentile_timestamp_25,
      new Date(expandedPercentile(times, 25) as number).toISOString().replace('Z', '0000Z'),
    );
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['DateTime', 'TimeSpan'],
    );
    // A timespan reads as Kusto's text; compare through the ticks it came from.
    const ticks = expandedPercentile(spans, 90) as number;
    const hours = Math.floor(ticks / 36_000_000_000);
    assert.ok(String(row.percentile_duration_90).startsWith(String(hours).padStart(2, '0')), String(row.percentile_duration_90));
  });

  it('hll → hll_merge → dcount_hll agrees with dcount, per level and over all levels (hll_if too)', async () => {
    const rows = await perLevel(
      'Logs | summarize d = dcount(host), h = dcount_hll(hll(host)), hi = dcount_hll(hll_if(latencyMs, ok == true)) by level',
    );
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      assert.equal(row.h, new Set(ls.map((l) => l.host ?? '')).size);
      assert.equal(row.h, row.d);
      assert.equal(row.hi, new Set(ls.filter((l) => l.ok === true && l.latencyMs !== null).map((l) => l.latencyMs)).size);
    }
    const all = await run(
      'Logs | summarize h = hll(latencyMs, 2) by level | summarize m = hll_merge(h) | project n = dcount_hll(m)',
    );
    assert.deepEqual(all.results, [{ n: new Set(LOGS.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs)).size }]);
    // The scalar merge of two sketches, row by row; a non-sketch is skipped, none at all gives null.
    const two = await run(
      'Logs | summarize a = hll_if(host, level == "Info"), b = hll_if(host, level == "Error") | project u = dcount_hll(hll_merge(a, b)), s = dcount_hll(hll_merge(a, dynamic({"x": 1}))), z = hll_merge(dynamic(1), dynamic(null))',
    );
    const hosts = (lv: string) => new Set(byLevel(lv).map((l) => l.host ?? ''));
    assert.deepEqual(two.results, [
      {
        u: new Set([...hosts('Info'), ...hosts('Error')]).size,
        s: hosts('Info').size,
        z: null,
      },
    ]);
  });

  it('tdigest → tdigest_merge → percentile_tdigest agrees with the exact nearest-rank percentile', async () => {
    const r = await run(
      'Logs | summarize t = tdigest(latencyMs) by level | summarize m = tdigest_merge(t) | project p = percentile_tdigest(m, 50, typeof(long)), d = percentile_tdigest(m, 95), a = percentiles_array_tdigest(m, 10, 90), wrong = percentile_tdigest(m, 50, typeof(datetime))',
    );
    const lat = LOGS.filter((l) => l.latencyMs !== null).map((l) => [l.latencyMs as number, 1] as [number, number]);
    assert.deepEqual(r.results, [
      {
        p: expandedPercentile(lat, 50),
        d: expandedPercentile(lat, 95),
        a: [expandedPercentile(lat, 10), expandedPercentile(lat, 90)],
        wrong: null,
      },
    ]);
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['Int64', 'Dynamic', 'Dynamic', 'DateTime'],
    );
    // Weighted digests, merged row by row; a datetime digest reads back as Kusto's datetime text.
    const w = await run(
      'Logs | summarize a = tdigest(ratio, iff(ok == true, 3, 1)), b = tdigest(ratio), t = tdigest(timestamp) | project m = percentile_tdigest(tdigest_merge(a, b), 50, typeof(real)), ts = percentile_tdigest(t, 0), n = tdigest_merge(a, t)',
    );
    const rat = LOGS.filter((l) => l.ratio !== null).flatMap((l) => [
      [l.ratio as number, l.ok === true ? 3 : 1] as [number, number],
      [l.ratio as number, 1] as [number, number],
    ]);
    const first = Math.min(...LOGS.map((l) => l.timestamp.getTime()));
    assert.deepEqual(w.results, [
      { m: expandedPercentile(rat, 50), ts: new Date(first).toISOString().replace('Z', '0000Z'), n: null },
    ]);
  });

  it('covariance, covariancep and their …if forms', async () => {
    const rows = await perLevel(
      'Logs | summarize covariance(latencyMs, ratio), covariancep(ratio, latencyMs), covarianceif(latencyMs, ratio, ok == true), covariancepif(latencyMs, latencyMs, host == "web-1") by level',
    );
    const close = (a: unknown, e: number | null) => (e === null ? assert.equal(a, null) : approx(a, e, 1e-9));
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      const ok = ls.filter((l) => l.ok === true);
      const web = ls.filter((l) => l.host === 'web-1');
      close(
        row.covariance_latencyMs,
        covariance(
          ls.map((l) => l.latencyMs),
          ls.map((l) => l.ratio),
          false,
        ),
      );
      close(
        row.covariancep_ratio,
        covariance(
          ls.map((l) => l.ratio),
          ls.map((l) => l.latencyMs),
          true,
        ),
      );
      close(
        row.covarianceif_latencyMs,
        covariance(
          ok.map((l) => l.latencyMs),
          ok.map((l) => l.ratio),
          false,
        ),
      );
      close(
        row.covariancepif_latencyMs,
        covariance(
          web.map((l) => l.latencyMs),
          web.map((l) => l.latencyMs),
          true,
        ),
      );
    }
  });

  it('covariance on Kusto’s documented examples', async () => {
    const t = 'datatable(x:real, y:real)[1.0, 14.0, 2.0, 10.0, 3.0, 17.0, 4.0, 20.0, 5.0, 50.0]';
    const r = await run(`${t} | summarize covariance(x, y), covariancep(x, y)`);
    const row = r.results[0] as Record<string, unknown>;
    approx(row.covariance_x, 20.5);
    approx(row.covariancep_x, 16.4);
    const c = await run(
      'range x from 1 to 100 step 1 | extend y = iff(x % 2 == 0, x * 2, x * 3) | summarize covarianceif(x, y, x % 3 == 0), covariancepif(x, y, x % 3 == 0)',
    );
    const crow = c.results[0] as Record<string, unknown>;
    approx(crow.covarianceif_x, 2142);
    approx(crow.covariancepif_x, 2077.09090909091, 1e-12);
  });

  it('empty input: no percentile, an empty sketch, no covariance', async () => {
    const r = await run(
      'Logs | where level == "none" | summarize p = percentilew(latencyMs, 1, 50), h = dcount_hll(hll(host)), t = percentile_tdigest(tdigest(latencyMs), 50), c = covariance(latencyMs, ratio)',
    );
    assert.deepEqual(r.results, [{ p: null, h: 0, t: null, c: null }]);
  });

  it('property: percentilew with weight 1 and percentile_tdigest agree with percentile; dcount_hll with dcount', async function () {
    this.timeout(180_000);
    const p = fc.oneof(
      fc.integer({ min: 0, max: 100 }),
      fc.double({ min: 0, max: 100, noNaN: true }).map((x) => Math.round(x * 10) / 10),
    );
    // Random values in a datatable (bound in the gateway's merge database) …
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 30 }), p, async (xs, pc) => {
        const r = await run(
          `datatable(x:long)[${xs.join(', ')}] | summarize a = percentile(x, ${pc}), b = percentilew(x, 1, ${pc}), t = tdigest(x), d = dcount(x), h = hll(x) | project a, b, c = percentile_tdigest(t, ${pc}, typeof(long)), d, e = dcount_hll(h)`,
        );
        const row = r.results[0] as Record<string, unknown>;
        assert.equal(row.b, row.a);
        assert.equal(row.c, row.a);
        assert.equal(row.e, row.d);
      }),
      { numRuns: 25 },
    );
    // … and random slices of the log rows, spread over one worker and three.
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 9 }), fc.integer({ min: 0, max: 8 }), p, async (m, k, pc) => {
        const r = await run(
          `Logs | where latencyMs % ${m} == ${k % m} | summarize a = percentile(latencyMs, ${pc}), b = percentilew(latencyMs, 1, ${pc}), t = tdigest(latencyMs), d = dcount(host), h = hll(host) by level | project level, a, b, c = percentile_tdigest(t, ${pc}, typeof(long)), d, e = dcount_hll(h)`,
        );
        for (const row of r.results) {
          assert.equal(row.b, row.a);
          assert.equal(row.c, row.a);
          assert.equal(row.e, row.d);
        }
      }),
      { numRuns: 15 },
    );
  });

  it('refuses bad arguments by name', async () => {
    await refused(
      'Logs | summarize percentilew(latencyMs, 1, 101)',
      /percentile of 'percentilew' must be a constant between 0 and 100/,
    );
    await refused('Logs | summarize percentilew(host, 1, 50)', /argument of 'percentilew' must be/);
    await refused('Logs | summarize hll(host, 9)', /accuracy of 'hll' must be a constant from 0 to 4/);
    await refused('Logs | summarize hll_merge(host)', /must be dynamic/);
    await refused(
      'Logs | summarize t = tdigest(latencyMs) | project percentile_tdigest(t, 50, typeof(string))',
      /returns long, real, datetime or timespan/,
    );
    await refused('Logs | summarize t = tdigest(latencyMs) | project percentile_tdigest(t, 50, "long")', /must be typeof/);
    await refused('print typeof(long)', /typeof\(…\) is only allowed as an argument/);
    await refused('Logs | summarize covariance(latencyMs, host)', /must be long or real/);
  });
});
