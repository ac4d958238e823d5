/**
 * The `…if` aggregates, population spread, make_list_with_nulls and percentiles_array (issue 16,
 * item 8): expected values computed from LOGS in TypeScript, per level, on one worker and on three
 * (each aggregate merges partial states, so the answers must agree).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { approx, closeCluster, getCluster, LOGS, type LogRow, run } from './fixture.js';

const LEVELS = [...new Set(LOGS.map((l) => l.level))].sort();
const byLevel = (level: string) => LOGS.filter((l) => l.level === level);
const nums = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const m2 = (xs: number[]) => {
  const m = mean(xs);
  return xs.reduce((a, x) => a + (x - m) ** 2, 0);
};
const sampleVariance = (xs: number[]) => (xs.length > 1 ? m2(xs) / (xs.length - 1) : xs.length === 1 ? 0 : null);
const populationVariance = (xs: number[]) => (xs.length > 0 ? m2(xs) / xs.length : null);
const nearestRank = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.max(1, Math.ceil((p / 100) * s.length)) - 1];
};

function closeOrNull(actual: unknown, expected: number | null | undefined): void {
  if (expected === null || expected === undefined) assert.equal(actual, null);
  else approx(actual, expected, 1e-9 * Math.max(1, Math.abs(expected)));
}

async function perLevel(query: string): Promise<Map<string, Record<string, unknown>>> {
  const r = await run(query, { unorderedLists: true });
  return new Map(r.results.map((row) => [row.level as string, row]));
}

describe('…if aggregates, population spread, lists with nulls, percentiles_array', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('avgif, minif, maxif, dcountif count only the rows where the condition holds', async () => {
    const rows = await perLevel(
      'Logs | summarize avgif(latencyMs, ok == true), minif(latencyMs, host == "web-1"), maxif(ratio, ok == true), dcountif(host, latencyMs > 500) by level',
    );
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      const okLatency = nums(ls.filter((l) => l.ok === true).map((l) => l.latencyMs));
      closeOrNull(row.avgif_latencyMs, okLatency.length > 0 ? mean(okLatency) : null);
      const web = nums(ls.filter((l) => l.host === 'web-1').map((l) => l.latencyMs));
      assert.equal(row.minif_latencyMs, web.length > 0 ? Math.min(...web) : null);
      const okRatio = nums(ls.filter((l) => l.ok === true).map((l) => l.ratio));
      assert.equal(row.maxif_ratio, okRatio.length > 0 ? Math.max(...okRatio) : null);
      const hosts = new Set(ls.filter((l) => l.latencyMs !== null && l.latencyMs > 500).map((l) => l.host ?? ''));
      assert.equal(row.dcountif_host, hosts.size);
    }
  });

  it('make_list_if, make_set_if and make_list_with_nulls', async () => {
    const rows = await perLevel(
      'Logs | summarize a = make_list_if(latencyMs, ok == false), b = make_set_if(host, latencyMs > 1500), c = make_list_with_nulls(latencyMs) by level',
    );
    const sorted = (xs: unknown[]) => xs.map((x) => JSON.stringify(x)).sort();
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      assert.deepEqual(sorted(row.a as unknown[]), sorted(nums(ls.filter((l) => l.ok === false).map((l) => l.latencyMs))));
      const set = [...new Set(ls.filter((l) => l.latencyMs !== null && l.latencyMs > 1500).map((l) => l.host ?? ''))];
      assert.deepEqual(sorted(row.b as unknown[]), sorted(set));
      assert.deepEqual(sorted(row.c as unknown[]), sorted(ls.map((l) => l.latencyMs)));
    }
  });

  it('stdevif, varianceif (sample) and stdevp, variancep (population)', async () => {
    const rows = await perLevel(
      'Logs | summarize stdevif(ratio, ok == true), varianceif(latencyMs, ok == true), stdevp(latencyMs), variancep(ratio) by level',
    );
    for (const level of LEVELS) {
      const ls = byLevel(level);
      const row = rows.get(level) as Record<string, unknown>;
      const okRatio = nums(ls.filter((l) => l.ok === true).map((l) => l.ratio));
      const okLatency = nums(ls.filter((l) => l.ok === true).map((l) => l.latencyMs));
      const sv = sampleVariance(okRatio);
      closeOrNull(row.stdevif_ratio, sv === null ? null : Math.sqrt(sv));
      closeOrNull(row.varianceif_latencyMs, sampleVariance(okLatency));
      const pv = populationVariance(nums(ls.map((l) => l.latencyMs)));
      closeOrNull(row.stdevp_latencyMs, pv === null ? null : Math.sqrt(pv));
      closeOrNull(row.variancep_ratio, populationVariance(nums(ls.map((l) => l.ratio))));
    }
  });

  it('percentiles_array gives the nearest-rank values as one array', async () => {
    const rows = await perLevel('Logs | summarize percentiles_array(latencyMs, 50, 90, 100) by level');
    for (const level of LEVELS) {
      const xs = nums(byLevel(level).map((l) => l.latencyMs));
      assert.deepEqual(
        (rows.get(level) as Record<string, unknown>).percentiles_latencyMs,
        [50, 90, 100].map((p) => nearestRank(xs, p)),
      );
    }
  });

  it('make_bag and make_bag_if merge the group’s bags; a repeated key keeps its smallest value (by JSON text)', async () => {
    const r = await run(
      'Logs | summarize all = make_bag(props.user), ok = make_bag_if(props, ok == true), none = make_bag(props.tags) by level',
    );
    const merge = (bags: Record<string, unknown>[]) => {
      const byKey = new Map<string, string[]>();
      for (const b of bags) for (const [k, v] of Object.entries(b)) byKey.set(k, [...(byKey.get(k) ?? []), JSON.stringify(v)]);
      return Object.fromEntries([...byKey].map(([k, vs]) => [k, JSON.parse(vs.sort()[0] as string)]));
    };
    for (const level of LEVELS) {
      const row = r.results.find((x) => x.level === level) as Record<string, unknown>;
      const ls = byLevel(level).filter((l) => l.props !== null);
      assert.deepEqual(row.all, merge(ls.map((l) => (l.props as { user: Record<string, unknown> }).user)));
      assert.deepEqual(row.ok, merge(ls.filter((l) => l.ok === true).map((l) => l.props as Record<string, unknown>)));
      assert.deepEqual(row.none, {}); // arrays are not bags
    }
  });

  it('binary_all_and, binary_all_or and binary_all_xor combine the group’s longs bit by bit', async () => {
    const rows = await perLevel(
      'Logs | where isnotnull(latencyMs) | extend v = latencyMs + 1000 | summarize binary_all_and(v), binary_all_or(v), binary_all_xor(v) by level',
    );
    for (const level of LEVELS) {
      const vs = nums(byLevel(level).map((l) => l.latencyMs)).map((v) => v + 1000);
      const row = rows.get(level) as Record<string, unknown>;
      assert.equal(
        row.v,
        vs.reduce((a, b) => a & b),
      );
      assert.equal(
        row.v1,
        vs.reduce((a, b) => a | b),
      );
      assert.equal(
        row.v2,
        vs.reduce((a, b) => a ^ b),
      );
    }
  });

  it('take_anyif takes a value from a row where the condition holds', async () => {
    const r = await run('Logs | summarize take_anyif(host, host startswith "web") by level', { columnsOnly: true });
    assert.deepEqual(r.header, ['level', 'host']);
    for (const row of r.results) {
      const allowed = new Set(
        byLevel(row.level as string)
          .filter((l: LogRow) => l.host?.toLowerCase().startsWith('web')) // startswith ignores case
          .map((l) => l.host),
      );
      assert.ok(allowed.has(row.host as string), `${row.level}: ${row.host}`);
    }
  });

  it('on empty input: dcountif 0, make_list_if [], the others null; a non-bool condition is refused', async () => {
    const r = await run(
      'Logs | where false | summarize avgif(latencyMs, true), dcountif(host, true), make_list_if(host, true), stdevp(latencyMs)',
    );
    assert.deepEqual(r.results, [{ avgif_latencyMs: null, dcountif_host: 0, list_host: [], stdevp_latencyMs: null }]);
    await assert.rejects(
      run('Logs | summarize avgif(latencyMs, host)'),
      /The condition of 'avgif' must be a bool; this is a string/,
    );
    await assert.rejects(run('Logs | summarize avgif(latencyMs)'), /'avgif' takes 2 arguments/);
  });
});
