import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, it } from 'mocha';
import { StrataError } from '../../src/errors.js';
import { boundStatement, type FragmentStatement, runFragment } from '../../src/query/fragment-exec.js';

describe('query fragment execution', () => {
  let instance: DuckDBInstance;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    await c.run('CREATE TABLE t ("Host" VARCHAR, n BIGINT)');
    await c.run("INSERT INTO t VALUES ('a', 1), ('b', 2), (NULL, 3)");
    c.closeSync();
  });
  after(() => instance.closeSync());

  const statement = (sql: string, extra: Partial<FragmentStatement> = {}): FragmentStatement => ({
    sql,
    params: [],
    sourceColumns: [
      { name: 'host', type: 'string' },
      { name: 'n', type: 'long' },
      { name: 'missing', type: 'datetime' },
    ],
    columns: [{ id: 'c0', type: 'BIGINT' }],
    ...extra,
  });

  it('binds the source with case-insensitive names and nulls for missing columns', async () => {
    const c = await instance.connect();
    try {
      const s = statement(
        'WITH "s0" AS (SELECT count(*) FILTER (WHERE "missing" IS NULL AND "host" = $1) AS "c0" FROM "__strata_source__") SELECT "c0" FROM "s0"',
        { params: [{ type: 'VARCHAR', value: 'a' }] },
      );
      assert.match(boundStatement(s, '"t"', ['Host', 'n']), /"Host" AS "host".*CAST\(NULL AS TIMESTAMP\) AS "missing"/);
      const batches = [];
      for await (const b of runFragment(c, '"t"', ['Host', 'n'], s, new AbortController().signal)) batches.push(b);
      assert.deepEqual(batches, [{ rowCount: 1, columns: [[1n]] }]);
    } finally {
      c.closeSync();
    }
  });

  it('a bounded (materialized) result of many chunks comes out whole, in order, in batches', async () => {
    const c = await instance.connect();
    try {
      // 5,000 rows: three DuckDB chunks of at most 2,048, read from memory (no fetchChunk), in
      // batches of about 1,000 rows; the same rows as the streamed (unbounded) run.
      const sql = 'WITH "s0" AS (SELECT g AS "c0" FROM range(0, 5000) AS r(g) ORDER BY g) SELECT "c0" FROM "s0"';
      const run = async (extra: Partial<FragmentStatement>) => {
        const batches = [];
        for await (const b of runFragment(c, '"t"', ['Host', 'n'], statement(sql, extra), new AbortController().signal, 1000))
          batches.push(b);
        return batches;
      };
      const bounded = await run({ maxRows: 5000n });
      assert.ok(bounded.length >= 2 && bounded.slice(0, -1).every((b) => b.rowCount >= 1000));
      const values = bounded.flatMap((b) => b.columns[0] as bigint[]);
      assert.deepEqual(
        values,
        Array.from({ length: 5000 }, (_, i) => BigInt(i)),
      );
      const streamed = (await run({})).flatMap((b) => b.columns[0] as bigint[]);
      assert.deepEqual(streamed, values);
    } finally {
      c.closeSync();
    }
  });

  it('an abort interrupts a running statement', async () => {
    const c = await instance.connect();
    try {
      const s = statement(
        'WITH "s0" AS (SELECT sum(g) AS "c0" FROM range(0, 5000000000) AS r(g)) SELECT CAST("c0" AS BIGINT) AS "c0" FROM "s0"',
      );
      const controller = new AbortController();
      setTimeout(() => controller.abort(new StrataError('cancelled', 'stop')), 200);
      const started = Date.now();
      await assert.rejects(
        (async () => {
          for await (const _ of runFragment(c, '"t"', ['Host', 'n'], s, controller.signal)) {
            // no rows expected
          }
        })(),
        (e: unknown) => e instanceof StrataError && e.kind === 'cancelled',
      );
      assert.ok(Date.now() - started < 10_000);
    } finally {
      c.closeSync();
    }
  });

  it('refuses statements whose columns do not match the declared wire types', async () => {
    const c = await instance.connect();
    try {
      const s = statement('WITH "s0" AS (SELECT 1 AS "c0") SELECT "c0" FROM "s0"');
      await assert.rejects(
        (async () => {
          for await (const _ of runFragment(c, '"t"', [], s, new AbortController().signal)) {
            // none
          }
        })(),
        /Fragment columns are INTEGER, expected BIGINT/,
      );
    } finally {
      c.closeSync();
    }
  });
});
