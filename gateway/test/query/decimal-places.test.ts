/**
 * Every place a query can write Kusto's decimal plans it as a decimal (decision 0031; decision 0030
 * refused them all): the `decimal(…)` literal, `todecimal`, and the type name in every declaration
 * that takes one. The values themselves are checked in decimal.test.ts.
 */
import assert from 'node:assert/strict';
import type { StrataError } from '@strata/common';
import { before, describe, it } from 'mocha';
import { planQuery, warmQueryEngine } from '../../src/query/engine.js';
import type { KqlType, SchemaCatalog } from '../../src/query/types.js';
import { planRefusal } from './fixture.js';

const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'T',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 's', type: 'string' },
        { name: 'x', type: 'long' },
        { name: 'd', type: 'dynamic' },
      ],
    },
  ],
};

/** The type of the named result column. */
function typeOf(query: string, column: string): KqlType | undefined {
  return planQuery(query, CATALOG).columns.find((c) => c.name === column)?.type;
}

function refusal(query: string): StrataError {
  return planRefusal(query, CATALOG);
}

describe('decimal where a query writes it (decision 0031)', () => {
  before(async function () {
    this.timeout(60_000);
    await warmQueryEngine();
  });

  it('decimal literals are decimals', () => {
    for (const query of [
      'print v = decimal(0.1) + decimal(0.2)',
      'print v = decimal(null)',
      'T | extend v = iff(x > 1, decimal(-12.50), decimal(3))',
      'T | extend v = decimal(1e5) * x',
    ]) {
      assert.equal(typeOf(query, 'v'), 'decimal', query);
    }
    assert.equal(typeOf('T | where x > decimal(1e5) | project x', 'x'), 'long');
  });

  it('todecimal of every argument type is a decimal', () => {
    for (const arg of ['s', 'x', '1.5', '"12.75"', 'd', 'true']) {
      assert.equal(typeOf(`T | extend v = todecimal(${arg})`, 'v'), 'decimal', arg);
    }
  });

  it('the type name decimal in datatable, parse, parameters, typeof and mv-expand', () => {
    for (const [query, column] of [
      ['datatable(price:decimal)[decimal(1.5), 2.25]', 'price'],
      ['datatable(name:string, price:decimal)["a", decimal(3.10)]', 'price'],
      ['T | parse s with "price=" price:decimal', 'price'],
      ['declare query_parameters(limit:decimal = decimal(1.5)); print v = limit', 'v'],
      ['T | extend v = extract("([0-9.]+)", 1, s, typeof(decimal))', 'v'],
      ['T | mv-expand d to typeof(decimal)', 'd'],
    ] as const) {
      assert.equal(typeOf(query, column), 'decimal', query);
    }
  });

  it('arithmetic with decimals is decimal; the real-valued functions and aggregates answer reals', () => {
    assert.equal(typeOf('T | extend v = todecimal(x) / 3', 'v'), 'decimal');
    assert.equal(typeOf('T | extend v = 2.5 - todecimal(x)', 'v'), 'decimal');
    assert.equal(typeOf('T | extend v = sqrt(todecimal(x))', 'v'), 'real');
    assert.equal(typeOf('T | extend v = pow(todecimal(x), 2)', 'v'), 'real');
    assert.equal(typeOf('T | summarize v = sum(todecimal(x))', 'v'), 'decimal');
    assert.equal(typeOf('T | summarize v = avg(todecimal(x))', 'v'), 'decimal');
    assert.equal(typeOf('T | summarize v = max(todecimal(x))', 'v'), 'decimal');
    assert.equal(typeOf('T | summarize v = stdev(todecimal(x))', 'v'), 'real');
    assert.equal(typeOf('T | summarize v = variance(todecimal(x))', 'v'), 'real');
  });

  it('refuses % on decimals by name, pointing at the operator', () => {
    const query = 'T | extend v = todecimal(x) % 2';
    const err = refusal(query);
    assert.match(err.message, /^The operator '%' is not supported on decimals: .*SqlDecimal/);
    const token = err.details[0]?.tokens[0];
    assert.ok(token);
    assert.equal(query.slice(token.start, token.end), '%');
  });

  it('refuses make-series of a decimal aggregate and row_cumsum of a decimal, saying why', () => {
    const series = refusal('T | make-series s = sum(todecimal(x)) on timestamp step 1h');
    assert.match(series.message, /^make-series of a decimal aggregate is not supported: series hold reals/);
    const cumsum = refusal('T | serialize | extend c = row_cumsum(todecimal(x))');
    assert.match(cumsum.message, /row_cumsum.*this is a decimal/);
  });

  it('keeps real literals, real type names and todouble as they were', () => {
    for (const query of [
      'print real(1.5) + double(2.25)',
      'datatable(price:real, p2:double, p3:float64)[1.5, 2, 3]',
      'T | extend v = todouble(s), w = toreal("12.75")',
      'T | parse s with "price=" price:real',
    ]) {
      assert.doesNotThrow(() => planQuery(query, CATALOG), query);
    }
    assert.equal(typeOf('print v = real(1.5) + 2', 'v'), 'real');
  });

  it('does not offer hash_crc32, which Kusto does not have (plain unknown-function refusal)', () => {
    const query = 'T | extend h = hash_crc32(s)';
    const err = refusal(query);
    assert.equal(err.message, "The function 'hash_crc32' is not supported.");
  });
});
