/**
 * join (every kind Kusto has), lookup and the gateway's bound on join sides (issue 16, item 1).
 * Expected rows come from a small join written here in TypeScript over LOGS; every query runs on
 * one worker and on three (fixture.run insists both agree).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { executePlan, planQuery } from '../../src/query/engine.js';
import { closeCluster, getCluster, LOGS, NOW, run, sortedJson } from './fixture.js';

type Row = Record<string, unknown>;

/** Kusto's join over plain rows: the reference the engine is checked against. */
function referenceJoin(left: Row[], right: Row[], kind: string, lk: string, rk: string): Row[] {
  const matches = (l: Row, r: Row) => l[lk] !== null && r[rk] !== null && l[lk] === r[rk];
  const rightNames = Object.keys(right[0] ?? {});
  const leftNames = Object.keys(left[0] ?? {});
  const renamed = (r: Row): Row => Object.fromEntries(rightNames.map((n) => [leftNames.includes(n) ? `${n}1` : n, r[n]]));
  const nullRight = (): Row => Object.fromEntries(rightNames.map((n) => [leftNames.includes(n) ? `${n}1` : n, null]));
  const nullLeft = (): Row => Object.fromEntries(leftNames.map((n) => [n, null]));
  const out: Row[] = [];
  let lefts = left;
  if (kind === 'innerunique') {
    const seen = new Set<unknown>();
    lefts = left.filter((l) => {
      if (seen.has(l[lk])) return false;
      seen.add(l[lk]);
      return true;
    });
  }
  switch (kind) {
    case 'leftsemi':
      return left.filter((l) => right.some((r) => matches(l, r)));
    case 'leftanti':
      return left.filter((l) => !right.some((r) => matches(l, r)));
    case 'rightsemi':
      return right.filter((r) => left.some((l) => matches(l, r)));
    case 'rightanti':
      return right.filter((r) => !left.some((l) => matches(l, r)));
  }
  for (const l of lefts) {
    const rs = right.filter((r) => matches(l, r));
    for (const r of rs) out.push({ ...l, ...renamed(r) });
    if (rs.length === 0 && (kind === 'leftouter' || kind === 'fullouter')) out.push({ ...l, ...nullRight() });
  }
  if (kind === 'rightouter' || kind === 'fullouter') {
    for (const r of right) {
      if (!left.some((l) => matches(l, r))) out.push({ ...nullLeft(), ...renamed(r) });
    }
  }
  return out;
}

/** Strings are never null in results: a missing string reads as "". */
const stringsNotNull = (rows: Row[], names: string[]): Row[] =>
  rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v === null && names.includes(k) ? '' : v])));

// Left: errors per host (one row per host, "" for a missing host); right: a small tier table
// with a host that has no logs and a duplicate key.
const hostCounts = (() => {
  const m = new Map<string, number>();
  for (const l of LOGS) if (l.level === 'Error') m.set(l.host ?? '', (m.get(l.host ?? '') ?? 0) + 1);
  return [...m].map(([host, n]) => ({ host, n }));
})();
const TIERS: Row[] = [
  { host: 'web-1', tier: 'front' },
  { host: 'web-2', tier: 'front' },
  { host: 'db-1', tier: 'data' },
  { host: 'db-1', tier: 'backup' },
  { host: 'cache-9', tier: 'cache' },
];
const LEFT = 'Logs | where level == "Error" | summarize n = count() by host';
const RIGHT = `datatable(host:string, tier:string) [${TIERS.map((t) => `"${t.host}", "${t.tier}"`).join(', ')}]`;

describe('join and lookup', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  for (const kind of [
    'innerunique',
    'inner',
    'leftouter',
    'rightouter',
    'fullouter',
    'leftanti',
    'rightanti',
    'leftsemi',
    'rightsemi',
  ]) {
    it(`join kind=${kind} gives Kusto's rows and columns`, async () => {
      const r = await run(`${LEFT} | join kind=${kind} (${RIGHT}) on host`);
      const expected = stringsNotNull(referenceJoin(hostCounts, TIERS, kind, 'host', 'host'), ['host', 'host1', 'tier']);
      assert.deepEqual(sortedJson(r.results), sortedJson(expected));
      const header = Object.keys(expected[0] ?? {});
      if (header.length > 0) assert.deepEqual(r.header, header);
    });
  }

  it('the default kind is innerunique: one left row per key, the same one on one worker and on three', async () => {
    const r = await run(
      'Logs | where isnotempty(host) | project host, latencyMs | join (datatable(host:string)["web-1", "db-1"]) on host',
    );
    const expected = ['web-1', 'db-1'].map((host) => {
      const values = LOGS.filter((l) => l.host === host).map((l) => l.latencyMs);
      const nonNull = values.filter((v): v is number => v !== null);
      // The kept row is the smallest by every column (nulls last): deterministic, as Kusto's pick is arbitrary.
      return { host, latencyMs: nonNull.length > 0 ? Math.min(...nonNull) : null, host1: host };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('joins two table reads at the gateway (rows from every worker)', async () => {
    const r = await run(
      'Logs | where level == "Error" | project id, latencyMs | join kind=inner (Logs | where level == "Error" | project id, host) on id',
    );
    const expected = LOGS.filter((l) => l.level === 'Error').map((l) => ({
      id: l.id,
      latencyMs: l.latencyMs,
      id1: l.id,
      host: l.host ?? '',
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('on $left.a == $right.b, and several keys', async () => {
    const r = await run(
      `${LEFT} | join kind=inner (${RIGHT} | project name = host, tier) on $left.host == $right.name | project host, n, tier`,
    );
    const expected = referenceJoin(hostCounts, TIERS, 'inner', 'host', 'host').map((x) => ({
      host: x.host,
      n: x.n,
      tier: x.tier,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const two = await run(
      'Logs | summarize n = count() by level, host | join kind=inner (Logs | summarize m = count() by level, host) on level, $left.host == $right.host | where n != m | count',
    );
    assert.deepEqual(two.results, [{ Count: 0 }]);
  });

  it('lookup leaves out the right key columns; kind=inner drops unmatched rows', async () => {
    const r = await run(`${LEFT} | lookup (${RIGHT}) on host`);
    const expected = referenceJoin(hostCounts, TIERS, 'leftouter', 'host', 'host').map((x) => ({
      host: x.host,
      n: x.n,
      tier: x.tier ?? '',
    }));
    assert.deepEqual(r.header, ['host', 'n', 'tier']);
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const inner = await run(`${LEFT} | lookup kind=inner (${RIGHT}) on host`);
    assert.deepEqual(sortedJson(inner.results), sortedJson(expected.filter((x) => x.tier !== '')));
  });

  it('hints are accepted; bad keys and kinds are refused by name', async () => {
    const plain = await run(`${LEFT} | join kind=inner (${RIGHT}) on host`);
    const hinted = await run(`${LEFT} | join kind=inner hint.strategy=broadcast hint.shufflekey=host (${RIGHT}) on host`);
    assert.deepEqual(sortedJson(hinted.results), sortedJson(plain.results));
    await assert.rejects(run(`${LEFT} | join (${RIGHT}) on nosuch`), /The join key 'nosuch' is not a column of the left side/);
    await assert.rejects(run(`${LEFT} | join (${RIGHT}) on $left.n == $right.host`), /have different types/);
    await assert.rejects(run(`${LEFT} | join kind=sideways (${RIGHT}) on host`), /join kind=sideways is not a kind Kusto has/);
  });

  it('a join side is bounded at the gateway, and refused past the bound', async () => {
    const c = await getCluster();
    const q = 'Logs | project id | join kind=inner (Logs | project id, level) on id | count';
    const plan = planQuery(q, c.three.catalog, { now: NOW });
    assert.ok(plan.fragments.length === 2 && plan.fragments.every((f) => (f.maxGatewayRows ?? 0) >= 1_000_000));
    const small = { ...plan, fragments: plan.fragments.map((f) => ({ ...f, maxGatewayRows: 10 })) };
    await assert.rejects(
      executePlan(small, c.three.runner, { mergeDatabase: c.merge }),
      /A side of a join sends more than 10 rows to the gateway/,
    );
    assert.deepEqual((await executePlan(plan, c.three.runner, { mergeDatabase: c.merge })).results, [{ Count: LOGS.length }]);
  });
});
