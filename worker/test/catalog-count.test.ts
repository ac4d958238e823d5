import assert from 'node:assert/strict';
import { type FragmentStatement, isBareCount, runFragment } from '@strata/common';
import { countWithCatalog } from '../src/query/catalog-count.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import {
  ACCOUNT,
  entries,
  input,
  loadHourSegments,
  part,
  purgeToEnd,
  readsSegmentFile,
  seqParityPurge,
  storageTestContext,
} from './helpers/storage-fixtures.js';

/**
 * A bare count (`T | count`, time conditions left to the scan) answered from the catalog's row
 * counts of the segments wholly inside the scan's range, counting only the hot rows and the edge
 * segments (decision 0025). For bounds at, just before and just after row times and segment
 * edges, the answer must equal the count of the whole relation and a plain filter over every row:
 * at first, after a purge rewrote every segment, after a compaction, and with new hot rows.
 */
describe('bare count from catalog row counts', function () {
  this.timeout(300_000);
  const t = storageTestContext();
  const HOUR = 3_600_000;
  const base = Date.UTC(2024, 0, 1);
  const us = (ms: number) => ms * 1000;

  /** The fragment the planner writes for `T | count` (gateway/test/query/bare-count-shape.test.ts). */
  const COUNT: FragmentStatement = {
    sql: 'WITH "s0" AS (SELECT NULL AS "__none" FROM "__strata_source__"), "s1" AS (SELECT count(*) AS "c3" FROM "s0") SELECT "c3" AS "c3" FROM "s1"',
    params: [],
    sourceColumns: [],
    columns: [{ id: 'c3', type: 'BIGINT' }],
  };

  // The whole query on one worker: the merge's sum over the one count and the result limit.
  const SINGLE: FragmentStatement = {
    sql: 'WITH "s0" AS (SELECT NULL AS "__none" FROM "__strata_source__"), "s1" AS (SELECT count(*) AS "c2" FROM "s0"), "s2" AS (SELECT CAST(coalesce(sum("c2"), 0) AS BIGINT) AS "c3" FROM "s1"), "s3" AS (SELECT "c3" AS "c4" FROM "s2"), "s4" AS (SELECT * FROM "s3" LIMIT $1) SELECT "c4" AS "c4" FROM "s4"',
    params: [{ type: 'BIGINT', value: 500_000n }],
    sourceColumns: [],
    columns: [{ id: 'c4', type: 'BIGINT' }],
  };

  const load = () => loadHourSegments(t, base);

  type Range = { fromMs?: number; toMs?: number; fromUs?: number; toUs?: number };

  /** The count three ways on one snapshot: from the catalog, over the whole relation, by a plain filter. */
  async function counts(
    engine: StorageEngine,
    range: Range,
  ): Promise<{ catalog: bigint; single: bigint; whole: bigint; catalogRows: number }> {
    const scan = (await engine.openScan(ACCOUNT, 'T', range))!;
    try {
      const available = scan.columns.map((c) => c.name);
      const signal = new AbortController().signal;
      const one = async (batches: AsyncIterable<{ rowCount: number; columns: unknown[][] }>) => {
        const values: unknown[] = [];
        for await (const b of batches) values.push(...b.columns[0]!);
        assert.equal(values.length, 1);
        return values[0] as bigint;
      };
      return {
        catalog: await one(countWithCatalog(scan.connection, scan.counted, available, COUNT, signal)),
        single: await one(countWithCatalog(scan.connection, scan.counted, available, SINGLE, signal)),
        whole: await one(runFragment(scan.connection, scan.relation, available, COUNT, signal)),
        catalogRows: scan.counted.catalogRows,
      };
    } finally {
      await scan.release();
    }
  }

  async function filtered(engine: StorageEngine, fromUs?: number, toUs?: number): Promise<bigint> {
    const scan = (await engine.openScan(ACCOUNT, 'T'))!;
    try {
      const conds = [
        ...(fromUs !== undefined ? [`"timestamp" >= make_timestamp(${fromUs}::BIGINT)`] : []),
        ...(toUs !== undefined ? [`"timestamp" <= make_timestamp(${toUs}::BIGINT)`] : []),
      ];
      const where = conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : '';
      const rows = (await scan.connection.runAndReadAll(`SELECT count(*) AS n FROM ${scan.relation}${where}`)).getRows();
      return rows[0]![0] as bigint;
    } finally {
      await scan.release();
    }
  }

  function boundaries(): (number | undefined)[] {
    const out: (number | undefined)[] = [undefined];
    for (let s = 0; s <= 4; s++)
      for (const i of s === 4 ? [0, 4] : [0, 9]) {
        const at = us(base + s * HOUR + i * 1000);
        out.push(at - 1, at, at + 1);
      }
    out.push(us(base - HOUR), us(base + 10 * HOUR));
    return out;
  }

  async function checkAll(engine: StorageEngine, when: string): Promise<void> {
    const bounds = boundaries();
    let fromCatalog = 0;
    let compared = 0;
    for (const [i, fromUs] of bounds.entries())
      for (const [k, toUs] of bounds.entries()) {
        if ((i + k) % 3 !== 0 && k !== bounds.length - 1) continue;
        if (fromUs !== undefined && toUs !== undefined && toUs < fromUs - 1) continue;
        const range = { ...(fromUs !== undefined ? { fromUs } : {}), ...(toUs !== undefined ? { toUs } : {}) };
        const c = await counts(engine, range);
        const plain = await filtered(engine, fromUs, toUs);
        assert.equal(c.catalog, plain, `${when}: ${JSON.stringify(range)} from the catalog`);
        assert.equal(c.whole, plain, `${when}: ${JSON.stringify(range)} over the relation`);
        assert.equal(c.single, plain, `${when}: ${JSON.stringify(range)} as the whole query on one worker`);
        if (c.catalogRows > 0) fromCatalog++;
        compared++;
      }
    // The millisecond range narrows like the exact bounds.
    for (const range of [
      { fromMs: base + HOUR },
      { toMs: base + 2 * HOUR },
      { fromMs: base + HOUR + 5000, toMs: base + 3 * HOUR },
    ]) {
      const c = await counts(engine, range);
      const plain = await filtered(
        engine,
        range.fromMs === undefined ? undefined : us(range.fromMs),
        range.toMs === undefined ? undefined : us(range.toMs) - 1,
      );
      assert.equal(c.catalog, plain, `${when}: ${JSON.stringify(range)}`);
    }
    assert.ok(compared > 60, `${when}: ${compared} ranges`);
    assert.ok(fromCatalog > 10, `${when}: the catalog answered for ${fromCatalog} ranges`);
  }

  it('equals the scanned count at every edge: at first, after a purge, after a compaction, with new hot rows', async () => {
    const engine = await load();
    await checkAll(engine, 'at first');

    // A range cutting segments 0 and 3: 1 and 2 are counted from the catalog, not read.
    const range = { fromUs: us(base + 5000), toUs: us(base + 3 * HOUR + 4000) };
    const scan = (await engine.openScan(ACCOUNT, 'T', range))!;
    try {
      const segments = await engine.listSegments(ACCOUNT);
      assert.equal(scan.counted.catalogRows, 20);
      assert.deepEqual(
        segments.map((s) => readsSegmentFile(engine, scan.counted.rest, s)),
        [true, false, false, true],
        'only the edge segments are counted by reading them',
      );
    } finally {
      await scan.release();
    }

    // A purge rewrites every segment without its even rows (and deletes the even hot rows).
    await purgeToEnd(engine, 'T', seqParityPurge(0));
    assert.equal((await counts(engine, {})).catalog, 22n);
    await checkAll(engine, 'after the purge');

    // Segments 1 and 2 merged into one; then the hot rows sealed and new hot rows written.
    const [, s1, s2] = await engine.listSegments(ACCOUNT);
    await engine.compact({ accountId: ACCOUNT, schema: 'T', segmentIds: [s1!.segmentId, s2!.segmentId] });
    await checkAll(engine, 'after the compaction');
    await engine.sealAll();
    await engine.append(input([part('T', entries(3, base + 4 * HOUR - 45_000 + 5000, 45))]));
    await checkAll(engine, 'with new hot rows');
  });

  it('is recognised only in the exact shape of a count of the source', () => {
    assert.ok(isBareCount(COUNT));
    assert.ok(isBareCount(SINGLE));
    assert.equal(isBareCount({ ...SINGLE, params: [{ type: 'BIGINT', value: 0n }] }), false, 'a limit of 0 answers no row');
    assert.equal(isBareCount({ ...SINGLE, params: [] }), false);
    assert.equal(isBareCount({ ...SINGLE, sql: SINGLE.sql.replace('sum("c2")', 'sum("c9")') }), false);
    assert.ok(isBareCount({ ...COUNT, sql: COUNT.sql.replaceAll('"c3"', '"c12"'), columns: [{ id: 'c12', type: 'BIGINT' }] }));
    for (const [why, s] of [
      ['a condition', { ...COUNT, sql: COUNT.sql.replace('FROM "s0")', 'FROM "s0" WHERE 1 = 0)') }],
      ['a parameter', { ...COUNT, params: [{ type: 'BIGINT' as const, value: 1n }] }],
      ['a count of something else', { ...COUNT, sql: COUNT.sql.replace('count(*)', 'count(DISTINCT 1)') }],
      ['another column type', { ...COUNT, columns: [{ id: 'c3', type: 'DOUBLE' as const }] }],
      ['two columns', { ...COUNT, columns: [...COUNT.columns, { id: 'c4', type: 'BIGINT' as const }] }],
      ['a limit after it', { ...COUNT, sql: `${COUNT.sql} LIMIT 0` }],
      ['another source', { ...COUNT, sql: COUNT.sql.replace('"__strata_source__"', '"other"') }],
      ['mismatched names', { ...COUNT, sql: COUNT.sql.replace('SELECT "c3" AS "c3"', 'SELECT "c4" AS "c3"') }],
      ['a top-N', { ...COUNT, branchTopN: { keys: [{ column: 0, descending: true, nullsFirst: false }], limit: 1n } }],
    ] as const)
      assert.equal(isBareCount(s as FragmentStatement), false, why);
  });
});
