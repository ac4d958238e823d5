import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, it } from 'mocha';
import { branchGroups, type FragmentStatement, runFragment } from '../../src/query/fragment-exec.js';

/**
 * A take without an order (FragmentStatement.branchLimit) runs over groups of scan branches until
 * it has its rows (decision 0033): it returns exactly the limit where the rows hold that many,
 * every row passing the statement's filter and none twice; all there are where fewer pass; and it
 * does not run over the branches after the group that completed it (a later branch that fails
 * when read proves it), on the materialized and the streamed path alike.
 */
describe('take fragments over scan branches', () => {
  let instance: DuckDBInstance;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    await c.run("CREATE TABLE t AS SELECT i AS id, 'm' || (i % 10) AS msg FROM range(10000) r(i)");
    c.closeSync();
  });
  after(() => instance.closeSync());

  const available = ['id', 'msg'];
  // Eight branches of 1,000 rows each, the hot rows first (empty here), then a branch that raises
  // an error when it is read.
  const part = (p: number) => `(SELECT id, msg FROM t WHERE id >= ${p * 1000} AND id < ${(p + 1) * 1000})`;
  const FAILS = `(SELECT id, CASE WHEN id >= 0 THEN error('read past the take') ELSE msg END AS msg FROM t)`;

  function take(where: string, limit: number, maxRows?: bigint): FragmentStatement {
    return {
      sql: `WITH "s0" AS (SELECT "id" AS "c0", "msg" AS "c1" FROM "__strata_source__"), "s1" AS (SELECT * FROM "s0" WHERE ${where}), "s2" AS (SELECT * FROM "s1" LIMIT $2) SELECT "c0", "c1" FROM "s2"`,
      params: [
        { type: 'VARCHAR', value: 'm3' },
        { type: 'BIGINT', value: BigInt(limit) },
      ],
      sourceColumns: [
        { name: 'id', type: 'long' },
        { name: 'msg', type: 'string' },
      ],
      columns: [
        { id: 'c0', type: 'BIGINT' },
        { id: 'c1', type: 'VARCHAR' },
      ],
      branchLimit: BigInt(limit),
      ...(maxRows !== undefined ? { maxRows } : {}),
    };
  }

  async function rows(statement: FragmentStatement, branches: string[]) {
    const c = await instance.connect();
    try {
      const out: [bigint, string][] = [];
      const whole = `(${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
      for await (const b of runFragment(c, whole, available, statement, new AbortController().signal, 8192, branches)) {
        for (let r = 0; r < b.rowCount; r++) out.push([b.columns[0]![r] as bigint, b.columns[1]![r] as string]);
      }
      return out;
    } finally {
      c.closeSync();
    }
  }

  it('groups the branches two, two, four, eight, … in order', () => {
    const u = (...bs: string[]) => `(${bs.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
    assert.deepEqual(branchGroups(['a']), ['a']);
    assert.deepEqual(branchGroups('abcdefghijk'.split('')), [u('a', 'b'), u('c', 'd'), u('e', 'f', 'g', 'h'), u('i', 'j', 'k')]);
  });

  for (const [path, maxRows] of [
    ['materialized', 50n],
    ['streamed', undefined],
  ] as const) {
    it(`returns the limit, rows passing the filter, and stops before later branches (${path})`, async () => {
      const empty = '(SELECT id, msg FROM t WHERE false)';
      // 100 "m3" rows per part: the first two groups (empty hot rows and part 0; parts 1 and 2)
      // hold 300, the third group ends with the failing branch.
      const branches = [empty, part(0), part(1), part(2), part(3), part(4), part(5), FAILS];
      for (const limit of [1, 50, 150, 300]) {
        const got = await rows(take('"c1" = $1', limit, maxRows), branches);
        assert.equal(got.length, limit, `take ${limit}`);
        assert.ok(
          got.every(([, m]) => m === 'm3'),
          'every row passes the filter',
        );
        assert.equal(new Set(got.map(([id]) => id)).size, limit, 'no row twice');
      }
      // Fewer rows pass than the limit: every group is read, the failing branch too.
      await assert.rejects(rows(take('"c1" = $1', 10_000, maxRows), branches), /read past the take/);
      const all = await rows(take('"c1" = $1', 10_000, maxRows), branches.slice(0, -1));
      assert.equal(all.length, 600);
    });
  }

  it('runs over the whole relation when there is one branch or no limit', async () => {
    const one = await rows(take('"c1" = $1', 5), [part(0)]);
    assert.equal(one.length, 5);
    const { branchLimit: _, ...plain } = take('"c1" = $1', 5);
    await assert.rejects(
      rows(plain, [part(0), FAILS]),
      /read past the take/,
      'without branchLimit: one statement over the union',
    );
  });
});
