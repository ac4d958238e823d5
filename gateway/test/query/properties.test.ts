/**
 * Property tests (fast-check):
 * - random and hostile query text never makes the engine throw anything but a 400-kind
 *   StrataError (how long planning or refusing takes is a bench figure, not asserted here:
 *   `node bench/query/parse-cost.mjs` prints the slowest shapes; the guard against one request
 *   holding a core is the size and depth limits checked before parsing, tested in errors.test.ts);
 * - user literals (strings, names) never appear in generated SQL text;
 * - random valid pipelines give the same answer on one worker and on three.
 */
import assert from 'node:assert/strict';
import { isStrataError } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { planQuery, warmQueryEngine } from '../../src/query/engine.js';
import { parseQuery } from '../../src/query/parse-info.js';
import { closeCluster, getCluster, run } from './fixture.js';

const CATALOG = {
  tables: [
    {
      name: 'Logs',
      columns: [
        { name: 'timestamp', type: 'datetime' as const },
        { name: 'host', type: 'string' as const },
        { name: 'latencyMs', type: 'long' as const },
        { name: 'ratio', type: 'real' as const },
        { name: 'props', type: 'dynamic' as const },
      ],
    },
  ],
};

const VOCABULARY = [
  'Logs',
  '|',
  'where',
  'project',
  'extend',
  'summarize',
  'by',
  'count',
  'count()',
  'take',
  'top',
  'sort',
  'order',
  'asc',
  'desc',
  'distinct',
  'union',
  'parse',
  'kind=regex',
  'with',
  'render',
  'timechart',
  'let',
  '=',
  ';',
  ',',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '==',
  '!=',
  '=~',
  '<',
  '>',
  '<=',
  '>=',
  'and',
  'or',
  'not',
  'has',
  '!has',
  'contains',
  'startswith',
  'in',
  '!in',
  'between',
  '..',
  'matches regex',
  '+',
  '-',
  '*',
  '/',
  '%',
  'host',
  'latencyMs',
  'ratio',
  'timestamp',
  'props',
  '.',
  'a',
  'x',
  '1',
  '0',
  '-1',
  '1.5',
  '"s"',
  "'t'",
  '1h',
  '5m',
  'ago(1h)',
  'now()',
  'datetime(2024-01-01)',
  'bin(timestamp, 1h)',
  'toint(',
  'tostring(',
  'avg(',
  'sum(',
  'dcount(',
  'percentile(',
  'arg_max(',
  'make_list(',
  'datatable(a:long)[1, 2]',
  'range x from 1 to 3 step 1',
  'print',
  'null',
  'dynamic({"a":1})',
  '*',
  '//c\n',
  '@"v"',
  '```m```',
  'h"x"',
  '$metadata.schema.tables.fields',
  'schema.tables',
  '\u0000',
  '\u202e',
  '💥',
  '"\\"',
  "'\\''",
  'mv-expand',
  'join',
  'hash(',
  'todynamic(',
  '$__timeFilter(timestamp)',
];

const tokenSoup = fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 40 }).map((t) => t.join(' '));

/** Valid-ish pipelines with a few random steps. */
const STEPS = [
  'where latencyMs > 100',
  'where host has "web"',
  'where ratio between (0.0 .. 5.0)',
  'where isnotnull(props)',
  'extend z = latencyMs * 2',
  'extend h = tolower(host)',
  'project host, latencyMs, timestamp',
  'project-away props',
  'summarize count() by host',
  'summarize n = count(), s = sum(latencyMs) by bin(timestamp, 6h)',
  'summarize dcount(host), avg(ratio)',
  'top 5 by latencyMs',
  'take 3',
  'sort by host asc',
  'distinct host',
  'count',
];

const pipeline = fc
  .array(fc.constantFrom(...STEPS), { minLength: 0, maxLength: 4 })
  .map((steps) => ['Logs', ...steps].join(' | '));

function mustBeQueryError(err: unknown, query: string): void {
  assert.ok(isStrataError(err), `non-StrataError for ${JSON.stringify(query.slice(0, 200))}: ${String(err)}`);
  assert.equal(err.kind, 'invalid', `kind ${err.kind} for ${JSON.stringify(query.slice(0, 200))}`);
  assert.notEqual(
    err.message,
    'The query could not be analysed.',
    `unexpected internal failure for ${JSON.stringify(query.slice(0, 200))}: ${String(err.cause)}`,
  );
}

function planOrRefuse(query: string): void {
  try {
    planQuery(query, CATALOG);
  } catch (err) {
    mustBeQueryError(err, query);
  }
}

describe('query properties', () => {
  before(async function () {
    this.timeout(60_000);
    await warmQueryEngine();
  });
  after(closeCluster);

  it('random text and token soup are planned or refused with a query error', function () {
    this.timeout(300_000);
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 200 }), tokenSoup, fc.string({ unit: 'binary', maxLength: 64 })),
        planOrRefuse,
      ),
      { numRuns: 600 },
    );
  });

  it('hostile shapes (deep nesting, long chains, huge literals) are planned or refused with a query error', function () {
    this.timeout(300_000);
    const hostile = fc.oneof(
      fc.integer({ min: 1, max: 20_000 }).map((n) => `Logs | where ${'('.repeat(n)}true${')'.repeat(n)}`),
      fc.integer({ min: 1, max: 20_000 }).map((n) => `print ${Array(n).fill('1').join('+')}`),
      fc.integer({ min: 1, max: 5_000 }).map((n) => `Logs${' | take 1'.repeat(n)}`),
      fc
        .integer({ min: 1, max: 3_000 })
        .map((n) => `Logs | where ${Array.from({ length: n }, (_, i) => `host == "h${i}"`).join(' or ')}`),
      fc.integer({ min: 60_000, max: 200_000 }).map((n) => `print "${'x'.repeat(n)}"`),
      fc
        .integer({ min: 1, max: 2_000 })
        .map(
          (n) =>
            `${Array.from({ length: n }, (_, i) => `let t${i} = ${i > 0 ? `t${i - 1}` : 'Logs'};`).join(' ')} t${n - 1} | count`,
        ),
      fc.integer({ min: 1, max: 5_000 }).map((n) => `print dynamic(${'['.repeat(n)}${']'.repeat(n)})`),
    );
    fc.assert(fc.property(hostile, planOrRefuse), { numRuns: 60 });
  });

  it('the parse endpoint never throws on random input', function () {
    this.timeout(300_000);
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 120 }), tokenSoup), fc.nat(200), (q, cursor) => {
        const r = parseQuery(q, CATALOG, cursor);
        assert.equal(typeof r.parseSuccess, 'boolean');
        if (!r.parseSuccess) assert.ok(r.error && r.error.errors.length > 0);
      }),
      { numRuns: 200 },
    );
  });

  it('user literals and names never appear in SQL text', function () {
    this.timeout(300_000);
    // A marker that cannot occur in generated SQL, followed by hostile text.
    const literal = fc
      .tuple(
        fc.string({ unit: 'grapheme', maxLength: 20 }),
        fc.constantFrom("'; DROP TABLE x; --", '"', '\\', '$1', ['$', '{x}'].join(''), '\u0000', ''),
      )
      .map(([a, b]) => `zqx${a}${b}`.replaceAll('\\', '').replaceAll('"', '').replaceAll('\n', '').replaceAll('\r', ''));
    const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,8}$/).map((n) => `zqy${n}`);
    const templates = [
      (l: string) => `Logs | where host == "${l}"`,
      (l: string) => `Logs | where host has "${l}" or host contains "${l}" or host startswith "${l}"`,
      (l: string) => `Logs | extend s = strcat(host, "${l}") | where s !in ("${l}", "x")`,
      (l: string) => `Logs | parse kind=regex host with "${l.replace(/[^A-Za-z0-9]/g, '')}" rest`,
      (l: string) => `datatable(a:string)["${l}"] | where a =~ "${l}"`,
      (l: string) => `let v = "${l}"; Logs | where host != v`,
      (l: string) => `Logs | where props.["${l}"] == "${l}"`,
      (l: string) => `Logs | summarize joined = join(host, "${l}")`,
      (l: string) => `print x = extract("${l.replace(/[^A-Za-z0-9]/g, '')}(.)", 1, "${l}")`,
    ];
    fc.assert(
      fc.property(literal, name, fc.nat(templates.length - 1), (lit, col, t) => {
        const q = `${(templates[t] as (l: string) => string)(lit)} | extend ${col} = 1 | project-rename ${col}2 = ${col}`;
        let plan: ReturnType<typeof planQuery>;
        try {
          plan = planQuery(q, CATALOG);
        } catch (err) {
          mustBeQueryError(err, q);
          return;
        }
        const texts = [plan.merge.text, ...plan.fragments.map((f) => f.sql)];
        for (const sql of texts) {
          assert.ok(!sql.includes('zqx'), `literal in SQL: ${sql}`);
          assert.ok(!sql.includes('zqy'), `name in SQL: ${sql}`);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('random pipelines give the same answer on one worker and on three', async function () {
    this.timeout(300_000);
    await getCluster();
    await fc.assert(
      fc.asyncProperty(pipeline, async (q) => {
        // take and top pick among ties (or arbitrarily): the rows of what follows them may
        // legitimately differ, so such pipelines must agree on their result columns only; all
        // others must give the same rows.
        const arbitrary = /\b(take|top)\b/.test(q);
        try {
          await run(q, arbitrary ? { columnsOnly: true } : {});
        } catch (err) {
          if (isStrataError(err)) mustBeQueryError(err, q);
          else throw err;
        }
      }),
      { numRuns: 60 },
    );
  });
});
