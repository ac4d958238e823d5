import assert from 'node:assert/strict';
import {
  ACCOUNT,
  entries,
  input,
  openEngine,
  part,
  readsSegmentFile,
  scanRows,
  storageTestContext,
} from './helpers/storage-fixtures.js';

/**
 * Scans reuse what they read from the catalog while no catalog commit happened (catalog-changes.ts).
 * Each step here scans once before a catalog change (so a reusable read exists) and once after:
 * a stale read would miss the new segment (its rows left the hot table), the new column, or the
 * compacted file.
 */
describe('scan catalog reuse', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  const count = async (range: { fromMs?: number; toMs?: number } = {}) => {
    const [row] = await scanRows(t.engine!, 'R', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`, range);
    return row?.n;
  };

  it('sees every seal, schema change and compaction that committed after an earlier scan', async () => {
    t.engine = await openEngine(t.dir);
    assert.equal(await count(), undefined, 'no table yet');
    await t.engine.append(input([part('R', entries(10))]));
    assert.equal(await count(), 10, 'a created table is seen after an earlier miss');
    assert.equal(await count(), 10);

    await t.engine.sealAll();
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 1);
    assert.equal(await count(), 10, 'the sealed rows are read from the new segment');

    await t.engine.append(input([part('R', [{ ts: Date.UTC(2024, 0, 2), data: { seq: 10, added: 'new' } }])]));
    const added = await scanRows(t.engine, 'R', (r) => `SELECT added FROM ${r} WHERE added IS NOT NULL`);
    assert.deepEqual(added, [{ added: 'new' }], 'a column added after an earlier scan is there');

    await t.engine.sealAll();
    assert.equal(await count(), 11);
    const before = await t.engine.listSegments(ACCOUNT);
    assert.equal(before.length, 2);
    const merged = await t.engine.compact({ accountId: ACCOUNT, schema: 'R', segmentIds: before.map((s) => s.segmentId) });
    const scan = await t.engine.openScan(ACCOUNT, 'R');
    try {
      assert.ok(readsSegmentFile(t.engine, scan!.relation, merged), 'the relation reads the compacted segment');
      for (const s of before) assert.ok(!readsSegmentFile(t.engine, scan!.relation, s), 'and not the replaced ones');
    } finally {
      await scan!.release();
    }
    assert.equal(await count(), 11);
  });

  it('applies each scan its own time range to a reused segment list', async () => {
    t.engine = await openEngine(t.dir);
    const day = 86_400_000;
    const base = Date.UTC(2024, 0, 1);
    for (let d = 0; d < 3; d++) {
      await t.engine.append(input([part('R', entries(5, base + d * day))]));
      await t.engine.sealAll();
    }
    assert.equal(await count(), 15);
    assert.equal(await count({ fromMs: base + day }), 10);
    assert.equal(await count({ toMs: base + day }), 5);
    assert.equal(await count({ fromMs: base + day, toMs: base + 2 * day }), 5);
    const segments = await t.engine.listSegments(ACCOUNT);
    const scan = await t.engine.openScan(ACCOUNT, 'R', { fromMs: base + 2 * day });
    try {
      assert.deepEqual(
        segments.map((s) => readsSegmentFile(t.engine!, scan!.relation, s)),
        [false, false, true],
        'only the overlapping segment is listed',
      );
    } finally {
      await scan!.release();
    }
  });
});
