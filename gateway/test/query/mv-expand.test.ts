/**
 * mv-expand (issue 16, item 2). Expected rows are computed from LOGS in TypeScript or written by
 * hand; every query runs on one worker and on three (the expansion runs on the workers).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

const withProps = LOGS.filter((l) => l.props !== null);
type Props = { user: { id: number; name: string }; tags: string[]; code: number };

describe('mv-expand', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('expands an array: one row per element; a null value gives one row', async () => {
    const r = await run('Logs | mv-expand tag = props.tags to typeof(string) | summarize n = count() by tag');
    const counts = new Map<string, number>();
    for (const l of LOGS) {
      const tags = l.props ? (l.props as Props).tags : [''];
      for (const t of tags) counts.set(t, (counts.get(t) ?? 0) + 1);
    }
    assert.deepEqual(sortedJson(r.results), sortedJson([...counts].map(([tag, n]) => ({ tag, n }))));
  });

  it('with_itemindex gives each element’s 0-based position', async () => {
    const r = await run('Logs | where isnotnull(props) | mv-expand with_itemindex=i t = props.tags | project id, i, t');
    const expected = withProps.flatMap((l) => (l.props as Props).tags.map((t, i) => ({ id: l.id, i, t })));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('expands a property bag into one-entry bags, or [key, value] arrays with bagexpansion=array', async () => {
    const bag = await run('Logs | where isnotnull(props) | mv-expand u = props.user | project id, u');
    const expectedBag = withProps.flatMap((l) => {
      const u = (l.props as Props).user;
      return [
        { id: l.id, u: { id: u.id } },
        { id: l.id, u: { name: u.name } },
      ];
    });
    assert.deepEqual(sortedJson(bag.results), sortedJson(expectedBag));
    const arr = await run('Logs | where isnotnull(props) | mv-expand bagexpansion=array u = props.user | project id, u');
    const expectedArr = withProps.flatMap((l) => {
      const u = (l.props as Props).user;
      return [
        { id: l.id, u: ['id', u.id] },
        { id: l.id, u: ['name', u.name] },
      ];
    });
    assert.deepEqual(sortedJson(arr.results), sortedJson(expectedArr));
  });

  it('expands several columns in parallel, shorter ones giving null; empty arrays give no row', async () => {
    const r = await run(`datatable(k:long, a:dynamic, b:dynamic) [
      1, dynamic([1, 2, 3]), dynamic(["x"]),
      2, dynamic([]), dynamic(null),
      3, dynamic([]), dynamic([]),
      4, dynamic(7), dynamic({"p": true})
    ] | mv-expand a to typeof(long), b | sort by k asc`);
    assert.deepEqual(r.results, [
      { k: 1, a: 1, b: 'x' },
      { k: 1, a: 2, b: null },
      { k: 1, a: 3, b: null },
      { k: 2, a: null, b: null },
      { k: 4, a: 7, b: { p: true } },
    ]);
  });

  it('limit caps the rows made from each input row; order is kept', async () => {
    const r = await run('range x from 1 to 3 step 1 | extend d = dynamic(["a", "b", "c"]) | mv-expand d limit 2 | project x, d', {
      ordered: true,
    });
    assert.deepEqual(r.results, [
      { x: 1, d: 'a' },
      { x: 1, d: 'b' },
      { x: 2, d: 'a' },
      { x: 2, d: 'b' },
      { x: 3, d: 'a' },
      { x: 3, d: 'b' },
    ]);
  });

  it('to typeof() casts only: elements of another type become null', async () => {
    const r = await run('print d = dynamic([1, "2", 3.5, true]) | mv-expand n = d to typeof(long) | project n');
    assert.deepEqual(
      r.results.map((x) => x.n),
      [1, null, null, null],
    );
  });

  it('refuses a value that is not dynamic, and casts it cannot do, by name', async () => {
    await assert.rejects(run('Logs | mv-expand latencyMs'), /mv-expand needs a dynamic value; this is a long/);
    await assert.rejects(run('Logs | mv-expand props.tags to typeof(guid)'), /to typeof\(guid\) is not supported/);
  });
});
