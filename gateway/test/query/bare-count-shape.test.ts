import assert from 'node:assert/strict';
import { isBareCount } from '@strata/common';
import { before, describe, it } from 'mocha';
import { planQuery } from '../../src/query/engine.js';
import { warmKustoParser } from '../../src/query/syntax/kusto-runtime.js';
import type { SchemaCatalog } from '../../src/query/types.js';

/**
 * Workers answer a bare count from their catalog's segment row counts (isBareCount, common;
 * docs/decisions/0025-segment-format.md) when the statement has exactly the shape this planner
 * writes for a count of a table's rows. The recogniser matches text: this test keeps the planner
 * and it in step, so the shortcut cannot silently stop applying.
 */
describe('bare count statements as the planner writes them', () => {
  const catalog: SchemaCatalog = {
    tables: [
      {
        name: 'T',
        columns: [
          { name: 'timestamp', type: 'datetime' },
          { name: 'latencyMs', type: 'long' },
          { name: 'msg', type: 'string' },
        ],
      },
    ],
  };
  before(async () => {
    await warmKustoParser();
  });

  const statements = (query: string, storageTime: boolean) => {
    const plan = planQuery(query, catalog, { storageTime });
    const out = plan.fragments.map((f) => ({ ...f, branchTopN: f.branchTopN }));
    if (plan.single) out.push({ ...plan.single, index: -1, branchTopN: plan.single.branchTopN });
    return out;
  };

  it('recognises every fragment of a count of the rows, also with time conditions left to the scan', () => {
    for (const query of [
      'T | count',
      'T | summarize count()',
      'T | where timestamp > ago(1h) | count',
      'T | where timestamp > ago(1d) and timestamp <= ago(1m) | summarize count()',
    ]) {
      const all = statements(query, true);
      assert.equal(all.filter((f) => f.index >= 0).length, 1, query);
      // The fragment of a multi-worker plan and the whole query on one worker.
      assert.equal(all.length, 2, query);
      for (const f of all) assert.ok(isBareCount(f), `${query}: ${f.sql}`);
    }
  });

  it('recognises nothing that is not a count of every row the scan gives', () => {
    for (const query of [
      'T | where latencyMs > 5 | count',
      'T | where msg has "x" | summarize count()',
      'T | summarize count() by msg',
      'T | summarize dcount(msg)',
      'T | take 5 | count',
      'T | top 10 by latencyMs',
    ])
      for (const f of statements(query, true)) assert.equal(isBareCount(f), false, `${query}: ${f.sql}`);
    // Without storage-applied bounds the time condition stays in the statement.
    for (const f of statements('T | where timestamp > ago(1h) | count', false)) assert.equal(isBareCount(f), false, f.sql);
  });
});
