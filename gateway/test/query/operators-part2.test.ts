/**
 * Tabular operators, part 2 (issue 16): toscalar(), evaluate bag_unpack / pivot / narrow,
 * top-hitters, top-nested, search, partition, and the refusals of fork and facet. Every query
 * runs on one worker and on three (fixture.run insists on the same answer); expected answers are
 * computed here in TypeScript from the fixture's rows, never by the engine's SQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { planQuery } from '../../src/query/engine.js';
import { parseQuery } from '../../src/query/parse-info.js';
import { closeCluster, EVENTS, getCluster, LOGS, type LogRow, run } from './fixture.js';

/** Kusto reads a missing string as "". */
const host = (l: LogRow) => l.host ?? '';

/** Counts of a key, as [key, count] pairs. */
function countBy<T>(rows: T[], key: (r: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const r of rows) m.set(key(r), (m.get(key(r)) ?? 0) + 1);
  return m;
}

/** Sum of the non-null values per key; null when a key has none (as sum() gives). */
function sumBy<T>(rows: T[], key: (r: T) => string, value: (r: T) => number | null): Map<string, number | null> {
  const m = new Map<string, number | null>();
  for (const r of rows) {
    const k = key(r);
    const v = value(r);
    if (!m.has(k)) m.set(k, null);
    if (v !== null) m.set(k, (m.get(k) ?? 0) + v);
  }
  return m;
}

/** Kusto's `has` for a term of letters and digits: a whole term, case-insensitively. */
const hasTerm = (text: string, term: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .includes(term.toLowerCase());

/** Descending by value (nulls last), ties by key ascending: the engine's deterministic order. */
function ranked(m: Map<string, number | null>): [string, number | null][] {
  return [...m.entries()].sort((a, b) => {
    if (a[1] === b[1]) return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0;
    if (a[1] === null) return 1;
    if (b[1] === null) return -1;
    return b[1] - a[1];
  });
}

const rowsOf = (r: { results: Record<string, unknown>[] }) => r.results.map((x) => JSON.stringify(x)).sort();

describe('tabular operators, part 2', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  describe('toscalar()', () => {
    it('uses a subquery value in a filter and in a let', async () => {
      const max = Math.max(...LOGS.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs as number));
      const r = await run('let m = toscalar(Logs | summarize max(latencyMs)); Logs | where latencyMs == m | project latencyMs');
      assert.deepEqual(
        r.results,
        LOGS.filter((l) => l.latencyMs === max).map(() => ({ latencyMs: max })),
      );
      const values = LOGS.filter((l) => l.latencyMs !== null).map((l) => l.latencyMs as number);
      const avg = values.reduce((a, b) => a + b, 0) / values.length;
      const above = await run('Logs | where latencyMs > toscalar(Logs | summarize avg(latencyMs)) | count');
      assert.deepEqual(above.results, [{ Count: values.filter((v) => v > avg).length }]);
    });

    it('gives null (a string: "") without rows, and nests', async () => {
      const r = await run(
        'print s = toscalar(Logs | where level == "none" | project level), n = toscalar(Logs | where level == "none" | project latencyMs)',
      );
      assert.deepEqual(r.results, [{ s: '', n: null }]);
      const levels = [...new Set(LOGS.map((l) => l.level))].sort();
      const nested = await run(
        'print x = toscalar(Logs | where level > toscalar(Logs | summarize min(level)) | summarize min(level))',
      );
      assert.deepEqual(nested.results, [{ x: levels[1] }]);
      const types = await run(
        'print t = toscalar(Logs | summarize max(timestamp)), d = toscalar(Logs | take 1 | project props = dynamic({"a":[1]}))',
      );
      const maxTime = Math.max(...LOGS.map((l) => l.timestamp.getTime()));
      assert.deepEqual(types.results, [{ t: new Date(maxTime).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z'), d: { a: [1] } }]);
    });

    it('reaches the statements as a bound parameter, never as SQL text', () => {
      const plan = planQuery('Logs | where message == toscalar(print s = "sentinel-4711") | count', {
        tables: [{ name: 'Logs', columns: [{ name: 'message', type: 'string' }] }],
      });
      assert.equal(plan.scalars.length, 1);
      const texts = [plan.merge.text, ...plan.fragments.map((f) => f.sql), plan.single?.sql ?? ''];
      for (const t of texts) assert.ok(!t.includes('sentinel'), t);
      const inner = plan.scalars[0]?.plan;
      assert.ok(inner && [inner.merge.text, ...inner.fragments.map((f) => f.sql)].every((t) => !t.includes('sentinel')));
    });
  });

  describe('top-hitters', () => {
    it('counts each value and keeps the N most frequent', async () => {
      const r = await run('Logs | top-hitters 2 of level', { ordered: true });
      assert.deepEqual(r.header, ['level', 'approximate_count_level']);
      const expected = ranked(countBy(LOGS, (l) => l.level))
        .slice(0, 2)
        .map(([level, n]) => ({ level, approximate_count_level: n }));
      assert.deepEqual(r.results, expected);
    });

    it('with by, sums the weight', async () => {
      const r = await run('Logs | top-hitters 3 of host by latencyMs', { ordered: true });
      assert.deepEqual(r.header, ['host', 'approximate_sum_latencyMs']);
      const expected = ranked(sumBy(LOGS, host, (l) => l.latencyMs))
        .slice(0, 3)
        .map(([h, n]) => ({ host: h, approximate_sum_latencyMs: n }));
      assert.deepEqual(r.results, expected);
    });
  });

  describe('top-nested', () => {
    it('keeps the top N of each level within its parent', async () => {
      const r = await run('Logs | top-nested 2 of level by count(), top-nested 2 of host by s = sum(latencyMs)');
      assert.deepEqual(r.header, ['level', 'aggregated_level', 'host', 's']);
      const levels = ranked(countBy(LOGS, (l) => l.level)).slice(0, 2);
      const expected = levels.flatMap(([level, n]) =>
        ranked(
          sumBy(
            LOGS.filter((l) => l.level === level),
            host,
            (l) => l.latencyMs,
          ),
        )
          .slice(0, 2)
          .map(([h, s]) => ({ level, aggregated_level: n, host: h, s })),
      );
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });

    it('without N keeps every value; asc keeps the smallest', async () => {
      const r = await run('Logs | top-nested of level by count(), top-nested 1 of host by count() asc');
      const expected = [...countBy(LOGS, (l) => l.level).entries()].map(([level, n]) => {
        const hosts = [
          ...countBy(
            LOGS.filter((l) => l.level === level),
            host,
          ).entries(),
        ].sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1));
        const [h, c] = hosts[0] as [string, number];
        return { level, aggregated_level: n, host: h, aggregated_host: c };
      });
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });

    it('with others adds a row per level for the values left out', async () => {
      const r = await run(
        'Logs | top-nested 1 of level with others = "rest" by count(), top-nested 1 of host with others = "other hosts" by count()',
      );
      const levelCounts = ranked(countBy(LOGS, (l) => l.level));
      const [topLevel, topCount] = levelCounts[0] as [string, number];
      const hosts = ranked(
        countBy(
          LOGS.filter((l) => l.level === topLevel),
          host,
        ),
      );
      const [topHost, topHostCount] = hosts[0] as [string, number];
      const expected = [
        { level: topLevel, aggregated_level: topCount, host: topHost, aggregated_host: topHostCount },
        { level: topLevel, aggregated_level: topCount, host: 'other hosts', aggregated_host: topCount - topHostCount },
        { level: 'rest', aggregated_level: LOGS.length - topCount, host: '', aggregated_host: null },
      ];
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
      await assert.rejects(
        run('Logs | top-nested 1 of level with others = "x" by avg(latencyMs)'),
        /with others needs count\(\), sum\(\), min\(\) or max\(\)/,
      );
    });
  });

  describe('evaluate bag_unpack', () => {
    it('makes a column per property, typed by its values, in name order', async () => {
      const r = await run('Logs | where isnotnull(props) | project id, props | evaluate bag_unpack(props)');
      assert.deepEqual(
        r.columns.map((c) => `${c.name}:${c.type}`),
        ['id:Guid', 'code:Int64', 'tags:Dynamic', 'user:Dynamic'],
      );
      const expected = LOGS.filter((l) => l.props !== null).map((l) => {
        const p = l.props as Record<string, unknown>;
        return { id: l.id, code: p.code, tags: p.tags, user: p.user };
      });
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });

    it('types a property of mixed types as dynamic; prefix and ignored properties', async () => {
      const q = 'datatable(k:long, d:dynamic)[1, dynamic({"a":1,"b":"x"}), 2, dynamic({"a":"y","c":true}), 3, dynamic([1])]';
      const r = await run(`${q} | evaluate bag_unpack(d)`);
      assert.deepEqual(
        r.columns.map((c) => `${c.name}:${c.type}`),
        ['k:Int64', 'a:Dynamic', 'b:String', 'c:Boolean'],
      );
      assert.deepEqual(
        rowsOf(r),
        [
          { k: 1, a: 1, b: 'x', c: null },
          { k: 2, a: 'y', b: '', c: true },
          { k: 3, a: null, b: '', c: null },
        ]
          .map((x) => JSON.stringify(x))
          .sort(),
      );
      const p = await run(`${q} | evaluate bag_unpack(d, "p_", "error", dynamic(["a"]))`);
      assert.deepEqual(p.header, ['k', 'p_b', 'p_c']);
    });

    it('a property named like a column: error, replace_source or keep_source', async () => {
      const q = 'datatable(code:long, d:dynamic)[1, dynamic({"code":5})]';
      await assert.rejects(run(`${q} | evaluate bag_unpack(d)`), /columnsConflict/);
      assert.deepEqual((await run(`${q} | evaluate bag_unpack(d, "", "replace_source")`)).results, [{ code: 5 }]);
      assert.deepEqual((await run(`${q} | evaluate bag_unpack(d, "", "keep_source")`)).results, [{ code: 1 }]);
    });

    it('with an output schema, needs no first phase', async () => {
      const q = 'Logs | where isnotnull(props) | project id, props | evaluate bag_unpack(props) : (*, code:long)';
      const plan = planQuery(q, (await getCluster()).three.catalog);
      assert.equal(plan.nextPhase, undefined);
      const r = await run(q);
      assert.deepEqual(r.header, ['id', 'code']);
      assert.equal(r.results.length, LOGS.filter((l) => l.props !== null).length);
    });

    it('a query whose columns depend on data still parses for the editor', () => {
      const p = parseQuery('Logs | evaluate bag_unpack(props)', {
        tables: [{ name: 'Logs', columns: [{ name: 'props', type: 'dynamic' }] }],
      });
      assert.equal(p.parseSuccess, true);
      assert.equal(p.error, null);
    });
  });

  describe('evaluate pivot', () => {
    it('counts per pivot value, grouped by the other columns', async () => {
      const r = await run('Logs | project level, host | evaluate pivot(level)');
      const levels = [...new Set(LOGS.map((l) => l.level))].sort();
      assert.deepEqual(r.header, ['host', ...levels]);
      const expected = [...new Set(LOGS.map(host))].map((h) => ({
        host: h,
        ...Object.fromEntries(levels.map((lv) => [lv, LOGS.filter((l) => host(l) === h && l.level === lv).length])),
      }));
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });

    it('with an aggregate and group columns', async () => {
      const r = await run('Logs | evaluate pivot(level, max(latencyMs), host)');
      const levels = [...new Set(LOGS.map((l) => l.level))].sort();
      assert.deepEqual(r.header, ['host', ...levels]);
      const expected = [...new Set(LOGS.map(host))].map((h) => ({
        host: h,
        ...Object.fromEntries(
          levels.map((lv) => {
            const vs = LOGS.filter((l) => host(l) === h && l.level === lv && l.latencyMs !== null).map(
              (l) => l.latencyMs as number,
            );
            return [lv, vs.length ? Math.max(...vs) : null];
          }),
        ),
      }));
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });
  });

  describe('evaluate narrow', () => {
    it('gives a row per cell: Row, Column, Value', async () => {
      const r = await run('datatable(a:long, b:string)[1, "x", 2, "y"] | evaluate narrow()', { ordered: true });
      assert.deepEqual(r.columns, [
        { name: 'Row', type: 'Int64' },
        { name: 'Column', type: 'String' },
        { name: 'Value', type: 'String' },
      ]);
      assert.deepEqual(r.results, [
        { Row: 0, Column: 'a', Value: '1' },
        { Row: 0, Column: 'b', Value: 'x' },
        { Row: 1, Column: 'a', Value: '2' },
        { Row: 1, Column: 'b', Value: 'y' },
      ]);
      const sorted = [...LOGS].sort((a, b) => (a.id < b.id ? -1 : 1)).slice(0, 3);
      const logs = await run('Logs | sort by id asc | take 3 | project id, level | evaluate narrow()', { ordered: true });
      assert.deepEqual(
        logs.results,
        sorted.flatMap((l, i) => [
          { Row: i, Column: 'id', Value: l.id },
          { Row: i, Column: 'level', Value: l.level },
        ]),
      );
    });
  });

  describe('search', () => {
    it('finds a term in any column and names the table', async () => {
      const r = await run('Logs | search "timeout" | project $table, id');
      const expected = LOGS.filter(
        (l) => hasTerm(l.message, 'timeout') || hasTerm(host(l), 'timeout') || hasTerm(l.level, 'timeout'),
      );
      assert.ok(expected.length > 0);
      assert.deepEqual(rowsOf(r), expected.map((l) => JSON.stringify({ $table: 'Logs', id: l.id })).sort());
    });

    it('Column:"term", prefixes, and/or/not, kind=case_sensitive', async () => {
      const prefix = await run('Logs | search message:"hello*" | count');
      const prefixed = LOGS.filter((l) => /(^|[^\p{L}\p{N}])hello/iu.test(l.message));
      assert.deepEqual(prefix.results, [{ Count: prefixed.length }]);
      const both = await run('Logs | search level:"error" and not(host:"web") | count');
      assert.deepEqual(both.results, [{ Count: LOGS.filter((l) => l.level === 'Error' && !hasTerm(host(l), 'web')).length }]);
      const cs = await run('Logs | search kind=case_sensitive message:"Timeout" | count');
      const ci = await run('Logs | search kind=case_sensitive message:"timeout" | count');
      assert.deepEqual(cs.results, [{ Count: LOGS.filter((l) => l.message.includes('Timeout')).length }]);
      assert.deepEqual(ci.results, [{ Count: 0 }]);
    });

    it('over several tables: a union by column name with $table first', async () => {
      const r = await run('search in (Logs, logship.agent.*) "db" | project $table, host');
      assert.deepEqual(r.header, ['$table', 'host']);
      const expected = [
        ...LOGS.filter((l) => hasTerm(host(l), 'db') || hasTerm(l.message, 'db')).map((l) => ({ $table: 'Logs', host: host(l) })),
        ...EVENTS.filter((e) => hasTerm(e.host, 'db')).map((e) => ({ $table: 'logship.agent.events', host: e.host })),
      ];
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
      const all = await run('search "db" | take 1', { columnsOnly: true });
      assert.deepEqual(all.header.slice(0, 2), ['$table', 'timestamp']);
      assert.ok(all.header.includes('value') && all.header.includes('message'));
    });
  });

  describe('partition', () => {
    it('runs the subquery per value of the column', async () => {
      const r = await run('Logs | partition by level (top 2 by latencyMs | project level, latencyMs)');
      const expected = [...new Set(LOGS.map((l) => l.level))].flatMap((lv) =>
        LOGS.filter((l) => l.level === lv)
          .map((l) => l.latencyMs)
          .sort((a, b) => (a === null ? 1 : b === null ? -1 : b - a))
          .slice(0, 2)
          .map((latencyMs) => ({ level: lv, latencyMs })),
      );
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
    });

    it('the braces form reads $partition; no values give no rows', async () => {
      const r = await run('Logs | partition hint.strategy=native by host { $partition | summarize c = count() }');
      assert.deepEqual(rowsOf(r), [...countBy(LOGS, host).values()].map((c) => JSON.stringify({ c })).sort());
      const none = await run('Logs | where level == "none" | partition by level (count)');
      assert.deepEqual(none.header, ['Count']);
      assert.deepEqual(none.results, []);
    });
  });

  describe('mv-apply', () => {
    const tags = (l: LogRow) => (l.props as { tags?: string[] } | null)?.tags ?? null;

    it("summarizes each row's array; a row with an empty array still gets the aggregates of nothing", async () => {
      const r = await run(
        'Logs | project id, props | mv-apply t = props.tags to typeof(string) on (summarize n = count(), m = max(t))',
      );
      assert.deepEqual(r.header, ['id', 'props', 'n', 'm']);
      const expected = LOGS.map((l) => {
        const list = tags(l);
        // A null bag expands to one null element, as mv-expand does.
        const items = list === null ? [null] : list;
        const strings = items.filter((x): x is string => x !== null);
        return { id: l.id, props: l.props, n: items.length, m: strings.length ? strings.sort().at(-1) : '' };
      });
      assert.deepEqual(rowsOf(r), expected.map((x) => JSON.stringify(x)).sort());
      const empty = await run(
        'datatable(k:long, d:dynamic)[1, dynamic([]), 2, dynamic([4, 6])] | mv-apply e = d to typeof(long) on (summarize s = sum(e), c = count())',
      );
      assert.deepEqual(
        rowsOf(empty),
        [
          { k: 1, d: [], s: null, c: 0 },
          { k: 2, d: [4, 6], s: 10, c: 2 },
        ]
          .map((x) => JSON.stringify(x))
          .sort(),
      );
    });

    it('top and take keep the first elements of each row; identical rows stay apart', async () => {
      const q = 'datatable(k:long, d:dynamic)[1, dynamic([5, 1, 3]), 1, dynamic([5, 1, 3]), 2, dynamic([7])]';
      const top = await run(`${q} | mv-apply with_itemindex=i e = d to typeof(long) on (top 2 by e | project e, i)`);
      assert.deepEqual(top.header, ['k', 'd', 'e', 'i']);
      assert.deepEqual(
        rowsOf(top),
        [
          { k: 1, d: [5, 1, 3], e: 5, i: 0 },
          { k: 1, d: [5, 1, 3], e: 3, i: 2 },
          { k: 1, d: [5, 1, 3], e: 5, i: 0 },
          { k: 1, d: [5, 1, 3], e: 3, i: 2 },
          { k: 2, d: [7], e: 7, i: 0 },
        ]
          .map((x) => JSON.stringify(x))
          .sort(),
      );
      const take = await run(`${q} | mv-apply d on (take 1)`);
      assert.deepEqual(take.header, ['k', 'd']);
      assert.deepEqual(
        rowsOf(take),
        [
          { k: 1, d: 5 },
          { k: 1, d: 5 },
          { k: 2, d: 7 },
        ]
          .map((x) => JSON.stringify(x))
          .sort(),
      );
      const sorted = await run(`${q} | mv-apply e = d to typeof(long) on (sort by e asc | take 1 | where e > 1)`);
      assert.deepEqual(
        rowsOf(sorted),
        [{ k: 2, d: [7], e: 7 }].map((x) => JSON.stringify(x)),
      );
    });

    it('refuses operators that mix rows of different input rows', async () => {
      await assert.rejects(
        run('Logs | mv-apply t = props.tags on (join (Logs) on id)'),
        /'join' is not supported inside mv-apply/,
      );
    });
  });

  describe('refused with the reason', () => {
    it('fork and facet answer with several tables', async () => {
      await assert.rejects(
        run('Logs | fork (take 1) (count)'),
        /The operator 'fork' is not supported: it answers with several tables/,
      );
      await assert.rejects(run('Logs | facet by level'), /The operator 'facet' is not supported: it answers with several tables/);
      await assert.rejects(run('Logs | evaluate autocluster()'), /The plugin 'autocluster' of 'evaluate' is not supported/);
    });
  });
});
