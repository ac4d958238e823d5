import assert from 'node:assert/strict';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { type FragmentStatement, runFragment } from '../../src/query/fragment-exec.js';
import { runWithThreshold, thresholdPlan } from '../../src/query/top-n-threshold.js';
import { memoryDuckDB } from '../../src/testing/index.js';

/**
 * A top-N through a threshold on its first key (decision 0038) answers what a plain sort of every
 * row answers: random parts (segment tables read whole, a filtered "hot" part) with nulls, ties at
 * the cut, all-equal keys, empty parts; one or two keys, ascending and descending, nulls first and
 * last; filters in the statement that the guess does not know about (so the guess fails and the
 * statement falls back); limits below, at and above the row count. Keys are compared as sequences
 * (ties make the rows open), rows exactly when a unique sequence number is the last key.
 */
describe('top-N through a threshold on the first key (decision 0038)', () => {
  const db = memoryDuckDB();

  type Kind = 'BIGINT' | 'DOUBLE' | 'TIMESTAMP';
  interface Case {
    kind: Kind;
    parts: (number | null)[][];
    hot: (number | null)[];
    limit: number;
    desc: boolean;
    nullsFirst: boolean;
    second: boolean;
    filter: boolean;
  }

  const value = fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: fc.integer({ min: -5, max: 12 }) });
  const caseArb: fc.Arbitrary<Case> = fc.record({
    kind: fc.constantFrom<Kind>('BIGINT', 'DOUBLE', 'TIMESTAMP'),
    parts: fc.array(fc.oneof(fc.array(value, { maxLength: 40 }), fc.array(fc.constant(7), { maxLength: 30 })), {
      minLength: 4,
      maxLength: 8,
    }),
    hot: fc.array(value, { maxLength: 15 }),
    limit: fc.integer({ min: 1, max: 60 }),
    desc: fc.boolean(),
    nullsFirst: fc.boolean(),
    second: fc.boolean(),
    filter: fc.boolean(),
  });

  const literal = (kind: Kind, v: number | null) =>
    v === null
      ? `CAST(NULL AS ${kind})`
      : kind === 'TIMESTAMP'
        ? `make_timestamp(${v * 1_000_000}::BIGINT)`
        : kind === 'DOUBLE'
          ? `${v / 4}::DOUBLE`
          : `${v}::BIGINT`;

  /** Tables p0… (the whole parts) and hot; seq numbers every row uniquely. */
  async function load(c: Case): Promise<{ branches: string[]; whole: string[] }> {
    let seq = 0;
    const rowsOf = (values: (number | null)[]) =>
      values.map((v) => `(${literal(c.kind, v)}, ${seq++}::BIGINT, ${(seq * 7) % 5}::BIGINT)`);
    const tables = [...c.parts.map((_, i) => `p${i}`), 'hot'];
    for (const [i, values] of [...c.parts, c.hot].entries()) {
      const name = tables[i] as string;
      await db.conn.run(`CREATE OR REPLACE TABLE ${name} (k ${c.kind}, seq BIGINT, m BIGINT)`);
      if (values.length > 0) await db.conn.run(`INSERT INTO ${name} VALUES ${rowsOf(values).join(', ')}`);
    }
    const whole = c.parts.map((_, i) => `(SELECT k, seq, m FROM p${i})`);
    // The hot part filtered like a scan's edge part (every row passes; the filter is what matters).
    return { branches: ['(SELECT k, seq, m FROM hot WHERE seq >= 0)', ...whole], whole };
  }

  function statementOf(c: Case): FragmentStatement {
    const order = [
      `"o_k" ${c.desc ? 'DESC' : 'ASC'} NULLS ${c.nullsFirst ? 'FIRST' : 'LAST'}`,
      ...(c.second ? ['"o_m" DESC NULLS LAST'] : []),
      '"o_seq" ASC NULLS LAST',
    ].join(', ');
    return {
      sql: `WITH "s0" AS (SELECT "k" AS "c0", "seq" AS "c1", "m" AS "c2" FROM "__strata_source__"), "s1" AS (SELECT * FROM "s0" WHERE ${c.filter ? '"c2" <> $1' : '"c2" <> $1 OR "c2" = $1'}), "s2" AS (SELECT "c1" AS "id", "c0" AS "o_k", "c2" AS "o_m", "c1" AS "o_seq" FROM "s1" ORDER BY ${order} LIMIT ${c.limit}) SELECT "id", "o_k", "o_m", "o_seq" FROM "s2" ORDER BY ${order}`,
      params: [{ type: 'BIGINT', value: 2n }],
      sourceColumns: [
        { name: 'k', type: c.kind === 'BIGINT' ? 'long' : c.kind === 'DOUBLE' ? 'real' : 'datetime' },
        { name: 'seq', type: 'long' },
        { name: 'm', type: 'long' },
      ],
      columns: [
        { id: 'id', type: 'BIGINT' },
        { id: 'o_k', type: c.kind },
        { id: 'o_m', type: 'BIGINT' },
        { id: 'o_seq', type: 'BIGINT' },
      ],
      maxRows: BigInt(c.limit),
      branchTopN: {
        keys: [
          { column: 1, descending: c.desc, nullsFirst: c.nullsFirst },
          ...(c.second ? [{ column: 2, descending: true, nullsFirst: false }] : []),
          { column: 3, descending: false, nullsFirst: false },
        ],
        limit: BigInt(c.limit),
        source: 'K', // matched without regard to case, as a scan's columns are
      },
    };
  }

  async function collect(batches: AsyncIterable<{ rowCount: number; columns: unknown[][] }>): Promise<unknown[][]> {
    const out: unknown[][] = [];
    for await (const b of batches) for (let r = 0; r < b.rowCount; r++) out.push(b.columns.map((col) => col[r]));
    return out;
  }

  /** The answer of a plain sort over every row (no parts, no threshold). */
  async function plain(statement: FragmentStatement, branches: string[]) {
    const union = `(${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
    const { branchTopN: _, ...bare } = statement;
    return collect(runFragment(db.conn, union, ['k', 'seq', 'm'], bare, new AbortController().signal));
  }

  it('answers as a plain sort of every row, exactly (a unique last key), for random parts', async () => {
    let answeredByThreshold = 0;
    let fellBack = 0;
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const { branches, whole } = await load(c);
        const statement = statementOf(c);
        const union = `(${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
        const expected = await plain(statement, branches);
        const got = await collect(
          runFragment(db.conn, union, ['k', 'seq', 'm'], statement, new AbortController().signal, 8192, branches, whole),
        );
        assert.deepEqual(got, expected);
        // Which way it went: the threshold's own answer must be the same when it gives one.
        const plan = thresholdPlan(statement, ['k', 'seq', 'm'], { branches, whole });
        assert.ok(plan, 'a sourced top-N over whole parts has a threshold plan');
        const direct = await runWithThreshold(db.conn, plan, { branches, whole }, (r) =>
          runFragment(db.conn, r, ['k', 'seq', 'm'], { ...statement }, new AbortController().signal),
        );
        if (direct === undefined) fellBack++;
        else {
          answeredByThreshold++;
          assert.deepEqual(
            await collect(
              (async function* () {
                yield* direct;
              })(),
            ),
            expected,
          );
        }
      }),
      { numRuns: 300, seed: 38 },
    );
    // Both ways were taken: the property is not only about the fallback.
    assert.ok(answeredByThreshold > 50, `threshold answered ${answeredByThreshold} cases`);
    assert.ok(fellBack > 10, `fallback taken ${fellBack} times`);
  });

  it('answers without a threshold when it cannot cut: no source, no whole part, a key type it does not know', async () => {
    const c: Case = {
      kind: 'BIGINT',
      parts: [[1, 2, 3], [4, 5], [0], [1]],
      hot: [9],
      limit: 2,
      desc: true,
      nullsFirst: false,
      second: false,
      filter: false,
    };
    const { branches, whole } = await load(c);
    const statement = statementOf(c);
    const { source: _, ...unsourced } = statement.branchTopN!;
    assert.equal(thresholdPlan({ ...statement, branchTopN: unsourced }, ['k', 'seq', 'm'], { branches, whole }), undefined);
    assert.equal(thresholdPlan(statement, ['k', 'seq', 'm'], { branches, whole: [] }), undefined);
    assert.equal(
      thresholdPlan(statement, ['k', 'seq', 'm'], { branches, whole: whole.slice(0, 3) }),
      undefined,
      'fewer than 4 whole parts',
    );
    assert.ok(thresholdPlan(statement, ['k', 'seq', 'm'], { branches, whole }));
    assert.equal(thresholdPlan(statement, ['seq', 'm'], { branches, whole }), undefined, 'a column the relation lacks');
    const asText = {
      ...statement,
      sourceColumns: statement.sourceColumns.map((s) => (s.name === 'k' ? { ...s, type: 'string' as const } : s)),
    };
    assert.equal(thresholdPlan(asText, ['k', 'seq', 'm'], { branches, whole }), undefined, 'a source read as another type');
    assert.equal(
      thresholdPlan({ ...statement, branchTopN: { ...statement.branchTopN!, limit: 0n } }, ['k', 'seq', 'm'], {
        branches,
        whole,
      }),
      undefined,
    );
    const union = `(${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
    const got = await collect(
      runFragment(
        db.conn,
        union,
        ['k', 'seq', 'm'],
        { ...statement, branchTopN: unsourced },
        new AbortController().signal,
        8192,
        branches,
        whole,
      ),
    );
    assert.deepEqual(
      got.map((r) => r[1]),
      [9n, 5n],
    );
  });

  it('answers exactly through the guess over parts of many row groups, and per part when ties let too many rows pass', async () => {
    // 20 parts of 200,000 rows: the guess is the 10th largest part maximum, which holds for
    // unfiltered rows (each part has a row at its maximum).
    for (let p = 0; p < 20; p++)
      await db.conn.run(
        `CREATE OR REPLACE TABLE big${p} AS SELECT (hash(i + ${p * 1_000_000}) % 1000000)::BIGINT AS k, (i + ${p * 1_000_000})::BIGINT AS seq, (i % 5)::BIGINT AS m FROM range(200000) t(i)`,
      );
    const whole = Array.from({ length: 20 }, (_, p) => `(SELECT k, seq, m FROM big${p})`);
    const branches = ['(SELECT k, seq, m FROM hot WHERE false)', ...whole];
    await db.conn.run('CREATE OR REPLACE TABLE hot (k BIGINT, seq BIGINT, m BIGINT)');
    const c: Case = {
      kind: 'BIGINT',
      parts: [],
      hot: [],
      limit: 10,
      desc: true,
      nullsFirst: false,
      second: false,
      filter: false,
    };
    const statement = statementOf(c);
    const plan = thresholdPlan(statement, ['k', 'seq', 'm'], { branches, whole });
    assert.ok(plan);
    const direct = await runWithThreshold(db.conn, plan, { branches, whole }, (r) =>
      runFragment(db.conn, r, ['k', 'seq', 'm'], statement, new AbortController().signal),
    );
    assert.ok(direct, 'the guess holds for unfiltered rows');
    const rows = direct.flatMap((b) => Array.from({ length: b.rowCount }, (_, r) => b.columns.map((col) => col[r])));
    assert.deepEqual(rows, await plain(statement, branches));

    // One part holds half its rows past every other key (100,000 rows past the guess, more than a
    // count would let through), the maxima are distinct: the guess (the 10th largest maximum)
    // stands alone at its maximum, so no count is run (decision 0043) and the filtered union
    // alone answers, exactly.
    await db.conn.run('UPDATE big0 SET k = 2000000 + seq WHERE seq % 2 = 0');
    // (Random maxima of 200,000 keys below 1,000,000 often tie: one distinct maximum per part.)
    for (let p = 1; p < 20; p++) await db.conn.run(`UPDATE big${p} SET k = ${1_000_000 + p} WHERE seq = ${p * 1_000_000}`);
    const statements: string[] = [];
    const recording = new Proxy(db.conn, {
      get(target, name, receiver) {
        const f = Reflect.get(target, name, receiver);
        if (name !== 'runAndReadAll' || typeof f !== 'function') return typeof f === 'function' ? f.bind(target) : f;
        return (sql: string, ...rest: unknown[]) => {
          statements.push(sql);
          return f.call(target, sql, ...rest);
        };
      },
    });
    const skewed = await runWithThreshold(recording, plan, { branches, whole }, (r) =>
      runFragment(db.conn, r, ['k', 'seq', 'm'], statement, new AbortController().signal),
    );
    assert.ok(skewed, 'the guess holds');
    assert.equal(statements.length, 1, 'the guess statement only: no count');
    assert.deepEqual(
      skewed.flatMap((b) => Array.from({ length: b.rowCount }, (_, r) => b.columns.map((col) => col[r]))),
      await plain(statement, branches),
    );
    // A second part with its maximum at the guess: the count runs again, and refuses the
    // 100,000 rows (the statement then runs per part).
    const maxima = (
      await db.conn.runAndReadAll(
        Array.from({ length: 19 }, (_, p) => `SELECT ${p + 1} AS p, max(k) AS v FROM big${p + 1}`).join(' UNION ALL ') +
          ' ORDER BY v DESC',
      )
    ).getRows();
    const [, g] = maxima[8] as [number, bigint];
    const [below] = maxima[9] as [number, bigint];
    await db.conn.run(`UPDATE big${below} SET k = ${g} WHERE k = (SELECT max(k) FROM big${below})`);
    statements.length = 0;
    const shared = await runWithThreshold(recording, plan, { branches, whole }, (r) =>
      runFragment(db.conn, r, ['k', 'seq', 'm'], statement, new AbortController().signal),
    );
    assert.equal(statements.length, 2, 'the guess and the count');
    assert.equal(shared, undefined);

    // Three key values only: the guess is the largest, which ~1.3 M rows share. Too many to order
    // whole: the threshold gives no answer and the statement runs per part, exactly.
    for (let p = 0; p < 20; p++) await db.conn.run(`UPDATE big${p} SET k = seq % 3`);
    const tied = await runWithThreshold(db.conn, plan, { branches, whole }, (r) =>
      runFragment(db.conn, r, ['k', 'seq', 'm'], statement, new AbortController().signal),
    );
    assert.equal(tied, undefined);
    const union = `(${branches.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
    const got = [];
    for await (const b of runFragment(
      db.conn,
      union,
      ['k', 'seq', 'm'],
      statement,
      new AbortController().signal,
      8192,
      branches,
      whole,
    ))
      for (let r = 0; r < b.rowCount; r++) got.push(b.columns.map((col) => col[r]));
    assert.deepEqual(got, await plain(statement, branches));
  });
});
