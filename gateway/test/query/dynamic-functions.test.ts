/**
 * Functions over dynamic values (issue 16, item 7). Expected values are written by hand or
 * computed from LOGS in TypeScript; every query runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

type Props = { user: { id: number; name: string }; tags: string[]; code: number };
const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

describe('dynamic functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('pack_array and bag_pack/pack build values; strings stay strings, datetimes read as Kusto writes them', async () => {
    const r = await one(
      'print a = pack_array(1, "2", 2.5, true, datetime(2024-01-02 03:04:05), long(null)), b = bag_pack("k", 1, "s", "{}"), c = pack("n", dynamic([1]))',
    );
    assert.deepEqual(r, {
      a: [1, '2', 2.5, true, '2024-01-02T03:04:05.0000000Z', null],
      b: { k: 1, s: '{}' },
      c: { n: [1] },
    });
  });

  it('bag_keys and bag_has_key read a bag’s top-level keys in order; other values give null / false', async () => {
    const r = await one(
      'print k = bag_keys(dynamic({"z": 1, "a": {"b": 2}})), none = bag_keys(dynamic([1])), has = bag_has_key(dynamic({"z": 1}), "z"), nested = bag_has_key(dynamic({"a": {"b": 2}}), "b"), arr = bag_has_key(dynamic(["z"]), "z")',
    );
    assert.deepEqual(r, { k: ['z', 'a'], none: null, has: true, nested: false, arr: false });
  });

  it('array_length, array_concat, array_reverse, array_slice (inclusive, negative from the end), array_sum', async () => {
    const r = await one(`print
      l = array_length(dynamic([1, [2, 3], {}])), lb = array_length(dynamic({"a": 1})),
      c = array_concat(dynamic([1, 2]), dynamic(["a"]), dynamic([[3]])), cn = array_concat(dynamic([1]), dynamic({"a": 1})),
      r = array_reverse(dynamic([1, "b", null])),
      s1 = array_slice(dynamic([10, 11, 12, 13, 14]), 1, 3), s2 = array_slice(dynamic([10, 11, 12, 13, 14]), -3, -2),
      s3 = array_slice(dynamic([10, 11, 12]), 2, 10), s4 = array_slice(dynamic([10, 11, 12]), 2, 1),
      sum = array_sum(dynamic([1, 2.5, -3])), bad = array_sum(dynamic([1, "2"])), empty = array_sum(dynamic([]))`);
    assert.deepEqual(r, {
      l: 3,
      lb: null,
      c: [1, 2, 'a', [3]],
      cn: null,
      r: [null, 'b', 1],
      s1: [11, 12, 13],
      s2: [12, 13],
      s3: [12],
      s4: [],
      sum: 0.5,
      bad: null,
      empty: 0,
    });
  });

  it('set functions keep distinct elements in order of first appearance; elements compare by their JSON', async () => {
    const r = await one(`print
      u = set_union(dynamic([3, 1, 3]), dynamic([2, 1]), dynamic(["1"])),
      i = set_intersect(dynamic([3, 1, 2, 3]), dynamic([2, 3, 9]), dynamic([3, 2])),
      d = set_difference(dynamic([3, 1, 2, 3, "x"]), dynamic([2]), dynamic(["x"])),
      h1 = set_has_element(dynamic([1, "2"]), 2), h2 = set_has_element(dynamic([1, "2"]), "2"), h3 = set_has_element(dynamic({"a": 1}), 1)`);
    assert.deepEqual(r, { u: [3, 1, 2, '1'], i: [3, 2], d: [3, 1], h1: false, h2: true, h3: null });
  });

  it('array_index_of, bag_remove_keys and zip', async () => {
    const r = await one(`print
      i = array_index_of(dynamic(["a", "b", "c", "b"]), "b"), absent = array_index_of(dynamic([1, 2]), "1"), nonArray = array_index_of(dynamic({"a": 1}), 1),
      removed = bag_remove_keys(dynamic({"a": 1, "b": {"c": 2}, "e": [3]}), dynamic(["a", "e", "nosuch"])),
      zipped = zip(dynamic([1, 2, 3]), dynamic(["x", "y"]), dynamic([true])), notArrays = zip(dynamic([1]), dynamic({"a": 1}))`);
    assert.deepEqual(r, {
      i: 1,
      absent: -1,
      nonArray: null,
      removed: { b: { c: 2 } },
      zipped: [
        [1, 'x', true],
        [2, 'y', null],
        [3, null, null],
      ],
      notArrays: null,
    });
    await assert.rejects(
      run('print bag_remove_keys(dynamic({"a": {"b": 1}}), dynamic(["$.a.b"]))'),
      /JSONPath keys is not supported/,
    );
    // start, length and occurrence, as Kusto documents them.
    const w = (
      await run(`let arr = dynamic(["this", "is", "an", "example", "an", "example"]); print
      i1 = array_index_of(arr, "an"), i2 = array_index_of(arr, "example", 1, 3), i3 = array_index_of(arr, "example", 1, 2),
      i4 = array_index_of(arr, "is", 2, 4), i5 = array_index_of(arr, "example", 2, -1), i6 = array_index_of(arr, "an", 1, -1, 2),
      i7 = array_index_of(arr, "an", 1, -1, 3), i8 = array_index_of(arr, "an", -3), i9 = array_index_of(arr, "is", -4),
      badLength = array_index_of(arr, "an", 0, -2), badOccurrence = array_index_of(arr, "an", 0, -1, -1)`)
    ).results[0];
    assert.deepEqual(w, {
      i1: 2,
      i2: 3,
      i3: -1,
      i4: -1,
      i5: 3,
      i6: 4,
      i7: -1,
      i8: 4,
      i9: -1,
      badLength: null,
      badOccurrence: null,
    });
    await assert.rejects(
      run('print array_index_of(dynamic([1, 2]), 2, "1")'),
      /start, length and occurrence of 'array_index_of' must be long/,
    );
  });

  it('over stored rows: tag counts, key tests and array lengths match the data', async () => {
    const r = await run(
      'Logs | where isnotnull(props) | project id, n = array_length(props.tags), hasUser = bag_has_key(props, "user"), head = array_slice(props.tags, 0, 0), tagged = set_has_element(props.tags, "t1")',
    );
    const expected = LOGS.filter((l) => l.props !== null).map((l) => {
      const p = l.props as Props;
      return { id: l.id, n: p.tags.length, hasUser: true, head: p.tags.slice(0, 1), tagged: p.tags.includes('t1') };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });
});
