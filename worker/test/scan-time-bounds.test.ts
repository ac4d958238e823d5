import assert from 'node:assert/strict';
import { runFragment } from '@strata/common';
import {
  ACCOUNT,
  entries,
  input,
  loadHourSegments,
  part,
  purgeToEnd,
  readsSegmentFile,
  scanRows,
  seqParityPurge,
  storageTestContext,
} from './helpers/storage-fixtures.js';

/**
 * Exact time bounds applied by the scan (decision 0018): segments wholly inside the bounds are read
 * with no time filter (so a count reads row-group row counts only), edge segments and hot rows are
 * filtered. Whatever the bounds, the relation must hold exactly the rows a plain filter over all
 * rows keeps, also after a purge rewrote segments and with hot rows next to them.
 */
describe('scan with exact time bounds', function () {
  this.timeout(300_000);
  const t = storageTestContext();
  const HOUR = 3_600_000;
  const base = Date.UTC(2024, 0, 1);
  const us = (ms: number) => ms * 1000;

  const load = () => loadHourSegments(t, base);

  const countIn = async (range: { fromMs?: number; toMs?: number; fromUs?: number; toUs?: number }) => {
    const [row] = await scanRows(t.engine!, 'T', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`, range);
    return row?.n as number;
  };

  /** The same rows counted by a plain filter over an unbounded scan. */
  const expected = async (fromUs?: number, toUs?: number) => {
    const conds = [
      ...(fromUs !== undefined ? [`"timestamp" >= make_timestamp(${fromUs}::BIGINT)`] : []),
      ...(toUs !== undefined ? [`"timestamp" <= make_timestamp(${toUs}::BIGINT)`] : []),
    ];
    const where = conds.length > 0 ? ` WHERE ${conds.join(' AND ')}` : '';
    const [row] = await scanRows(t.engine!, 'T', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}${where}`);
    return row?.n as number;
  };

  /** Bounds at, just before and just after row times, segment edges and the hot rows. */
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

  it('holds exactly the rows inside the bounds, at every edge, before and after a purge', async () => {
    const engine = await load();
    const check = async (when: string) => {
      const bounds = boundaries();
      let compared = 0;
      // Every from bound with every third to bound (and open ends): each edge case on both sides.
      for (const fromUs of bounds)
        for (const [k, toUs] of bounds.entries()) {
          if (k % 3 !== 0 && k !== bounds.length - 1) continue;
          if (fromUs !== undefined && toUs !== undefined && toUs < fromUs - 1) continue;
          const range = { ...(fromUs !== undefined ? { fromUs } : {}), ...(toUs !== undefined ? { toUs } : {}) };
          assert.equal(await countIn(range), await expected(fromUs, toUs), `${when}: ${JSON.stringify(range)}`);
          compared++;
        }
      // And every to bound with every third from bound.
      for (const toUs of bounds)
        for (const [k, fromUs] of bounds.entries()) {
          if (k % 3 !== 1) continue;
          if (fromUs !== undefined && toUs !== undefined && toUs < fromUs - 1) continue;
          const range = { ...(fromUs !== undefined ? { fromUs } : {}), ...(toUs !== undefined ? { toUs } : {}) };
          assert.equal(await countIn(range), await expected(fromUs, toUs), `${when}: ${JSON.stringify(range)}`);
          compared++;
        }
      assert.ok(compared > 100);
    };
    await check('before the purge');
    // Rewrites every segment without its even rows (and the hot rows): min/max stay valid bounds.
    await purgeToEnd(engine, 'T', seqParityPurge(0));
    assert.equal(await expected(), 22, 'half of the 45 rows are left (seq 0…44, odd ones)');
    await check('after the purge');
  });

  it('gives the parts of its relation as branches: together the same rows, a top-N over each agrees', async () => {
    const engine = await load();
    // A later segment written with one more column reads as its own segment group.
    await engine.append(input([part('T', [{ ts: base + 5 * HOUR, data: { seq: 99, extra: 'x' } }])]));
    await engine.sealAll();
    await engine.append(input([part('T', entries(3, base + 6 * HOUR - 45_000, 45))]));
    const range = { fromUs: us(base + 5000), toUs: us(base + 6 * HOUR + 1000) };
    const scan = (await engine.openScan(ACCOUNT, 'T', range))!;
    try {
      // Every segment overlaps the range; a DuckDB segment file is a branch of its own (decision 0025).
      assert.equal(scan.branches.length, 1 + (await engine.listSegments(ACCOUNT)).length, 'hot rows, then each segment');
      const ids = async (sql: string) =>
        (await scan.connection.runAndReadAll(sql))
          .getRows()
          .map((r) => String(r[0]))
          .sort();
      const union = (await Promise.all(scan.branches.map((b) => ids(`SELECT "__INFLOW_ID" FROM ${b}`)))).flat().sort();
      assert.deepEqual(union, await ids(`SELECT "__INFLOW_ID" FROM ${scan.relation}`));
      assert.equal(union.length, 5 + 10 + 10 + 10 + (5 + 1) + 2, 'the first hot rows were sealed with the newer column');
      const statement = {
        sql: 'WITH "s0" AS (SELECT "seq" AS "c0", "latency" AS "c1" FROM "__strata_source__"), "s1" AS (SELECT "c0", "c1" AS "o0" FROM "s0" ORDER BY "o0" DESC NULLS FIRST LIMIT 7) SELECT "c0", "o0" FROM "s1" ORDER BY "o0" DESC NULLS FIRST',
        params: [],
        sourceColumns: [
          { name: 'seq', type: 'long' as const },
          { name: 'latency', type: 'real' as const },
        ],
        columns: [
          { id: 'c0', type: 'BIGINT' as const },
          { id: 'o0', type: 'DOUBLE' as const },
        ],
        maxRows: 7n,
        branchTopN: { keys: [{ column: 1, descending: true, nullsFirst: true }], limit: 7n },
      };
      const run = async (branches?: string[]) => {
        const out: unknown[] = [];
        for await (const b of runFragment(
          scan.connection,
          scan.relation,
          scan.columns.map((c) => c.name),
          statement,
          new AbortController().signal,
          8192,
          branches,
        ))
          out.push(...b.columns[0]!);
        return out;
      };
      const whole = await run();
      assert.deepEqual(await run(scan.branches), whole);
      assert.deepEqual(whole.slice(0, 1), [99n], 'the row without latency (null first)');
    } finally {
      await scan.release();
    }
  });

  it('reads segments wholly inside the bounds without a time filter, and narrows the ms range', async () => {
    const engine = await load();
    const segments = await engine.listSegments(ACCOUNT);
    assert.equal(segments.length, 4);
    // From the middle of segment 0 to the middle of segment 3: 1 and 2 are inside.
    const range = { fromUs: us(base + 5000), toUs: us(base + 3 * HOUR + 4000) };
    const scan = await engine.openScan(ACCOUNT, 'T', range);
    try {
      const branches = scan!.relation.split(' UNION ALL ');
      const filtered = segments.map((s) => {
        const [branch, ...more] = branches.filter((b) => readsSegmentFile(engine, b, s));
        assert.ok(branch && more.length === 0, `each segment is read by one branch: ${scan!.relation}`);
        return branch.includes(' WHERE ');
      });
      assert.deepEqual(filtered, [true, false, false, true], 'only the edge segments are filtered');
    } finally {
      await scan!.release();
    }
    assert.equal(await countIn(range), 5 + 10 + 10 + 5);
    // The tighter of the ms range and the exact bounds applies.
    assert.equal(await countIn({ ...range, fromMs: base + HOUR }), 10 + 10 + 5);
    assert.equal(await countIn({ ...range, toMs: base + 3 * HOUR + 1 }), 5 + 10 + 10 + 1);
  });
});
