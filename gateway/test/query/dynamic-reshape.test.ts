/**
 * Reordering, cutting and combining dynamic arrays and bags, gettype and pack_all (issue 16,
 * item 7). Expected values are Kusto's documented answers written by hand, or computed from LOGS
 * in TypeScript; every query runs on one worker and on three. A property compares the JS
 * functions with the SQL path of array_concat/array_slice.
 */
import assert from 'node:assert/strict';
import { isStrataError } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { bindQuery } from '../../src/query/engine.js';
import { warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';
import { kustoColumns } from './kusto-analyzer.js';

const one = async (q: string) => (await run(q)).results[0] as Record<string, unknown>;

async function refused(query: string, message: RegExp): Promise<void> {
  await assert.rejects(run(query), (err: unknown) => isStrataError(err) && message.test((err as Error).message));
}

describe('dynamic reshaping functions and gettype', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('array_sort_asc/desc: numbers, then strings, then the rest; nulls last unless asked otherwise', async () => {
    const r = await one(`print
      a = array_sort_asc(dynamic([3, "b", null, 1, "a", true, 2.5])),
      d = array_sort_desc(dynamic([3, "b", null, 1, "a"])),
      f = array_sort_asc(dynamic([3, null, 1]), false),
      names = strcat_array(array_sort_asc(split("John,Paul,George,Ringo", ",")), ","),
      none = array_sort_asc(dynamic({"a": 1})), empty = array_sort_desc(dynamic([]))`);
    assert.deepEqual(r, {
      a: [1, 2.5, 3, 'a', 'b', true, null],
      d: [3, 1, 'b', 'a', null],
      f: [null, 1, 3],
      names: 'George,John,Paul,Ringo',
      none: null,
      empty: [],
    });
    // Over the data: each host's latencies sorted, against JS's sort.
    const rows = (await run('Logs | summarize l = make_list(latencyMs) by host | project host, s = array_sort_desc(l)')).results;
    for (const row of rows) {
      const expected = LOGS.filter((l) => (l.host ?? '') === row.host && l.latencyMs !== null)
        .map((l) => l.latencyMs as number)
        .sort((a, b) => b - a);
      assert.deepEqual(row.s, expected);
    }
  });

  it('array_sort_asc/desc with several arrays: one column per array, the others in the first one’s new order', async () => {
    // Kusto's documented examples (array_sort_asc and array_sort_desc pages).
    const asc = await run(
      'let array1 = dynamic([1,3,4,5,2]); let array2 = dynamic(["a","b","c","d","e"]); print array_sort_asc(array1,array2)',
    );
    assert.deepEqual(asc.header, ['array1_sorted', 'array2_sorted']);
    assert.deepEqual(asc.results, [{ array1_sorted: [1, 2, 3, 4, 5], array2_sorted: ['a', 'e', 'b', 'c', 'd'] }]);
    const desc = await one(
      'let array1 = dynamic([1,3,4,5,2]); let array2 = dynamic(["a","b","c","d","e"]); print array_sort_desc(array1,array2)',
    );
    assert.deepEqual(desc, { array1_sorted: [5, 4, 3, 2, 1], array2_sorted: ['d', 'c', 'b', 'e', 'a'] });
    // Names given, nulls_last, an array of another length (null), a non-array first argument (all null).
    const r = await one(`print k = dynamic([2, null, 1]), v = dynamic(["two", "none", "one"])
      | extend (ks, vs, short) = array_sort_asc(k, v, dynamic([1, 2]), false),
        (dk, dv) = array_sort_desc(k, v), x = array_sort_asc(k, v)
      | extend (n1, n2) = array_sort_asc(dynamic({"a": 1}), v)`);
    assert.deepEqual(r, {
      k: [2, null, 1],
      v: ['two', 'none', 'one'],
      ks: [null, 1, 2],
      vs: ['none', 'one', 'two'],
      short: null,
      dk: [2, 1, null],
      dv: ['two', 'one', 'none'],
      x: [1, 2, null],
      v_sorted: ['one', 'two', 'none'],
      n1: null,
      n2: null,
    });
    // Over the data: per host, the ids (unique) sorted and the levels in the same order, against
    // a JS sort of (id, level) pairs; latencies leave out nulls, so levels of another length are null.
    const rows = (
      await run(`Logs | summarize ids = make_list(tostring(id)), levels = make_list(level), lat = make_list(latencyMs) by host
        | project host, (sid, slev) = array_sort_desc(ids, levels), (slat, other) = array_sort_asc(lat, levels)`)
    ).results;
    assert.ok(rows.length >= 4);
    for (const row of rows) {
      const mine = LOGS.filter((l) => (l.host ?? '') === row.host);
      const pairs = mine.map((l) => [l.id, l.level] as const).sort((a, b) => (a[0] < b[0] ? 1 : -1));
      assert.deepEqual(
        row.sid,
        pairs.map((p) => p[0]),
      );
      assert.deepEqual(
        row.slev,
        pairs.map((p) => p[1]),
      );
      const lat = mine.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs as number);
      assert.deepEqual(
        row.slat,
        [...lat].sort((a, b) => a - b),
      );
      if (lat.length !== mine.length) {
        assert.equal(row.other, null);
        continue;
      }
      // Equal latencies may come in either order: the (latency, level) pairs are what must hold.
      const key = (p: readonly [number, string]) => `${p[0]}|${p[1]}`;
      const got = (row.slat as number[]).map((x, i) => key([x, (row.other as string[])[i] as string])).sort();
      assert.deepEqual(got, mine.map((l) => key([l.latencyMs as number, l.level])).sort());
    }
    assert.ok(rows.some((row) => row.other === null));
  });

  it('array_sort_asc(…)[k] picks one array; Kusto’s summarize example orders commands by time', async () => {
    const commands = async (fn: string) =>
      (
        await run(`datatable(command:string, command_time:datetime, user_id:string)
          [
            'chmod', datetime(2019-07-15), "user1",
            'ls', datetime(2019-07-02), "user1",
            'dir', datetime(2019-07-22), "user1",
            'mkdir', datetime(2019-07-14), "user1",
            'rm', datetime(2019-07-27), "user1",
            'pwd', datetime(2019-07-25), "user1",
            'rm', datetime(2019-07-23), "user2",
            'pwd', datetime(2019-07-25), "user2",
          ]
          | summarize timestamps = make_list(command_time), commands = make_list(command) by user_id
          | project user_id, commands_in_chronological_order = ${fn}(timestamps, commands)[1]`)
      ).results
        .map((row) => [row.user_id, row.commands_in_chronological_order])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    assert.deepEqual(await commands('array_sort_asc'), [
      ['user1', ['ls', 'mkdir', 'chmod', 'dir', 'pwd', 'rm']],
      ['user2', ['rm', 'pwd']],
    ]);
    assert.deepEqual(await commands('array_sort_desc'), [
      ['user1', ['rm', 'pwd', 'dir', 'chmod', 'mkdir', 'ls']],
      ['user2', ['pwd', 'rm']],
    ]);
    const r = await one(`print k = dynamic([3, 1, 2]), v = dynamic(["c", "a", "b"])
      | project array_sort_desc(k, v)[1], lo = array_sort_asc(k, v, false)[0], n = array_length(array_sort_asc(k, v)[1]), mi = series_stats(k)[1]`);
    assert.deepEqual(r, { v_sorted: ['c', 'b', 'a'], lo: [1, 2, 3], n: 3, mi: 1 });
    await refused('print k = dynamic([1]) | project array_sort_asc(k, k)[2]', /gives 2 columns; there is no column 2/);
  });

  it('names the several-array columns as Microsoft’s analyzer does', async () => {
    await warmKustoParser();
    const catalog: SchemaCatalog = {
      tables: [
        {
          name: 'T',
          columns: [
            { name: 'd', type: 'dynamic' },
            { name: 'e', type: 'dynamic' },
          ],
        },
      ],
    };
    for (const q of [
      'T | project array_sort_asc(d, e)',
      'T | project array_sort_desc(d, e, false)',
      'T | extend x = array_sort_asc(d, e)',
      'T | extend (x, y) = array_sort_asc(d, e, d)',
      'T | project array_sort_asc(d, pack_array(1, 2))',
      'T | project array_sort_asc(pack_array(1, 2), d)',
      'T | project array_sort_asc(d.x, e)',
      'T | project array_sort_asc(d), e',
      'T | project d, array_sort_desc(d, e)',
      'T | project array_sort_asc(d, e)[1]',
      'T | project array_sort_asc(d, pack_array(1))[1]',
      'T | project z = array_sort_asc(d, e)[0]',
      'print array_sort_asc(dynamic([1]), dynamic([2]))',
      'T | project series_stats(d)[1], series_fit_line(e)[5]',
    ]) {
      const engine = bindQuery(q, catalog).bound.columns.map((c) => `${c.name}:${c.type}`);
      assert.deepEqual(engine, kustoColumns(q, 'd:dynamic, e:dynamic'), q);
    }
  });

  it('array_split, array_rotate_*, array_shift_* as Kusto documents them', async () => {
    const r = await one(`print arr = dynamic([1, 2, 3, 4, 5])
      | extend s1 = array_split(arr, 2), s2 = array_split(arr, dynamic([1, 3])), s3 = array_split(arr, dynamic([-1, 10])),
        rl = array_rotate_left(arr, 2), rl2 = array_rotate_left(arr, -2), rr = array_rotate_right(arr, 2), rr7 = array_rotate_right(arr, 7),
        sl = array_shift_left(arr, 2), sl1 = array_shift_left(arr, 2, -1), sl2 = array_shift_left(arr, -2, -1),
        sr = array_shift_right(arr, 1, "x"), big = array_shift_right(arr, 9), bad = array_rotate_left(dynamic({"a": 1}), 1)`);
    assert.deepEqual(r, {
      arr: [1, 2, 3, 4, 5],
      s1: [
        [1, 2],
        [3, 4, 5],
      ],
      s2: [[1], [2, 3], [4, 5]],
      s3: [[1, 2, 3, 4], [5], []],
      rl: [3, 4, 5, 1, 2],
      rl2: [4, 5, 1, 2, 3],
      rr: [4, 5, 1, 2, 3],
      rr7: [4, 5, 1, 2, 3],
      sl: [3, 4, 5, null, null],
      sl1: [3, 4, 5, -1, -1],
      sl2: [-1, -1, 1, 2, 3],
      sr: ['x', 1, 2, 3, 4],
      big: [null, null, null, null, null],
      bad: null,
    });
  });

  it('array_iff / array_iif, element by element', async () => {
    const r = await one(`print
      a = array_iff(dynamic([true, false, true]), dynamic([1, 2, 3]), dynamic([4, 5, 6])),
      n = array_iif(dynamic([1, 0, 50]), "yes", "no"),
      o = array_iff(dynamic(["some string", null]), 1, 0),
      m = array_iff(dynamic([true, true, true]), dynamic([1, 2]), dynamic([3, 4]))`);
    assert.deepEqual(r, { a: [1, 5, 3], n: ['yes', 'no', 'yes'], o: [null, null], m: [1, 2, null] });
  });

  it('bag_merge keeps the first bag’s value of a repeated key; treepath lists the paths below the root', async () => {
    const r = await one(`print
      m = bag_merge(dynamic({"A1": 12, "B1": 2, "C1": 3}), dynamic({"A2": 81, "B2": 82, "A1": 1})),
      skip = bag_merge(dynamic([1]), dynamic({"k": "v"}), dynamic(null)), none = bag_merge(dynamic(1), dynamic([2])),
      t1 = treepath(parse_json('{"a":"b", "c":123}')),
      t2 = treepath(parse_json('{"prop1":[1,2,3,4], "prop2":"value2"}')),
      t3 = treepath(parse_json('{"listProperty":[100,200,300,"abcde",{"x":"y"}]}')),
      t4 = treepath(dynamic(5))`);
    assert.deepEqual(r, {
      m: { A1: 12, B1: 2, C1: 3, A2: 81, B2: 82 },
      skip: { k: 'v' },
      none: null,
      t1: ["['a']", "['c']"],
      t2: ["['prop1']", "['prop1'][0]", "['prop2']"],
      t3: ["['listProperty']", "['listProperty'][0]", "['listProperty'][0]['x']"],
      t4: null,
    });
    // Over the data: every props bag has the same shape, so one path list per non-null row.
    const paths = await run('Logs | where isnotnull(props) | summarize p = make_set(tostring(treepath(props)))');
    assert.deepEqual(paths.results, [
      { p: [JSON.stringify(["['user']", "['user']['id']", "['user']['name']", "['tags']", "['tags'][0]", "['code']"])] },
    ]);
  });

  it('gettype names types as Kusto does, for dynamic values by what they hold', async () => {
    const r = await one(`print
      a = gettype("a"), b = gettype(111), c = gettype(1 == 1), d = gettype(now()), e = gettype(1s),
      f = gettype(parse_json('1')), g = gettype(parse_json(' "abc" ')), h = gettype(parse_json(' {"abc":1} ')),
      i = gettype(parse_json(' [1, 2, 3] ')), j = gettype(123.45), k = gettype(guid(12e8b78d-55b4-46ae-b068-26d7a0080254)),
      l = gettype(parse_json('')), m = gettype(parse_json('12345678901')), n = gettype(parse_json('1.5')), o = gettype(parse_json('true'))`);
    assert.deepEqual(r, {
      a: 'string',
      b: 'long',
      c: 'bool',
      d: 'datetime',
      e: 'timespan',
      f: 'int',
      g: 'string',
      h: 'dictionary',
      i: 'array',
      j: 'real',
      k: 'guid',
      l: 'null',
      m: 'long',
      n: 'real',
      o: 'bool',
    });
    const named = await run('Logs | take 1 | project gettype(props), treepath(props)');
    assert.deepEqual(
      named.columns.map((c) => c.name),
      ['type_props', 'tree_props'],
    );
  });

  it('pack_all packs every column by name; with true it leaves out nulls and empty strings', async () => {
    const r = await run('Logs | project host, latencyMs, level | extend all = pack_all(), some = pack_all(true)');
    for (const row of r.results) {
      assert.deepEqual(row.all, { host: row.host, latencyMs: row.latencyMs, level: row.level });
      const some: Record<string, unknown> = {};
      for (const k of ['host', 'latencyMs', 'level']) if (row[k] !== null && row[k] !== '') some[k] = row[k];
      assert.deepEqual(row.some, some);
    }
  });

  it('dynamic comparison: by value, bags whatever their key order, null against null', async () => {
    const r = await one(`print
      a = parse_json('{"a":1,"b":[1,{"c":2}]}') == parse_json('{"b":[1,{"c":2}],"a":1}'), b = dynamic(1) == dynamic(1.0),
      c = dynamic([1,2]) != dynamic([2,1]), d = dynamic([1,2]) == dynamic([1,2]), e = parse_json('null') == parse_json('null'),
      f = parse_json('"x"') == "x", g = dynamic({"a":1}) != dynamic({"a":2}), h = dynamic([1]) == parse_json('null')`);
    assert.deepEqual(r, { a: true, b: true, c: true, d: true, e: null, f: true, g: true, h: null });
    // Over the data: rows whose props.user equals a given bag, against JS.
    const n = await run('Logs | where props.user == dynamic({"name": "u2", "id": 12}) | count');
    const expected = LOGS.filter((l) => {
      const u = (l.props as { user?: { id: number; name: string } } | null)?.user;
      return u?.id === 12 && u.name === 'u2';
    }).length;
    assert.deepEqual(n.results, [{ Count: expected }]);
  });

  it('refuses what it does not support by name', async () => {
    await refused(
      'print tostring(array_sort_asc(dynamic([1]), dynamic([2])))',
      /several arrays gives one column per array: use it as a whole item/,
    );
    await refused('print d = dynamic([1]) | extend (a, b, c) = array_sort_desc(d, d)', /gives 2 columns; 3 names were given/);
    await refused('print array_rotate_left(dynamic([1]), 1.5)', /count of 'array_rotate_left' must be a long/);
    await refused('print array_split(dynamic([1]), "1")', /indexes of 'array_split' must be a long or a dynamic array/);
    await refused('print bag_merge(dynamic({}))', /takes 2 to 64 arguments/);
    await refused('Logs | project pack_all(ok)', /must be a constant bool/);
  });

  it('property: rotating and shifting agree with array_concat/array_slice (SQL) on random arrays', async function () {
    this.timeout(120_000);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: -50, max: 50 }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: -30, max: 30 }),
        async (xs, k) => {
          const n = xs.length;
          const left = ((k % n) + n) % n;
          const arr = `dynamic(${JSON.stringify(xs)})`;
          // SQL path: the two slices concatenated; an empty slice when the rotation is 0.
          const viaSlices =
            left === 0 ? arr : `array_concat(array_slice(${arr}, ${left}, ${n - 1}), array_slice(${arr}, 0, ${left - 1}))`;
          const r = await one(
            `print a = array_rotate_left(${arr}, ${k}), b = ${viaSlices}, c = array_rotate_right(array_rotate_left(${arr}, ${k}), ${k}), s = array_shift_left(${arr}, ${k}, 0)`,
          );
          assert.deepEqual(r.a, r.b);
          assert.deepEqual(r.c, xs);
          assert.deepEqual(
            r.s,
            xs.map((_, i) => (i + k >= 0 && i + k < n ? xs[i + k] : 0)),
          );
        },
      ),
      { numRuns: 30 },
    );
  });
});
