/**
 * kql_term_match (udfs/term-match.ts) must answer exactly what the binder's RE2 term regex answers
 * for ASCII needles, and term-chars.ts must be RE2's own `[\p{L}\p{N}]` (decision 0037). Checked
 * in DuckDB itself: the table over every code point, the function against the regex by property
 * tests over texts built around term boundaries (ASCII punctuation, non-ASCII letters and
 * non-letters, astral characters, U+0345 which `(?i)` folds to a letter, the Kelvin sign and the
 * long s), and a function broken on purpose must make the same property fail.
 */
import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { isTermChar } from '../../src/query/term-chars.js';
import {
  isAsciiNeedle,
  TERM_MATCH_AFTER,
  TERM_MATCH_BEFORE,
  TERM_MATCH_CASELESS,
  termMatches,
} from '../../src/query/udfs/term-match.js';
import { memoryDuckDB } from '../../src/testing/index.js';

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The binder's term regex (gateway termRegex / affixRegex) for these flags. */
function termRegex(needle: string, flags: number): string {
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return `${flags & TERM_MATCH_CASELESS ? '(?i)' : ''}${flags & TERM_MATCH_BEFORE ? '(?:^|[^\\p{L}\\p{N}])' : ''}${escaped}${
    flags & TERM_MATCH_AFTER ? '(?:[^\\p{L}\\p{N}]|$)' : ''
  }`;
}

/** Characters around boundaries and case folding. */
const ALPHABET = [
  ...'abkKsSxX09 -._/:()[]*+?$^|\\\'"\t\n',
  '\u212A', // KELVIN SIGN: a letter; (?i) k
  '\u017F', // LONG S: a letter; (?i) s
  '\u0345', // COMBINING GREEK YPOGEGRAMMENI: not a letter, but (?i) folds it to one
  'é',
  'ß',
  'Σ',
  '日',
  '٣', // ARABIC-INDIC DIGIT THREE: a digit
  '\u00A0', // NO-BREAK SPACE: a boundary
  '—', // EM DASH
  '“',
  '\u{1D400}', // MATHEMATICAL BOLD CAPITAL A: an astral letter
  '\u{1F600}', // an astral non-letter
  '\u{10437}', // DESERET SMALL LETTER YEE: an astral letter with case
];

const ALL_FLAGS = [0, 1, 2, 3, 4, 5, 6, 7];

const needleArb = fc.array(fc.constantFrom(...'abkKsSxX09-._/:() $'), { minLength: 1, maxLength: 5 }).map((cs) => cs.join(''));

/** Texts holding the needle in some case form among boundary-testing characters, or NULL. */
function textArb(needle: string): fc.Arbitrary<string | null> {
  const forms = (c: string) => {
    const out = new Set([c, c.toLowerCase(), c.toUpperCase()]);
    if (c.toLowerCase() === 'k') out.add('\u212A');
    if (c.toLowerCase() === 's') out.add('\u017F');
    return [...out];
  };
  const caseForm = fc.tuple(...[...needle].map((c) => fc.constantFrom(...forms(c)))).map((cs) => cs.join(''));
  return fc.option(
    fc.array(fc.oneof(fc.constantFrom(...ALPHABET), caseForm), { maxLength: 8 }).map((ps) => ps.join('')),
    { freq: 20 },
  );
}

/** Texts where `matches` and DuckDB's regex disagree, for each flag combination. */
async function disagreements(
  conn: DuckDBConnection,
  needle: string,
  texts: (string | null)[],
  matches: (text: string, needle: string, flags: number) => boolean,
): Promise<string[]> {
  const rows = texts.map((t) => `(${t === null ? 'NULL' : lit(t)})`).join(', ');
  const columns = ALL_FLAGS.map((f) => `list(regexp_matches(t, ${lit(termRegex(needle, f))}))`);
  const [row] = (await conn.runAndReadAll(`SELECT ${columns.join(', ')} FROM (VALUES ${rows}) v(t)`)).getRowsJS();
  const out: string[] = [];
  ALL_FLAGS.forEach((f, i) => {
    const expected = row![i] as (boolean | null)[];
    texts.forEach((t, k) => {
      const got = t === null ? null : matches(t, needle, f);
      if (got !== expected[k])
        out.push(`flags ${f} ${JSON.stringify(needle)} in ${JSON.stringify(t)}: ${got} ≠ RE2 ${expected[k]}`);
    });
  });
  return out;
}

/** The property over `runs` needles: no disagreement. Returns the first counterexample's report. */
async function firstDisagreement(
  conn: DuckDBConnection,
  matches: (text: string, needle: string, flags: number) => boolean,
  runs: number,
  seed?: number,
): Promise<string | undefined> {
  let found: string | undefined;
  await fc
    .assert(
      fc.asyncProperty(
        needleArb.chain((n) => fc.tuple(fc.constant(n), fc.array(textArb(n), { minLength: 1, maxLength: 30 }))),
        async ([needle, texts]) => {
          const bad = await disagreements(conn, needle, texts, matches);
          if (bad.length > 0) found ??= bad.slice(0, 3).join('\n');
          return bad.length === 0;
        },
      ),
      { numRuns: runs, ...(seed !== undefined ? { seed } : {}) },
    )
    .catch(() => undefined);
  return found;
}

describe('kql_term_match: the has check without the Unicode regex', function () {
  this.timeout(180_000);
  const db = memoryDuckDB({ kustoFunctions: true });

  it("holds RE2's own [\\p{L}\\p{N}], plain and under (?i), for every code point", async () => {
    for (const caseless of [false, true]) {
      const rows = (
        await db.conn.runAndReadAll(
          `SELECT cp FROM (SELECT range AS cp FROM range(0, 55296) UNION ALL SELECT range FROM range(57344, 1114112))
            WHERE NOT regexp_matches(chr(cp::INTEGER), '${caseless ? '(?i)' : ''}^[^\\p{L}\\p{N}]$') ORDER BY cp`,
        )
      ).getRows();
      const expected = new Set(rows.map(([cp]) => Number(cp)));
      const wrong: number[] = [];
      for (let cp = 0; cp < 0x110000; cp++) {
        if (cp >= 0xd800 && cp <= 0xdfff) continue;
        if (isTermChar(cp, caseless) !== expected.has(cp)) wrong.push(cp);
      }
      assert.deepEqual(
        wrong.slice(0, 10).map((cp) => cp.toString(16)),
        [],
        `${wrong.length} code points differ (caseless ${caseless}): run node common/scripts/term-chars.mjs`,
      );
    }
  });

  it('answers what the term regex answers (property, every flag combination)', async () => {
    assert.equal(await firstDisagreement(db.conn, termMatches, 200), undefined);
  });

  it('is what DuckDB calls: kql_term_match in SQL, nulls stay null', async () => {
    const rows = (
      await db.conn.runAndReadAll(
        `SELECT kql_term_match(t, 'key', 7) FROM (VALUES ('a \u212Aey'), ('monkey'), ('key\u0345'), ('—KEY—'), (NULL)) v(t)`,
      )
    ).getRowsJS();
    assert.deepEqual(
      rows.map(([x]) => x),
      [true, false, false, true, null],
    );
    assert.equal(
      termMatches('key\u0345', 'key', TERM_MATCH_BEFORE | TERM_MATCH_AFTER),
      true,
      'U+0345 is a boundary without (?i)',
    );
    assert.equal(isAsciiNeedle('café'), false);
    assert.throws(() => termMatches('café', 'café', TERM_MATCH_CASELESS));
  });

  it('catches a broken check: U+0345 taken as a boundary under (?i)', async () => {
    const broken = (text: string, needle: string, flags: number) => termMatches(text.replaceAll('\u0345', ' '), needle, flags);
    assert.notEqual(await firstDisagreement(db.conn, broken, 200, 37), undefined);
  });

  it('catches a broken check: the Kelvin sign not matched as k', async () => {
    const broken = (text: string, needle: string, flags: number) => termMatches(text.replaceAll('\u212A', '#'), needle, flags);
    assert.notEqual(await firstDisagreement(db.conn, broken, 200, 38), undefined);
  });
});
