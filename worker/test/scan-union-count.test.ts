import assert from 'node:assert/strict';
import { ACCOUNT, entries, input, openEngine, part, storageTestContext } from './helpers/storage-fixtures.js';

/**
 * A scan's relation is a UNION ALL of the hot rows and the segment groups. A count needs no column
 * of it, but DuckDB keeps the first column of a union alive: the relation leads each branch with a
 * constant (scan.ts, decision 0011) so that a count reads no column of a segment, while the relation's
 * own columns stay exactly the table's.
 */
describe('scan union relation', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('has exactly the table columns, counts every row, and reads no segment column for a count', async () => {
    t.engine = await openEngine(t.dir);
    const day = 86_400_000;
    const base = Date.UTC(2024, 0, 1);
    await t.engine.append(input([part('R', entries(7, base))]));
    await t.engine.sealAll();
    // A second segment written before a column existed: a second branch with a NULL column.
    await t.engine.append(input([part('R', [{ ts: base + day, data: { seq: 7, added: 'x' } }])]));
    await t.engine.sealAll();
    await t.engine.append(input([part('R', entries(3, base + 2 * day, 100))])); // hot rows
    const scan = await t.engine.openScan(ACCOUNT, 'R');
    assert.ok(scan);
    try {
      const all = await scan.connection.runAndReadAll(`SELECT * FROM ${scan.relation}`);
      assert.deepEqual(
        all.columnNames(),
        scan.columns.map((c) => c.name),
        'no helper column leaks into the relation',
      );
      assert.equal(all.currentRowCount, 11);
      const [[n]] = (await scan.connection.runAndReadAll(`SELECT count(*)::INTEGER FROM ${scan.relation}`)).getRows();
      assert.equal(n, 11);
      const plan = (await scan.connection.runAndReadAll(`EXPLAIN SELECT count(*) FROM ${scan.relation}`))
        .getRows()
        .map((r) => String(r[1]))
        .join('\n');
      // Segments are DuckDB files (decision 0025): each is a table scan of its attached file.
      assert.match(plan, /SEQ_SCAN/);
      assert.match(plan, /"rows"/);
      // A scan reading a column lists it in its box (Projections); no box of this plan names one.
      assert.doesNotMatch(plan, /timestamp/, 'a count decodes no timestamp column of a segment or of the hot rows');
    } finally {
      await scan.release();
    }
  });
});
