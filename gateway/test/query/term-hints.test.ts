/**
 * Term hints (decision 0026): which `has` conditions of a query reach the workers as hints for
 * their term indexes. Only constant terms of conjuncts over scan columns qualify; a hint never
 * replaces the condition in the statement.
 */
import assert from 'node:assert/strict';
import { termKeys } from '@strata/common';
import { after, before, describe, it } from 'mocha';
import { planQuery } from '../../src/query/engine.js';
import { closeCluster, getCluster, NOW } from './fixture.js';

describe('term hints of a plan', () => {
  let catalog: Awaited<ReturnType<typeof getCluster>>['three']['catalog'];
  before(async function () {
    this.timeout(60_000);
    catalog = (await getCluster()).three.catalog;
  });
  after(closeCluster);

  const hintsOf = (q: string) => {
    const p = planQuery(q, catalog, { now: NOW });
    assert.deepEqual(p.single?.terms, p.fragments[0]?.terms, 'the one-worker statement carries the same hints');
    return p.fragments[0]?.terms;
  };

  it('sends the constant terms of has, has_cs, has_any and has_all conjuncts', () => {
    assert.deepEqual(hintsOf('Logs | where message has "timeout" | count'), [{ column: 'message', anyOf: [['timeout']] }]);
    assert.deepEqual(hintsOf('Logs | where message has_cs "DB-3" and level == "Error" | count'), [
      { column: 'message', anyOf: [['db', '3']] },
    ]);
    assert.deepEqual(hintsOf('Logs | where host has_any ("web-1", "db") | take 5'), [
      { column: 'host', anyOf: [['web', '1'], ['db']] },
    ]);
    assert.deepEqual(hintsOf('Logs | where message has_all ("a", "b") | count'), [
      { column: 'message', anyOf: [['a']] },
      { column: 'message', anyOf: [['b']] },
    ]);
    // Renamed columns still name the stored column; filters before and after a project both count.
    assert.deepEqual(hintsOf('Logs | where level has "error" | project m = message | where m has "slow" | count'), [
      { column: 'message', anyOf: [['slow']] },
      { column: 'level', anyOf: [['error']] },
    ]);
  });

  it('sends nothing it could not prove: or, not, negations, computed subjects, non-constant or unsafe terms', () => {
    for (const q of [
      'Logs | where message has "timeout" or level == "Error" | count',
      'Logs | where not(message has "timeout") | count',
      'Logs | where message !has "timeout" | count',
      'Logs | where strcat(message, host) has "timeout" | count',
      'Logs | extend message = strcat(message, "x") | where message has "timeout" | count',
      'Logs | where props has "timeout" | count',
      'Logs | where message has "" | count',
      'Logs | where message has "--" | count',
      'Logs | where message has "caf\u00e9" | count',
      'Logs | where message has_any ("a", "\u212aelvin") | count',
      'Logs | where message has_any ("a", "") | count',
      'Logs | summarize c = count() by message | where message has "timeout"',
      'Logs | take 10 | where message has "timeout"',
      'Logs | where message contains "timeout" | count',
    ]) {
      assert.equal(hintsOf(q), undefined, q);
    }
  });

  it('keeps the term check in the statement', () => {
    const p = planQuery('Logs | where message has "timeout" | count', catalog, { now: NOW, storageTime: true });
    assert.match(p.fragments[0]?.sql ?? '', /regexp_matches/);
    assert.match(p.single?.sql ?? '', /regexp_matches/);
  });

  it('makes a key of every run of ASCII letters and digits, and none for other needles', () => {
    assert.deepEqual(termKeys('Timeout'), ['timeout']);
    assert.deepEqual(termKeys(' db-3 '), ['db', '3']);
    assert.deepEqual(termKeys('a.b.a'), ['a', 'b']);
    assert.equal(termKeys(''), undefined);
    assert.equal(termKeys('...'), undefined);
    assert.equal(termKeys('na\u00efve'), undefined);
    assert.equal(termKeys('x'.repeat(300)), undefined);
  });
});
