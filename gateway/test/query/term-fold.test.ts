/**
 * The term fold (common/src/query/term-fold.ts; decisions 0041, 0045): the case-insensitive `has` family checked on
 * the fold of a text must answer what the term regex answers on the text itself, for ASCII
 * needles. Checked in DuckDB itself (its lower() and its RE2): exhaustively over the code points
 * the fold changes (a code point it keeps cannot change an answer), and by property tests over
 * needles with i, k and s and texts with U+0130, U+0131, the Kelvin sign, the long s, U+0345,
 * sharp s, non-ASCII letters, punctuation and NULL — with the term regex and with the binder's
 * cheaper exact check (term-check.ts) on the fold, and with the prefilter (foldPrefilter) as a byte search
 * on the fold. Plain lower() (without the U+0130 step) must fail the same property.
 */
import assert from 'node:assert/strict';
import { termFoldSql } from '@strata/common';
import { memoryDuckDB } from '@strata/common/testing';
import fc from 'fast-check';
import { before, describe, it } from 'mocha';
import { foldPrefilter } from '../../src/query/semantic/string-prefilter.js';
import { lit, type TermKind, termCheckText, termRegexOf, termTextArb } from './term-check-sql.js';

// The fold itself (termFoldSql) and why it is not plain lower(): common/src/query/term-fold.ts.
type Kind = TermKind;
const KINDS: Kind[] = ['term', 'prefix', 'suffix'];
const regexOf = (kind: Kind, needle: string) => termRegexOf(kind, needle, false);
const checkSql = (subject: string, kind: Kind, needle: string) => termCheckText(subject, kind, needle, false);

const ALPHABET = [
  ...'aiIkKsSdxX09 -._/:()',
  '\u0130',
  '\u0131',
  '\u212A',
  '\u017F',
  '\u0345',
  'ß',
  'é',
  'É',
  '日',
  '\u00A0',
  '\u{1D400}',
];

const needleArb = fc.array(fc.constantFrom(...'aiIkKsSdx09-.: '), { minLength: 1, maxLength: 4 }).map((cs) => cs.join(''));

function textArb(needle: string): fc.Arbitrary<string | null> {
  return termTextArb(needle, ALPHABET, true);
}

describe('term fold: the has family on a lower-cased copy answers as on the text', function () {
  this.timeout(240_000);
  const db = memoryDuckDB({ kustoFunctions: true });
  before(async () => {
    // Every code point but the surrogates, and its fold.
    await db.conn.run(
      `CREATE TABLE cp AS SELECT i AS cp, chr(i::INTEGER) AS ch, ${termFoldSql('chr(i::INTEGER)')} AS fo, lower(chr(i::INTEGER)) AS lo
       FROM range(1, 1114112) r(i) WHERE i NOT BETWEEN 55296 AND 57343`,
    );
    // A code point that neither maps to another cannot change an answer: only these are compared.
    await db.conn.run('CREATE TABLE changed AS SELECT * FROM cp WHERE fo <> ch OR lo <> ch');
  });

  const rows = async (q: string) => (await db.conn.runAndReadAll(q)).getRows();

  it('maps every code point to one code point, and keeps the term class under (?i)', async () => {
    assert.deepEqual(await rows('SELECT cp FROM cp WHERE length(fo) <> 1'), []);
    const changed = await rows('SELECT count(*) FROM cp WHERE fo <> ch');
    assert.ok(Number(changed[0]![0]) > 1000, 'the fold lowers the upper-case letters');
    const cls = "'(?i)[^\\p{L}\\p{N}]'";
    assert.deepEqual(
      await rows(`SELECT cp FROM cp WHERE fo <> ch AND regexp_matches(ch, ${cls}) <> regexp_matches(fo, ${cls})`),
      [],
    );
  });

  it('keeps, for every ASCII character, whether (?i) matches it — plain lower() does not for U+0130', async () => {
    const folded: string[] = [];
    const lowered: string[] = [];
    for (let a = 1; a < 128; a++) {
      const ch = String.fromCharCode(a);
      const pat = lit(`(?i)${/[A-Za-z0-9]/.test(ch) ? ch : `\\x${a.toString(16).padStart(2, '0')}`}`);
      for (const [col, out] of [
        ['fo', folded],
        ['lo', lowered],
      ] as const) {
        const bad = await rows(
          `SELECT cp FROM cp WHERE ${col} <> ch AND regexp_matches(ch, ${pat}) <> regexp_matches(${col}, ${pat})`,
        );
        for (const [cp] of bad) out.push(`${JSON.stringify(ch)}: U+${Number(cp).toString(16)}`);
      }
    }
    assert.deepEqual(folded, []);
    assert.deepEqual(lowered, ['"I": U+130', '"i": U+130']);
  });

  /** Texts where a check on the fold answers differently from the term regex on the text. */
  async function differences(needle: string, texts: (string | null)[], fold: (expr: string) => string): Promise<string[]> {
    const values = texts.map((t) => `(${t === null ? 'NULL' : lit(t)})`).join(', ');
    // The prefilter the binder writes on the fold (decision 0045: the longer of 0033's pieces).
    const pre = foldPrefilter(needle);
    const columns = KINDS.flatMap((kind) => {
      const truth = `regexp_matches(t, ${lit(regexOf(kind, needle))})`;
      const onFold = [
        `regexp_matches(${fold('t')}, ${lit(regexOf(kind, needle))})`,
        checkSql(fold('t'), kind, needle),
        // The prefilter as a byte search on the fold: never false where the text matches.
        ...(pre.exact === undefined ? [] : [`(contains(${fold('t')}, ${lit(pre.exact)}) OR NOT ${truth})`]),
      ];
      return onFold.map((c, i) => [
        `${kind}#${i}`,
        `list(t) FILTER (WHERE (${i === 2 ? `NOT ${c}` : `(${c}) IS DISTINCT FROM ${truth}`}))::VARCHAR`,
      ]);
    });
    const [row] = await rows(`SELECT ${columns.map(([, c]) => c).join(', ')} FROM (VALUES ${values}) v(t)`);
    return columns.flatMap(([name], i) => (row![i] === null ? [] : [`${name} ${JSON.stringify(needle)}: differs on ${row![i]}`]));
  }

  let lastFailure = '';
  const same = (fold: (expr: string) => string, runs: number) =>
    fc.assert(
      fc.asyncProperty(
        needleArb.chain((n) => fc.tuple(fc.constant(n), fc.array(textArb(n), { minLength: 1, maxLength: 30 }))),
        async ([needle, texts]) => {
          const found = await differences(needle, texts, fold);
          if (found.length > 0) lastFailure = found.join('; ');
          assert.deepEqual(found, []);
        },
      ),
      { numRuns: runs },
    );

  it('has, hasprefix, hassuffix on the fold answer as the term regex on the text (property)', async () => {
    await same(termFoldSql, 250);
  });

  it('catches the fold without its U+0130 step (plain lower())', async () => {
    assert.deepEqual(await differences('id', ['\u0130d', 'id', null], (e) => `lower(${e})`), [
      `term#0 "id": differs on [İd]`,
      `term#1 "id": differs on [İd]`,
      `prefix#0 "id": differs on [İd]`,
      `prefix#1 "id": differs on [İd]`,
      `suffix#0 "id": differs on [İd]`,
      `suffix#1 "id": differs on [İd]`,
    ]);
    lastFailure = '';
    await assert.rejects(
      same((e) => `lower(${e})`, 2000),
      /Property failed/,
    );
    assert.match(lastFailure, /differs on/);
  });
});
