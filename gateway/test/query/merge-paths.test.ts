import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { ColumnBatch } from '@strata/common';
import { executePlan, type FragmentRunner, MergeDatabase, planQuery, warmQueryEngine } from '../../src/query/engine.js';

/**
 * Fragment answers reach the merge in two ways (exec/executor.ts): small ones as VALUES (typed literals, or bound
 * parameters when a value has no literal) in
 * the merge statement, larger ones through temp tables, switching when what was kept so far
 * outgrows the limit. Every size must give the same answer, computed here in TypeScript.
 */
describe('merge of fragment answers', function () {
  this.timeout(60_000);
  const catalog = {
    tables: [
      {
        name: 'T',
        columns: [
          { name: 'k', type: 'string' as const },
          { name: 'v', type: 'long' as const },
        ],
      },
    ],
  };
  const merge = new MergeDatabase();
  before(() => warmQueryEngine());
  after(() => merge.close());

  /** Partial (key, sum, count) rows of `workers` workers, `batches` batches each of `rows` rows. */
  function partials(workers: number, batches: number, rows: number) {
    const out: { k: string | null; s: bigint | null; n: bigint }[][][] = [];
    let seed = 1;
    for (let w = 0; w < workers; w++) {
      const list: { k: string | null; s: bigint | null; n: bigint }[][] = [];
      for (let b = 0; b < batches; b++) {
        list.push(
          Array.from({ length: rows }, () => {
            seed = (seed * 48271) % 2147483647;
            // Quotes exercise the literal rendering; a NUL (no SQL literal) the bound-parameter fallback.
            const k = seed % 7 === 0 ? null : seed % 11 === 0 ? `nul-\u0000-${seed % 2}` : `key-'"${seed % 5}`;
            return { k, s: seed % 3 === 0 ? null : BigInt(seed % 1000), n: BigInt((seed % 9) + 1) };
          }),
        );
      }
      out.push(list);
    }
    return out;
  }

  async function check(workers: number, batches: number, rows: number) {
    const plan = planQuery('T | summarize s = sum(v), n = count() by k', catalog);
    assert.deepEqual(
      plan.fragments[0]!.columns.map((c) => c.type),
      ['VARCHAR', 'BIGINT', 'BIGINT'],
    );
    const data = partials(workers, batches, rows);
    const runner: FragmentRunner = async function* () {
      // Interleaved like answers of several workers arriving.
      for (let b = 0; b < batches; b++) {
        for (const list of data) {
          const batch = list[b]!;
          yield {
            rowCount: batch.length,
            columns: [batch.map((r) => r.k), batch.map((r) => r.s), batch.map((r) => r.n)],
          } as ColumnBatch;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    };
    const expected = new Map<string, { s: bigint | null; n: bigint }>();
    for (const list of data)
      for (const batch of list)
        for (const r of batch) {
          const key = r.k ?? '';
          const e = expected.get(key) ?? { s: null, n: 0n };
          if (r.s !== null) e.s = (e.s ?? 0n) + r.s;
          e.n += r.n;
          expected.set(key, e);
        }
    const result = await executePlan(plan, runner, { mergeDatabase: merge });
    const got = new Map(result.results.map((r) => [String(r.k), { s: r.s, n: r.n }]));
    assert.deepEqual(
      got,
      new Map([...expected].map(([k, e]) => [k, { s: e.s === null ? null : Number(e.s), n: Number(e.n) }])),
      `${workers} workers × ${batches} batches × ${rows} rows`,
    );
  }

  it('gives the same answer inline, through temp tables, and when switching between them mid-stream', async () => {
    await check(1, 1, 0); // nothing at all
    await check(2, 1, 1); // a value per worker: inline
    await check(3, 2, 3); // 54 values: inline
    await check(3, 3, 4); // passes the limit after the first batches arrived: switch
    await check(2, 20, 100); // temp tables almost from the start
  });

  it('keeps a connection for the next query only when its query left no temp table (decision 0043)', async () => {
    const served: DuckDBConnection[] = [];
    const connect = merge.connect.bind(merge);
    merge.connect = async () => {
      const c = await connect();
      served.push(c);
      return c;
    };
    try {
      await check(2, 1, 1); // inline: kept
      await check(3, 2, 3); // inline: the same connection again
      assert.equal(served[1], served[0]);
      await check(2, 20, 100); // temp tables: served by the kept one, then closed
      assert.equal(served[2], served[0]);
      await check(2, 1, 1);
      assert.notEqual(served[3], served[2], 'a connection that held temp tables is not reused');
      await check(2, 20, 100); // and temp tables again (f0 would exist on a reused one)
      const c = await connect();
      try {
        const temp = (await c.runAndReadAll('SELECT count(*) FROM duckdb_tables() WHERE temporary')).getRows();
        assert.deepEqual(temp, [[0n]]);
      } finally {
        merge.release(c, false);
      }
    } finally {
      merge.connect = connect;
    }
  });
});
