/**
 * Kusto's decimal is refused wherever a query writes it (decision 0030): the `decimal(…)` literal,
 * `todecimal`, and the type name in every declaration that takes one. Before, the literal and the
 * type name were read as real, so a decimal query answered a real with other digits.
 */
import assert from 'node:assert/strict';
import { isStrataError, type StrataError } from '@strata/common';
import { before, describe, it } from 'mocha';
import { planQuery, warmQueryEngine } from '../../src/query/engine.js';
import type { SchemaCatalog } from '../../src/query/types.js';

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

function refusal(query: string): StrataError {
  try {
    planQuery(query, CATALOG);
  } catch (err) {
    assert.ok(isStrataError(err), `not a StrataError: ${String(err)}`);
    assert.equal(err.kind, 'invalid');
    return err;
  }
  assert.fail(`accepted: ${query}`);
}

/** The query text the first error token points at. */
function pointedAt(query: string, err: StrataError): string {
  const token = err.details[0]?.tokens[0];
  assert.ok(token, 'no token position');
  return query.slice(token.start, token.end);
}

describe('decimal is refused by name (decision 0030)', () => {
  before(async function () {
    this.timeout(60_000);
    await warmQueryEngine();
  });

  it('refuses decimal literals, pointing at them and saying why', () => {
    for (const [query, literal] of [
      ['print decimal(0.1) + decimal(0.2)', 'decimal(0.1)'],
      ['print v = decimal(null)', 'decimal(null)'],
      ['T | where x > decimal(1e5)', 'decimal(1e5)'],
      ['T | extend y = iff(x > 1, decimal(-12.50), decimal(3))', 'decimal(-12.50)'],
    ] as const) {
      const err = refusal(query);
      assert.equal(pointedAt(query, err), literal, query);
      assert.ok(err.message.startsWith(`The decimal literal '${literal}' is not supported: `), err.message);
      assert.match(err.message, /SqlDecimal/);
    }
  });

  it('refuses todecimal of every argument type with the reason', () => {
    for (const arg of ['s', 'x', '1.5', '"12.75"', 'timestamp']) {
      const query = `T | extend v = todecimal(${arg})`;
      const err = refusal(query);
      assert.equal(pointedAt(query, err), 'todecimal');
      assert.ok(err.message.startsWith("The function 'todecimal' is not supported: "), err.message);
      assert.match(err.message, /SqlDecimal/);
    }
  });

  it('refuses the type name decimal in datatable, parse, parameters, typeof and mv-expand', () => {
    for (const query of [
      'datatable(price:decimal)[1.5, 2.25]',
      'datatable(name:string, price:decimal)["a", "3.10"]',
      'T | parse s with "price=" price:decimal',
      'declare query_parameters(limit:decimal = 1.5); T | take 1',
      'T | extend v = extract("([0-9.]+)", 1, s, typeof(decimal))',
      'T | mv-expand d to typeof(decimal)',
    ]) {
      const err = refusal(query);
      assert.equal(pointedAt(query, err).toLowerCase().trim(), 'decimal', query);
      assert.ok(err.message.startsWith("The type 'decimal' is not supported: "), `${query}: ${err.message}`);
    }
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
  });

  it('does not offer hash_crc32, which Kusto does not have (plain unknown-function refusal)', () => {
    const query = 'T | extend h = hash_crc32(s)';
    const err = refusal(query);
    assert.equal(err.message, "The function 'hash_crc32' is not supported.");
    assert.equal(pointedAt(query, err), 'hash_crc32');
  });
});
