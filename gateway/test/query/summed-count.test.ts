import assert from 'node:assert/strict';
import type { ColumnBatch } from '@strata/common';
import { bindValues } from '@strata/common';
import { memoryDuckDB } from '@strata/common/testing';
import fc from 'fast-check';
import { executePlan, type FragmentRunner, MergeDatabase, planQuery, warmQueryEngine } from '../../src/query/engine.js';
import { summedCountFragment } from '../../src/query/exec/summed-count.js';

/**
 * A count over several workers is merged in JS when the merge statement is exactly the sum the
 * planner writes for it (exec/summed-count.ts, decision 0046). The recogniser matches text: this
 * test keeps the planner and it in step, and checks the JS sum against DuckDB running the very
 * merge statement over the same partial counts (nulls, none, many batches).
 */
describe('counts of several workers summed in JS', function () {
  this.timeout(60_000);
  const catalog = {
    tables: [
      {
        name: 'T',
        columns: [
          { name: 'timestamp', type: 'datetime' as const },
          { name: 'latencyMs', type: 'long' as const },
          { name: 'msg', type: 'string' as const },
        ],
      },
    ],
  };
  const db = memoryDuckDB();
  const merge = new MergeDatabase();
  before(() => warmQueryEngine());
  after(() => merge.close());

  const COUNTS = [
    'T | count',
    'T | summarize count()',
    'T | summarize n = count()',
    'T | where timestamp > ago(1d) | count',
    'T | where msg has "deadlock" | count',
    'T | where msg contains "db-3" and latencyMs > 5 | summarize count()',
  ];
  const OTHERS = [
    'T | summarize count() by msg',
    'T | summarize sum(latencyMs)',
    'T | summarize count(), sum(latencyMs)',
    'T | summarize dcount(msg)',
    'T | count | extend x = 1',
    'T | top 10 by latencyMs',
    'T | take 5',
  ];

  it('recognises the merge of every count plan, and nothing else', () => {
    for (const q of COUNTS) assert.ok(summedCountFragment(planQuery(q, catalog)), q);
    for (const q of OTHERS) assert.equal(summedCountFragment(planQuery(q, catalog)), undefined, q);
  });

  it('answers what DuckDB answers running the merge statement over the same partial counts', async () => {
    const partials = fc.array(fc.array(fc.option(fc.bigInt({ min: 0n, max: 10n ** 12n }), { nil: null }), { maxLength: 4 }), {
      maxLength: 5,
    });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...COUNTS), partials, async (query, batches) => {
        const plan = planQuery(query, catalog);
        const fragment = summedCountFragment(plan)!;
        const runner: FragmentRunner = async function* () {
          for (const values of batches) yield { rowCount: values.length, columns: [values] } as ColumnBatch;
        };
        const ours = await executePlan(plan, runner, { mergeDatabase: merge });
        // The merge statement itself, over a table f0 of the same values.
        const id = fragment.columns[0]!.id;
        await db.conn.run(`CREATE OR REPLACE TEMP TABLE f0 ("${id}" BIGINT)`);
        for (const v of batches.flat()) await db.conn.run(`INSERT INTO f0 VALUES (${v === null ? 'NULL' : v})`);
        const { values, types } = bindValues(plan.merge.params);
        const rows = (await db.conn.runAndReadAll(plan.merge.text, values, types)).getRows();
        assert.equal(rows.length, 1);
        const name = plan.columns[0]!.name;
        assert.deepEqual(ours.results, [{ [name]: Number(rows[0]![0]) }], query);
      }),
      { numRuns: 60, seed: 46 },
    );
  });
});
