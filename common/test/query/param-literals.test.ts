import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { before, describe, it } from 'mocha';
import type { WireType } from '../../src/query/column-batch.js';
import { bindValues, type FragmentStatement, type ParamValue, runFragment } from '../../src/query/fragment-exec.js';
import { inlineParams, paramLiteral } from '../../src/query/param-literals.js';
import { memoryDuckDB } from '../../src/testing/index.js';

/** What DuckDB makes of one value: the literal and the bound parameter must give the same. */
async function viaLiteral(c: DuckDBConnection, p: ParamValue): Promise<unknown[]> {
  const literal = paramLiteral(p);
  assert.ok(literal !== undefined, `no literal for ${String(p.value)}`);
  const r = await c.runAndReadAll(`SELECT ${literal} AS v, typeof(${literal}) AS t`);
  return r.getRows()[0] as unknown[];
}

async function viaParameter(c: DuckDBConnection, p: ParamValue): Promise<unknown[]> {
  const { values, types } = bindValues([p]);
  const r = await c.runAndReadAll('SELECT $1 AS v, typeof($1) AS t', values, types);
  return r.getRows()[0] as unknown[];
}

function sameValue(a: unknown[], b: unknown[]): boolean {
  const [va, ta] = a;
  const [vb, tb] = b;
  // A bound null reports type "NULL"; the literal keeps its declared type. Both are null.
  if (va === null || vb === null) return va === vb;
  if (ta !== tb) return false;
  if (typeof va === 'number' && typeof vb === 'number') return Object.is(va, vb);
  return String(va) === String(vb);
}

describe('parameter values as SQL literals', () => {
  const db = memoryDuckDB();

  const cases: ParamValue[] = [
    { type: 'VARCHAR', value: '' },
    { type: 'VARCHAR', value: "it's" },
    { type: 'VARCHAR', value: "'; DROP TABLE t; --" },
    { type: 'VARCHAR', value: "\\' OR 1=1 --" },
    { type: 'VARCHAR', value: 'E\'\\x00\' $1 "quoted" \n\t' },
    { type: 'VARCHAR', value: 'héllo wörld 🚀 日本' },
    { type: 'BIGINT', value: 0n },
    { type: 'BIGINT', value: -42n },
    { type: 'BIGINT', value: 9223372036854775807n },
    { type: 'BIGINT', value: -9223372036854775808n },
    { type: 'DOUBLE', value: 0.1 + 0.2 },
    { type: 'DOUBLE', value: -0 },
    { type: 'DOUBLE', value: Number.NaN },
    { type: 'DOUBLE', value: Number.POSITIVE_INFINITY },
    { type: 'DOUBLE', value: Number.NEGATIVE_INFINITY },
    { type: 'DOUBLE', value: Number.MAX_VALUE },
    { type: 'DOUBLE', value: 5e-324 },
    { type: 'DOUBLE', value: 1e21 },
    { type: 'BOOLEAN', value: true },
    { type: 'BOOLEAN', value: false },
    { type: 'TIMESTAMP', value: 1_795_216_393_755_123n },
    { type: 'TIMESTAMP', value: -62_135_596_800_000_000n },
    ...(['VARCHAR', 'BIGINT', 'DOUBLE', 'BOOLEAN', 'TIMESTAMP'] as WireType[]).map((type) => ({ type, value: null })),
  ];

  it('every case means in DuckDB exactly what the bound parameter means (value and type)', async () => {
    for (const p of cases) {
      const lit = await viaLiteral(db.conn, p);
      const par = await viaParameter(db.conn, p);
      assert.ok(sameValue(lit, par), `${p.type} ${String(p.value)}: literal ${String(lit)} vs parameter ${String(par)}`);
    }
  });

  it('random strings and doubles round-trip like parameters (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), fc.double(), async (text, real) => {
        const s: ParamValue = { type: 'VARCHAR', value: text };
        if (paramLiteral(s) !== undefined) assert.ok(sameValue(await viaLiteral(db.conn, s), await viaParameter(db.conn, s)));
        const d: ParamValue = { type: 'DOUBLE', value: real };
        assert.ok(sameValue(await viaLiteral(db.conn, d), await viaParameter(db.conn, d)));
      }),
      { numRuns: 300 },
    );
  });

  it('gives no literal for text DuckDB cannot hold as written (NUL, lone surrogates) or mistyped values', () => {
    assert.equal(paramLiteral({ type: 'VARCHAR', value: 'a\u0000b' }), undefined);
    assert.equal(paramLiteral({ type: 'VARCHAR', value: 'a\ud800b' }), undefined);
    assert.equal(paramLiteral({ type: 'VARCHAR', value: 'a\udc00' }), undefined);
    assert.notEqual(paramLiteral({ type: 'VARCHAR', value: '\ud83d\ude80' }), undefined);
    assert.equal(paramLiteral({ type: 'BIGINT', value: '1; SELECT 2' }), undefined);
    assert.equal(paramLiteral({ type: 'TIMESTAMP', value: 1.5 }), undefined);
    assert.equal(paramLiteral({ type: 'DOUBLE', value: '1' }), undefined);
    assert.equal(paramLiteral({ type: 'BOOLEAN', value: 'true' }), undefined);
  });

  it('replaces placeholders outside quotes only, and refuses missing parameters', () => {
    const params: ParamValue[] = [{ type: 'BIGINT', value: 7n }];
    assert.equal(
      inlineParams(`SELECT '$1', "$1x", 'it''s $1', $1 AS "a""$1"`, params),
      `SELECT '$1', "$1x", 'it''s $1', CAST(7 AS BIGINT) AS "a""$1"`,
    );
    assert.equal(inlineParams('SELECT $2', params), undefined);
    assert.equal(inlineParams("SELECT 'open", params), undefined);
    assert.equal(inlineParams('SELECT $1', [{ type: 'VARCHAR', value: 'x\u0000' }]), undefined);
  });

  describe('runFragment', () => {
    before(async () => {
      await db.conn.run('CREATE TABLE t ("Host" VARCHAR, n BIGINT)');
      await db.conn.run("INSERT INTO t VALUES ('a''b', 1), ('b', 2), (NULL, 3)");
      // SQL text cannot hold a NUL: that row goes in as a parameter.
      await db.conn.run('INSERT INTO t VALUES ($1, 4)', ['x\u0000y']);
    });

    const statement = (host: string, maxRows?: bigint): FragmentStatement => ({
      sql: 'WITH "s0" AS (SELECT sum("n") AS "c0" FROM "__strata_source__" WHERE "host" = $1 OR "host" = \'$1\') SELECT CAST("c0" AS BIGINT) AS "c0" FROM "s0" LIMIT $2',
      params: [
        { type: 'VARCHAR', value: host },
        { type: 'BIGINT', value: 10n },
      ],
      sourceColumns: [
        { name: 'host', type: 'string' },
        { name: 'n', type: 'long' },
      ],
      columns: [{ id: 'c0', type: 'BIGINT' }],
      ...(maxRows !== undefined ? { maxRows } : {}),
    });

    async function run(s: FragmentStatement) {
      const out = [];
      for await (const b of runFragment(db.conn, '"t"', ['Host', 'n'], s, new AbortController().signal)) out.push(b);
      return out;
    }

    it('answers the same materialized with literals, materialized with parameters and streamed', async () => {
      for (const host of ["a'b", 'b', 'x\u0000y', 'none']) {
        const streamed = await run(statement(host));
        const bounded = await run(statement(host, 10n));
        const large = await run(statement(host, 10_000_000n));
        assert.deepEqual(bounded, streamed, host);
        assert.deepEqual(large, streamed, host);
      }
      assert.deepEqual(await run(statement("a'b", 10n)), [{ rowCount: 1, columns: [[1n]] }]);
      assert.deepEqual(await run(statement('x\u0000y', 10n)), [{ rowCount: 1, columns: [[4n]] }]);
    });
  });
});
