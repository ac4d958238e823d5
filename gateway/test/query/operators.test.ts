/**
 * Result tests for the tabular operators: each answer is compared with one computed in
 * TypeScript from the fixture rows (never by the engine's SQL), on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, EVENTS, getCluster, kustoDate, LOGS, NOW, run, sortedJson } from './fixture.js';

const str = (s: string | null) => s ?? '';

describe('query operators (answers computed independently)', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('where filters rows', async () => {
    const r = await run('Logs | where latencyMs > 1000 and level == "Error" | project id');
    const expected = LOGS.filter((l) => l.latencyMs !== null && l.latencyMs > 1000 && l.level === 'Error').map((l) => ({
      id: l.id,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('where with a time filter (ago) keeps only recent rows', async () => {
    const r = await run('Logs | where timestamp > ago(20h) | count');
    const cutoff = NOW.getTime() - 20 * 3_600_000;
    assert.deepEqual(r.results, [{ Count: LOGS.filter((l) => l.timestamp.getTime() > cutoff).length }]);
  });

  it('project selects, renames and computes', async () => {
    const r = await run('Logs | project id, h = host, twice = latencyMs * 2');
    assert.deepEqual(r.header, ['id', 'h', 'twice']);
    const expected = LOGS.map((l) => ({ id: l.id, h: str(l.host), twice: l.latencyMs === null ? null : l.latencyMs * 2 }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('project reads the input row in every item; a later step sees earlier columns', async () => {
    // Kusto: a column a project defines is not visible to its other items (see traps.test.ts).
    await assert.rejects(run('Logs | project id, a = latencyMs + 1, b = a * 10'), /'a' does not refer to any known column/);
    const r = await run('Logs | where isnotnull(latencyMs) | project id, a = latencyMs + 1 | project id, a, b = a * 10');
    const expected = LOGS.filter((l) => l.latencyMs !== null).map((l) => ({
      id: l.id,
      a: (l.latencyMs as number) + 1,
      b: ((l.latencyMs as number) + 1) * 10,
    }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('project-away drops columns', async () => {
    const r = await run('Logs | project-away props, message, duration | take 1');
    assert.deepEqual(r.header, ['timestamp', 'host', 'level', 'latencyMs', 'ratio', 'ok', 'id']);
  });

  it('project-rename renames in place', async () => {
    const r = await run('Logs | project-rename machine = host, when = timestamp | project when, machine, id');
    const expected = LOGS.map((l) => ({ when: kustoDate(l.timestamp), machine: str(l.host), id: l.id }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('extend adds computed columns', async () => {
    const r = await run('Logs | extend slow = latencyMs > 500, l2 = strlen(level) | project id, slow, l2');
    const expected = LOGS.map((l) => ({ id: l.id, slow: l.latencyMs === null ? null : l.latencyMs > 500, l2: l.level.length }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('summarize … by … with bin() keys', async () => {
    const r = await run('Logs | summarize n = count(), total = sum(latencyMs) by level, t = bin(timestamp, 6h)');
    const groups = new Map<string, { level: string; t: string; n: number; total: number | null }>();
    for (const l of LOGS) {
      const t = Math.floor(l.timestamp.getTime() / 21_600_000) * 21_600_000;
      const key = `${l.level}|${t}`;
      const g = groups.get(key) ?? { level: l.level, t: kustoDate(t), n: 0, total: null };
      g.n++;
      if (l.latencyMs !== null) g.total = (g.total ?? 0) + l.latencyMs;
      groups.set(key, g);
    }
    assert.deepEqual(sortedJson(r.results), sortedJson([...groups.values()]));
  });

  it('summarize by alone lists distinct keys', async () => {
    const r = await run('Logs | summarize by level, ok');
    const keys = new Set(LOGS.map((l) => JSON.stringify({ level: l.level, ok: l.ok })));
    assert.deepEqual(sortedJson(r.results), [...keys].sort());
  });

  it('summarize items may combine aggregates in expressions', async () => {
    const r = await run('Logs | summarize ratioOfErrors = todouble(countif(level == "Error")) / count()');
    const expected = LOGS.filter((l) => l.level === 'Error').length / LOGS.length;
    assert.ok(Math.abs((r.results[0]?.ratioOfErrors as number) - expected) < 1e-12);
  });

  it('count counts rows', async () => {
    assert.deepEqual((await run('Logs | count')).results, [{ Count: LOGS.length }]);
  });

  it('distinct lists distinct combinations', async () => {
    const r = await run('Logs | distinct host, level');
    const keys = new Set(LOGS.map((l) => JSON.stringify({ host: str(l.host), level: l.level })));
    assert.deepEqual(sortedJson(r.results), [...keys].sort());
  });

  it('distinct * over all columns', async () => {
    const r = await run('logship.agent.events | distinct *');
    assert.equal(r.results.length, EVENTS.length);
  });

  it('take and limit return that many rows', async () => {
    // Which rows `take` returns is unspecified: only the counts must agree.
    assert.equal((await run('Logs | take 7', { anyRows: true })).results.length, 7);
    assert.equal((await run('Logs | limit 7', { anyRows: true })).results.length, 7);
    assert.equal((await run('Logs | take 0')).results.length, 0);
  });

  it('take after sort returns the first rows of the order', async () => {
    const r = await run('Logs | sort by timestamp asc | take 5 | project timestamp', { ordered: true });
    const expected = [...LOGS]
      .sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime())
      .slice(0, 5)
      .map((l) => ({ timestamp: kustoDate(l.timestamp) }));
    assert.deepEqual(r.results, expected);
  });

  it('sort / order by with several keys and directions', async () => {
    const r = await run('Logs | order by level asc, latencyMs desc | project level, latencyMs', { ordered: true });
    const cmpNullsLast = (a: number | null, b: number | null) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : b - a);
    const expected = [...LOGS]
      .sort((a, b) => (a.level < b.level ? -1 : a.level > b.level ? 1 : cmpNullsLast(a.latencyMs, b.latencyMs)))
      .map((l) => ({ level: l.level, latencyMs: l.latencyMs }));
    assert.deepEqual(r.results, expected);
  });

  it('sort order survives later project and where steps', async () => {
    const r = await run('Logs | sort by ratio asc | where isnotnull(ratio) | project r = ratio * 1 | take 10', { ordered: true });
    const expected = LOGS.map((l) => l.ratio)
      .filter((v): v is number => v !== null)
      .sort((a, b) => a - b)
      .slice(0, 10)
      .map((v) => ({ r: v }));
    assert.deepEqual(r.results, expected);
  });

  it('top N by an expression, ascending', async () => {
    const r = await run('Logs | top 4 by ratio asc nulls last | project ratio', { ordered: true });
    const expected = LOGS.map((l) => l.ratio)
      .filter((v): v is number => v !== null)
      .sort((a, b) => a - b)
      .slice(0, 4);
    assert.deepEqual(
      r.results.map((x) => x.ratio),
      expected,
    );
  });

  it('union of two tables aligns columns by name', async () => {
    const r = await run('Logs | project timestamp, host | union (logship.agent.events | project timestamp, host, value) | count');
    assert.deepEqual(r.results, [{ Count: LOGS.length + EVENTS.length }]);
    const cols = await run('Logs | project host | union (logship.agent.events | project value, host) | take 1');
    assert.deepEqual(cols.header, ['host', 'value']);
  });

  it('union as a source, with the documented range example', async () => {
    const r = await run('range col from 1 to 5 step 1 | union ( range col from 1 to 5 step 1 )');
    assert.deepEqual(r.results.map((x) => x.col).sort(), [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]);
    const s = await run('union logship.agent.events, logship.agent.events | count');
    assert.deepEqual(s.results, [{ Count: 2 * EVENTS.length }]);
  });

  it('union of same-named columns with different types keeps both', async () => {
    const r = await run('datatable(a:long)[1] | union (datatable(a:string)["x"])');
    assert.deepEqual(r.header, ['a_long', 'a_string']);
  });

  it('datatable builds rows, including null and expressions', async () => {
    const r = await run(
      'datatable(name:string, value:int64, t:datetime)["a", 1, datetime(2024-01-01), "b", null, datetime(null), "c", 1 + 2, datetime(2024-01-01) + 1d]',
      { ordered: true },
    );
    assert.deepEqual(r.results, [
      { name: 'a', value: 1, t: '2024-01-01T00:00:00.0000000Z' },
      { name: 'b', value: null, t: null },
      { name: 'c', value: 3, t: '2024-01-02T00:00:00.0000000Z' },
    ]);
  });

  it('range is inclusive, over numbers, datetimes and timespans', async () => {
    assert.deepEqual(
      (await run('range val from 1 to 100 step 1 | where val < 10', { ordered: true })).results.map((x) => x.val),
      [1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.deepEqual(
      (await run('range t from datetime(2024-01-01) to datetime(2024-01-01 02:00) step 1h', { ordered: true })).results.map(
        (x) => x.t,
      ),
      ['2024-01-01T00:00:00.0000000Z', '2024-01-01T01:00:00.0000000Z', '2024-01-01T02:00:00.0000000Z'],
    );
    assert.deepEqual(
      (await run('range x from 0.5 to 2 step 0.5', { ordered: true })).results.map((x) => x.x),
      [0.5, 1, 1.5, 2],
    );
    assert.deepEqual(
      (await run('range d from 0s to 2m step 1m', { ordered: true })).results.map((x) => x.d),
      ['00:00:00', '00:01:00', '00:02:00'],
    );
  });

  it('print computes one row', async () => {
    const r = await run('print a = 1 + 1, b = "x", c = 2.5');
    assert.deepEqual(r.results, [{ a: 2, b: 'x', c: 2.5 }]);
  });

  it('let statements: scalars and tabular values', async () => {
    const r = await run('let name = "abc"; let value = 1; datatable (name: string, value: int64) [ name, value ]');
    assert.deepEqual(r.results, [{ name: 'abc', value: 1 }]);
    const t = await run(
      'let errors = Logs | where level == "Error"; let limit_ = 500; errors | where latencyMs > limit_ | count',
    );
    assert.deepEqual(t.results, [
      { Count: LOGS.filter((l) => l.level === 'Error' && l.latencyMs !== null && l.latencyMs > 500).length },
    ]);
  });

  it('let with the dashboards bucket-size pattern folds to a constant', async () => {
    const q =
      'let duration = datetime(2024-03-10 12:00) - datetime(2024-03-09 00:00); let bucketSize = case(duration > 7d, 1d, duration > 1d, 1h, duration > 6h, 30m, 5m); Logs | summarize count() by t = bin(timestamp, bucketSize) | count';
    const hours = new Set(LOGS.map((l) => Math.floor(l.timestamp.getTime() / 3_600_000)));
    assert.deepEqual((await run(q)).results, [{ Count: hours.size }]);
  });

  it('parse kind=regex extracts columns (documented example)', async () => {
    const r = await run(
      "range col from 1 to 2 step 1 | project column='Name=Logship Color=Ship' | parse kind=regex column with 'Name=' Name ' Color=' Color",
    );
    assert.deepEqual(r.results, [
      { column: 'Name=Logship Color=Ship', Name: 'Logship', Color: 'Ship' },
      { column: 'Name=Logship Color=Ship', Name: 'Logship', Color: 'Ship' },
    ]);
  });

  it('parse kind=regex with typed columns and non-matching rows', async () => {
    const r = await run('Logs | parse kind=regex message with "ratio=" r:real | project message, r');
    const expected = LOGS.map((l) => {
      const m = /ratio=(.*)/.exec(l.message);
      return { message: l.message, r: m ? Number(m[1]) : null };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('render is returned as the render hint', async () => {
    const r = await run(
      'Logs | summarize count() by bin(timestamp, 1h) | render timechart with (title = "Requests", fill = true, yUnit = "ms", lineWidth = 2)',
    );
    assert.deepEqual(r.render, { chartType: 'timechart', options: { title: 'Requests', fill: true, yUnit: 'ms', lineWidth: 2 } });
    const p = await run('Logs | count | render piechart');
    assert.deepEqual(p.render, { chartType: 'piechart' });
  });

  it('built-in tables list the catalog', async () => {
    const t = await run('schema.tables | project TableName, DatabaseName | limit 100');
    assert.deepEqual(
      sortedJson(t.results),
      sortedJson([
        { TableName: 'Logs', DatabaseName: '' },
        { TableName: 'logship.agent.events', DatabaseName: '' },
      ]),
    );
    const f = await run('$metadata.schema.tables.fields | where TableName == "logship.agent.events"');
    assert.deepEqual(f.results, [
      { TableName: 'logship.agent.events', ColumnName: 'timestamp', ColumnType: 'DateTime' },
      { TableName: 'logship.agent.events', ColumnName: 'host', ColumnType: 'String' },
      { TableName: 'logship.agent.events', ColumnName: 'value', ColumnType: 'Int64' },
    ]);
    const g = await run('schema.tables.schema | where TableName == "Logs" | count');
    assert.deepEqual(g.results, [{ Count: 10 }]);
    const w = await run("schema.tables | where TableName startswith 'logship'");
    assert.deepEqual(w.results, [{ TableName: 'logship.agent.events', DatabaseName: '' }]);
  });

  it('the row cap cuts results and says so', async () => {
    const c = await getCluster();
    const { planQuery, executePlan } = await import('../../src/query/engine.js');
    const r = await executePlan(planQuery('Logs', c.three.catalog, { now: NOW, maxRows: 25 }), c.three.runner, {
      mergeDatabase: c.merge,
    });
    assert.equal(r.results.length, 25);
    assert.equal(r.truncated, true);
    const s = await executePlan(planQuery('Logs | take 25', c.three.catalog, { now: NOW, maxRows: 25 }), c.three.runner, {
      mergeDatabase: c.merge,
    });
    assert.equal(s.truncated, false);
  });
});
