/**
 * Refusals: anything outside the dialect is refused by name with a 400-kind StrataError whose
 * token positions point into the query text; limits are enforced before parsing.
 */
import assert from 'node:assert/strict';
import type { StrataError } from '@strata/common';
import { before, describe, it } from 'mocha';
import { warmQueryEngine } from '../../src/query/engine.js';
import { parseQuery } from '../../src/query/parse-info.js';
import type { SchemaCatalog } from '../../src/query/types.js';
import { planRefusal } from './fixture.js';

const CATALOG: SchemaCatalog = {
  tables: [
    {
      name: 'Logs',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'host', type: 'string' },
        { name: 'latencyMs', type: 'long' },
      ],
    },
  ],
};

function refusal(query: string): StrataError {
  return planRefusal(query, CATALOG);
}

/** The text the first error token points at. */
function pointedAt(query: string, err: StrataError): string {
  const token = err.details[0]?.tokens[0];
  assert.ok(token, 'no token position');
  return query.slice(token.start, token.end);
}

describe('query refusals', () => {
  before(async function () {
    this.timeout(60_000);
    await warmQueryEngine();
  });

  it('refuses unsupported operators by name, pointing at them', () => {
    for (const [query, name] of [
      ['Logs | fork (take 1)', 'fork'],
      ['Logs | facet by host', 'facet'],
    ]) {
      const err = refusal(query as string);
      // fork and facet say why after the colon.
      assert.ok(err.message.startsWith(`The operator '${name}' is not supported`), err.message);
      assert.equal(pointedAt(query as string, err), name);
    }
  });

  it('refuses unsupported functions by name, pointing at them', () => {
    const query = 'Logs | extend h = geo_point_buffer(1, 2, 10)';
    const err = refusal(query);
    assert.equal(err.message, "The function 'geo_point_buffer' is not supported.");
    assert.equal(pointedAt(query, err), 'geo_point_buffer');
  });

  it('refuses has_any over a column by name', () => {
    assert.match(refusal('Logs | where host has_any (host)').message, /'has_any' needs constant terms/);
  });

  it('points at unknown tables and columns', () => {
    const q1 = 'Nope | take 1';
    const e1 = refusal(q1);
    assert.match(e1.message, /'Nope' does not refer to any known table/);
    assert.equal(pointedAt(q1, e1), 'Nope');
    const q2 = 'Logs | where hostname == "x"';
    const e2 = refusal(q2);
    assert.match(e2.message, /'hostname' does not refer to any known column/);
    assert.equal(pointedAt(q2, e2), 'hostname');
  });

  it('reports syntax errors with positions', () => {
    const q = 'Logs | where latencyMs > ';
    const err = refusal(q);
    assert.ok((err.details[0]?.tokens[0]?.start ?? -1) >= 0);
    assert.equal(err.details[0]?.message, err.message);
  });

  it('refuses type errors', () => {
    assert.match(refusal('Logs | where host > 5').message, /Cannot compare a string with a long/);
    assert.match(refusal('Logs | extend x = host + 1').message, /cannot be applied to a string and a long/);
    assert.match(refusal('Logs | where latencyMs').message, /needs a boolean condition/);
  });

  it('refuses aggregates outside summarize and columns outside aggregates', () => {
    assert.match(refusal('Logs | extend c = count()').message, /only allowed in summarize/);
    assert.match(refusal('Logs | summarize latencyMs + count()').message, /inside an aggregate/);
  });

  it('refuses duplicate column names', () => {
    assert.match(refusal('Logs | project host, host').message, /already declared/);
  });

  it('refuses render that is not last', () => {
    assert.match(refusal('Logs | render table | take 1').message, /render/);
  });

  it('refuses a query longer than the limit before parsing', () => {
    const err = refusal(`Logs | where host == "${'x'.repeat(70_000)}"`);
    assert.match(err.message, /longer than 65536 characters/);
  });

  it('refuses deep nesting before parsing', () => {
    const err = refusal(`Logs | where ${'('.repeat(5_000)}true${')'.repeat(5_000)}`);
    assert.match(err.message, /nests brackets deeper than 64/);
  });

  it('refuses long operator chains by their depth', () => {
    const err = refusal(`print ${Array(20_000).fill('1').join('+')}`);
    assert.match(err.message, /nests expressions deeper than 512/);
  });

  it('refuses multiple statements, and a function calling itself', () => {
    assert.match(refusal('Logs | take 1; Logs | take 2').message, /Only one query statement/);
    const q = 'let f = (x:long) { f(x) + 1 }; print f(1)';
    const err = refusal(q);
    assert.match(err.message, /'f' is not supported/);
    assert.equal(pointedAt(q, err), 'f');
  });

  it('the parse endpoint reports the same errors without throwing', () => {
    const r = parseQuery('Logs | fork (take 1)', CATALOG, 12);
    assert.equal(r.parseSuccess, false);
    assert.match(r.error?.message ?? '', /^The operator 'fork' is not supported: it answers with several tables/);
    assert.deepEqual(r.error?.errors[0]?.tokens, [{ start: 7, end: 11 }]);
    assert.equal(r.error?.stackTrace, null);
  });
});
