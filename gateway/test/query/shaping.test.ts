/**
 * Shaping operators (issue 16, item 6, part): project-keep, project-reorder, getschema, count as,
 * sample and sample-distinct.
 * Expected columns and rows are written by hand from the fixture's schema; every query runs on one
 * worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOG_COLUMNS, LOGS, run } from './fixture.js';

const NAMES = LOG_COLUMNS.map((c) => c.name as string);

describe('project-keep, project-reorder, getschema, count as, sample', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('project-keep keeps the named and matching columns in their input order', async () => {
    const r = await run('Logs | project-keep *s, level | take 1', { columnsOnly: true });
    assert.deepEqual(
      r.header,
      NAMES.filter((n) => n.endsWith('s') || n === 'level'),
    );
    await assert.rejects(run('Logs | project-keep nosuch'), /The column 'nosuch' does not exist/);
  });

  it('project-reorder puts the listed columns first; a pattern with asc/desc sorts its matches by name', async () => {
    const r = await run('Logs | project-reorder message, *at*o* desc | take 1', { columnsOnly: true });
    const matched = NAMES.filter((n) => /^.*at.*o.*$/.test(n) && n !== 'message')
      .sort()
      .reverse();
    const expected = ['message', ...matched, ...NAMES.filter((n) => n !== 'message' && !matched.includes(n))];
    assert.deepEqual(r.header, expected);
  });

  it('getschema lists the columns with their ordinals and types', async () => {
    const r = await run('Logs | project timestamp, host, latencyMs, ratio, ok, duration, id, props | getschema', {
      ordered: true,
    });
    assert.deepEqual(r.results, [
      { ColumnName: 'timestamp', ColumnOrdinal: 0, DataType: 'System.DateTime', ColumnType: 'datetime' },
      { ColumnName: 'host', ColumnOrdinal: 1, DataType: 'System.String', ColumnType: 'string' },
      { ColumnName: 'latencyMs', ColumnOrdinal: 2, DataType: 'System.Int64', ColumnType: 'long' },
      { ColumnName: 'ratio', ColumnOrdinal: 3, DataType: 'System.Double', ColumnType: 'real' },
      { ColumnName: 'ok', ColumnOrdinal: 4, DataType: 'System.SByte', ColumnType: 'bool' },
      { ColumnName: 'duration', ColumnOrdinal: 5, DataType: 'System.TimeSpan', ColumnType: 'timespan' },
      { ColumnName: 'id', ColumnOrdinal: 6, DataType: 'System.Guid', ColumnType: 'guid' },
      { ColumnName: 'props', ColumnOrdinal: 7, DataType: 'System.Object', ColumnType: 'dynamic' },
    ]);
  });

  it('sample takes N rows of the input (all when fewer); sample-distinct N distinct values', async () => {
    const r = await run('Logs | sample 7 | project id', { anyRows: true });
    const ids = r.results.map((x) => x.id as string);
    assert.equal(new Set(ids).size, 7);
    const known = new Set(LOGS.map((l) => l.id));
    assert.ok(ids.every((id) => known.has(id)));
    assert.deepEqual((await run('Logs | sample 1000 | count')).results, [{ Count: LOGS.length }]);
    const levels = await run('Logs | sample-distinct 2 of level', { anyRows: true });
    const values = levels.results.map((x) => x.level as string);
    assert.equal(new Set(values).size, 2);
    assert.ok(values.every((v) => LOGS.some((l) => l.level === v)));
  });

  it('count as names its column', async () => {
    const r = await run('Logs | where level == "Error" | count as errors');
    assert.deepEqual(r.results, [{ errors: LOGS.filter((l) => l.level === 'Error').length }]);
  });
});
