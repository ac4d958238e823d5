/**
 * `has` puts a substring test before its term regex (expr-binder.ts, decision 0011). The prefilter
 * must never reject a row the regex accepts: checked here in DuckDB itself, on strings chosen
 * around RE2's case folding (the Kelvin sign folds to k, the long s to s, the dotted capital I to
 * nothing ASCII) and word boundaries.
 */
import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { after, before, describe, it } from 'mocha';
import { termPrefilter, termRegex } from '../../src/query/semantic/expr-binder.js';

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

const HAYSTACKS = [
  'upstream timeout after 12ms',
  'UPSTREAM TIMEOUT',
  'TimeOut!',
  'timeouts are not a timeout', // one term match after a non-match
  'no-timeout-here',
  'xtimeout',
  'T\u0130MEOUT', // dotted capital I: lower() gives i, RE2 (?i) does not fold it to i
  'o\u212A', // KELVIN SIGN: (?i) folds it to k
  '\u017Ftatus ok', // LONG S: (?i) folds it to s
  'STATUS OK',
  'db-3 down',
  'DB-3',
  'caf\u00C9 closed',
  '',
];
const NEEDLES = ['timeout', 'TIMEOUT', 'ok', 'status', 'db-3', 'DB-3', 'café', 'out', 'e', '-'];

describe('has prefilter', () => {
  let instance: DuckDBInstance;
  before(async () => {
    instance = await DuckDBInstance.create(':memory:');
  });
  after(() => instance.closeSync());

  it('is offered only where it is implied by the regex', () => {
    assert.equal(termPrefilter('TimeOut', false), 'timeout');
    assert.equal(termPrefilter('TimeOut', true), 'TimeOut');
    assert.equal(termPrefilter('ok', false), undefined, 'k also folds from the Kelvin sign');
    assert.equal(termPrefilter('status', false), undefined, 's also folds from the long s');
    assert.equal(termPrefilter('café', false), undefined, 'no prefilter for non-ASCII needles');
    assert.equal(termPrefilter('', false), undefined);
  });

  it('never rejects a string the term regex accepts, and keeps the answer', async () => {
    const conn = await instance.connect();
    let checked = 0;
    let prefiltered = 0;
    for (const cs of [false, true]) {
      for (const needle of NEEDLES) {
        const pre = termPrefilter(needle, cs);
        for (const hay of HAYSTACKS) {
          const regex = `regexp_matches(${lit(hay)}, ${lit(termRegex(needle, cs))})`;
          const prefilter =
            pre === undefined ? 'true' : cs ? `contains(${lit(hay)}, ${lit(pre)})` : `contains(lower(${lit(hay)}), ${lit(pre)})`;
          const [[matches, passes]] = (await conn.runAndReadAll(`SELECT ${regex}, ${prefilter}`)).getRows();
          if (matches)
            assert.equal(passes, true, `${cs ? 'has_cs' : 'has'} "${needle}" on "${hay}": the prefilter rejects a match`);
          checked++;
          if (pre !== undefined && !passes) prefiltered++;
        }
      }
    }
    assert.equal(checked, 2 * NEEDLES.length * HAYSTACKS.length);
    assert.ok(prefiltered > 0, 'the prefilter does rule rows out');
    conn.closeSync();
  });
});
