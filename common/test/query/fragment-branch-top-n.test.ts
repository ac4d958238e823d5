import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, it } from 'mocha';
import { type FragmentStatement, fragmentSql, runFragment } from '../../src/query/fragment-exec.js';

/**
 * A top-N fragment run over each part of a relation (fragmentSql with branches) answers what it
 * answers over the whole relation: the same key sequence, nulls where its order puts them, also
 * when a part has fewer rows than the limit or none, with filters inside the statement, and on
 * the streamed (bound parameters) path as on the materialized (inlined) one.
 */
describe('top-N fragments per scan branch', () => {
  let instance: DuckDBInstance;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    // 1,000 rows; x has nulls and ties, y breaks the ties; part p holds id % 4 = p (part 3 is tiny).
    await c.run(
      "CREATE TABLE t AS SELECT i AS id, CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 101 END AS x, (i * 104729) % 1000 AS y, 'h' || (i % 5) AS host FROM range(1000) r(i)",
    );
    c.closeSync();
  });
  after(() => instance.closeSync());

  const parts = [
    '(SELECT id, x, y, host FROM t WHERE id % 4 = 0)',
    '(SELECT id, x, y, host FROM t WHERE id % 4 = 1)',
    '(SELECT id, x, y, host FROM t WHERE id % 4 = 2)',
    '(SELECT id, x, y, host FROM t WHERE id % 4 = 3 AND id < 20)',
    '(SELECT id, x, y, host FROM t WHERE false)',
  ];
  const whole = `(SELECT * FROM t WHERE id % 4 <> 3 OR id < 20)`;
  const available = ['id', 'x', 'y', 'host'];

  function topN(where: string, keys: { col: 'x' | 'y'; desc: boolean; nullsFirst: boolean }[], limit: number, maxRows?: bigint) {
    const order = keys
      .map((k) => `"o_${k.col}" ${k.desc ? 'DESC' : 'ASC'} ${k.nullsFirst ? 'NULLS FIRST' : 'NULLS LAST'}`)
      .join(', ');
    const statement: FragmentStatement = {
      sql: `WITH "s0" AS (SELECT "id" AS "c0", "x" AS "c1", "y" AS "c2", "host" AS "c3" FROM "__strata_source__"), "s1" AS (SELECT * FROM "s0" WHERE ${where}), "s2" AS (SELECT "c0", ${keys.map((k) => `"c${k.col === 'x' ? 1 : 2}" AS "o_${k.col}"`).join(', ')} FROM "s1"), "s3" AS (SELECT * FROM "s2" ORDER BY ${order} LIMIT $2) SELECT "c0", ${keys.map((k) => `"o_${k.col}"`).join(', ')} FROM "s3" ORDER BY ${order}`,
      params: [
        { type: 'VARCHAR', value: 'h1' },
        { type: 'BIGINT', value: BigInt(limit) },
      ],
      sourceColumns: available.map((name) => ({ name, type: name === 'host' ? ('string' as const) : ('long' as const) })),
      columns: [{ id: 'c0', type: 'BIGINT' }, ...keys.map((k) => ({ id: `o_${k.col}`, type: 'BIGINT' as const }))],
      branchTopN: {
        keys: keys.map((k, i) => ({ column: i + 1, descending: k.desc, nullsFirst: k.nullsFirst })),
        limit: BigInt(limit),
      },
      ...(maxRows !== undefined ? { maxRows } : {}),
    };
    return statement;
  }

  async function rows(statement: FragmentStatement, branches?: string[]) {
    const c = await instance.connect();
    try {
      const out: unknown[][] = [];
      for await (const b of runFragment(c, whole, available, statement, new AbortController().signal, 8192, branches)) {
        for (let r = 0; r < b.rowCount; r++) out.push(b.columns.map((col) => col[r]));
      }
      return out;
    } finally {
      c.closeSync();
    }
  }

  it('gives the same key sequence as over the whole relation', async () => {
    let compared = 0;
    for (const where of ['"c3" <> $1 OR "c3" = $1', '"c3" <> $1', '"c1" IS NULL OR "c2" > 500 OR "c3" = $1'])
      for (const keys of [
        [{ col: 'x', desc: true, nullsFirst: false }],
        [{ col: 'x', desc: false, nullsFirst: true }],
        [
          { col: 'x', desc: true, nullsFirst: true },
          { col: 'y', desc: false, nullsFirst: false },
        ],
      ] as const)
        for (const limit of [1, 10, 300])
          for (const maxRows of [BigInt(limit), undefined]) {
            const s = topN(where, [...keys], limit, maxRows);
            assert.match(fragmentSql(s, whole, available, parts), /UNION ALL/);
            const expected = await rows(s);
            const actual = await rows(s, parts);
            const keyOf = (r: unknown[]) => JSON.stringify(r.slice(1), (_, v) => (typeof v === 'bigint' ? String(v) : v));
            assert.deepEqual(actual.map(keyOf), expected.map(keyOf), `${where} ${JSON.stringify(keys)} ${limit}`);
            // With both keys, rows are unique by their keys: the very same rows.
            if (keys.length === 2) assert.deepEqual(actual, expected);
            compared++;
          }
    assert.equal(compared, 54);
  });

  it('runs over the relation as written without branches, one branch, or no top-N', () => {
    const s = topN('true', [{ col: 'x', desc: true, nullsFirst: false }], 5);
    assert.doesNotMatch(fragmentSql(s, whole, available), /UNION ALL/);
    assert.doesNotMatch(fragmentSql(s, whole, available, [parts[0]!]), /UNION ALL/);
    const { branchTopN: _, ...plain } = s;
    assert.doesNotMatch(fragmentSql(plain, whole, available, parts), /UNION ALL/);
  });
});
