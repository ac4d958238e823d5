import { executePlan, MergeDatabase, planQuery, warmQueryEngine } from './dist/src/query/engine.js';
import { FakeWorkers } from './dist/test/query/fake-workers.js';

await warmQueryEngine();
const w = await FakeWorkers.create(
  [
    {
      name: 'T',
      columns: [
        { name: 'a', type: 'long' },
        { name: 's', type: 'string' },
      ],
      rows: [
        [1n, 'x'],
        [null, ''],
      ],
    },
  ],
  1,
);
const merge = new MergeDatabase();
for (const q of process.argv.slice(2)) {
  try {
    const r = await executePlan(planQuery(q, w.catalog, { now: new Date(), maxRows: 100 }), w.runner, { mergeDatabase: merge });
    console.log(q, '=>', JSON.stringify(r.results), r.columns.map((c) => c.name + ':' + c.type).join(','));
  } catch (e) {
    console.log(q, 'ERR', e.message);
  }
}
w.close();
await merge.close();
