/** The /kusto/parse answer: success, result columns, errors with positions, completions. */
import assert from 'node:assert/strict';
import { before, describe, it } from 'mocha';
import { warmQueryEngine } from '../../src/query/engine.js';
import { parseQuery } from '../../src/query/parse-info.js';
import type { SchemaCatalog } from '../../src/query/types.js';

const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'Logs',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'host', type: 'string' },
        { name: 'latency-ms', type: 'long' },
      ],
    },
    { name: 'logship.agent.metrics', columns: [{ name: 'value', type: 'real' }] },
  ],
};

describe('query parse endpoint', () => {
  before(async function () {
    this.timeout(60_000);
    await warmQueryEngine();
  });

  it('reports success and the result columns', () => {
    const r = parseQuery("Logs | summarize count() by bin(timestamp, 1h), host | extend x = todouble(['latency-ms'])", CATALOG);
    assert.equal(r.parseSuccess, false, 'latency-ms is not a column after summarize');
    const ok = parseQuery('Logs | summarize count() by bin(timestamp, 1h), host', CATALOG);
    assert.equal(ok.parseSuccess, true);
    assert.equal(ok.error, null);
    assert.deepEqual(ok.header, ['timestamp', 'host', 'count_']);
    assert.deepEqual(ok.columns, [
      { name: 'timestamp', type: 'DateTime' },
      { name: 'host', type: 'String' },
      { name: 'count_', type: 'Int64' },
    ]);
  });

  it('stops at the first error, with its position', () => {
    const q = 'Logs | where nosuch > 1';
    const r = parseQuery(q, CATALOG);
    assert.equal(r.parseSuccess, false);
    const token = r.error?.errors[0]?.tokens[0];
    assert.equal(q.slice(token?.start, token?.end), 'nosuch');
  });

  it('completes columns after where, and only functions the engine supports', () => {
    const q = 'Logs | where ';
    const r = parseQuery(q, CATALOG, q.length);
    const values = r.suggestions?.autoCompletions.map((c) => c.value) ?? [];
    assert.ok(values.includes('host'), values.join(','));
    assert.ok(values.includes('timestamp'));
    assert.ok(
      values.some((v) => v.startsWith('ago')),
      'ago offered',
    );
    assert.ok(!values.some((v) => v.startsWith('geo_point_buffer')), 'unsupported function offered');
    const column = r.suggestions?.autoCompletions.find((c) => c.value === 'host');
    assert.equal(column?.completionType, 'Column');
    assert.deepEqual(column?.token, { start: q.length, length: 0 });
  });

  it('completes operators after a pipe, without unsupported ones', () => {
    const q = 'Logs | ';
    const values = parseQuery(q, CATALOG, q.length).suggestions?.autoCompletions.map((c) => c.value) ?? [];
    assert.ok(values.includes('where'), values.join(','));
    assert.ok(values.includes('summarize'));
    assert.ok(values.includes('join'));
    assert.ok(values.includes('lookup'));
    assert.ok(values.includes('mv-expand'));
    assert.ok(values.includes('mv-apply'));
    assert.ok(!values.includes('fork'));
  });

  it('completes table names, including dotted ones', () => {
    const values = parseQuery('lo', CATALOG, 2).suggestions?.autoCompletions.map((c) => c.value) ?? [];
    assert.ok(values.includes('logship.agent.metrics'), values.join(','));
    assert.ok(values.includes('Logs'));
  });

  it('gives no suggestions without a cursor position', () => {
    assert.equal(parseQuery('Logs', CATALOG).suggestions, null);
  });
});
