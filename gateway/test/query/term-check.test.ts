/**
 * The `has`-family check the binder writes for ASCII needles (term-check.ts, decision 0037) must
 * answer, for every text, exactly what the term regex answers (termRegex / affixRegex: the check
 * before this change). Run in DuckDB with the engine's functions registered, for has, has_cs,
 * hasprefix, hassuffix and their _cs forms, over needles of ASCII letters (k and s among them),
 * digits, punctuation, spaces and regex metacharacters (and non-ASCII needles, which keep the
 * regex), and texts built from the needle in every case form among boundary-testing characters:
 * ASCII punctuation, non-ASCII letters, digits and non-letters, astral characters, U+0345 (a
 * boundary, but not under (?i)), the Kelvin sign and the long s, NULL. The form broken on purpose
 * (a letter in the ASCII boundary class; the non-ASCII test on one side only) must fail.
 */
import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import { memoryDuckDB } from '@strata/common/testing';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { lit, type TermKind, termCheckText, termRegexOf, termTextArb } from './term-check-sql.js';

interface Form {
  name: string;
  kind: TermKind;
  cs: boolean;
}

const FORMS: Form[] = (['term', 'prefix', 'suffix'] as const).flatMap((kind) =>
  [false, true].map((cs) => ({ name: `${kind === 'term' ? 'has' : `has${kind}`}${cs ? '_cs' : ''}`, kind, cs })),
);

const regexOf = (f: Form, needle: string) => termRegexOf(f.kind, needle, f.cs);

/** The binder's check over column t, with its parameters inlined. */
const checkSql = (f: Form, needle: string) => termCheckText('t', f.kind, needle, f.cs);

const ALPHABET = [
  ...'abkKsSxX09 -._/:()[]*+?$^|\\\'"\t',
  '\u212A',
  '\u017F',
  '\u0345',
  'é',
  'É',
  'ß',
  '日',
  '٣',
  '\u00A0',
  '—',
  '\u{1D400}',
  '\u{1F600}',
];

const needleArb = fc
  .oneof(
    { weight: 9, arbitrary: fc.array(fc.constantFrom(...'abkKsSxX09-._/:( $*'), { minLength: 1, maxLength: 5 }) },
    { weight: 1, arbitrary: fc.array(fc.constantFrom('a', 'é', '日', 'k', '-'), { minLength: 1, maxLength: 3 }) },
  )
  .map((cs) => cs.join(''));

function textArb(needle: string): fc.Arbitrary<string | null> {
  return termTextArb(needle, ALPHABET);
}

/** Per form, the texts where `check` and the term regex answer differently (NULL included). */
async function differences(
  conn: DuckDBConnection,
  needle: string,
  texts: (string | null)[],
  check: (f: Form, needle: string) => string,
): Promise<string[]> {
  const rows = texts.map((t) => `(${t === null ? 'NULL' : lit(t)})`).join(', ');
  const columns = FORMS.map(
    (f) => `list(t) FILTER (WHERE (${check(f, needle)}) IS DISTINCT FROM regexp_matches(t, ${lit(regexOf(f, needle))}))::VARCHAR`,
  );
  const [row] = (await conn.runAndReadAll(`SELECT ${columns.join(', ')} FROM (VALUES ${rows}) v(t)`)).getRows();
  const out: string[] = [];
  FORMS.forEach((f, i) => {
    if (row![i] !== null) out.push(`${f.name} ${JSON.stringify(needle)}: differs on ${row![i]}`);
  });
  return out;
}

describe('has without the Unicode regex: the same answers as the term regex', function () {
  this.timeout(240_000);
  const db = memoryDuckDB({ kustoFunctions: true });

  /** The last counterexample's report (a difference, not an error of the SQL). */
  let lastFailure = '';
  const same = (check: (f: Form, needle: string) => string, runs: number) =>
    fc.assert(
      fc.asyncProperty(
        needleArb.chain((n) => fc.tuple(fc.constant(n), fc.array(textArb(n), { minLength: 1, maxLength: 30 }))),
        async ([needle, texts]) => {
          const found = await differences(db.conn, needle, texts, check);
          if (found.length > 0) lastFailure = found.join('; ');
          assert.deepEqual(found, []);
        },
      ),
      { numRuns: runs },
    );

  it('writes no Unicode class for an ASCII needle, and the regex for the others', () => {
    const has = FORMS[0]!;
    assert.doesNotMatch(checkSql(has, 'deadlock'), /\\p\{/);
    assert.match(checkSql(has, 'deadlock'), /kql_term_match/);
    assert.match(checkSql(has, 'café'), /\\p\{L\}/, 'a non-ASCII needle keeps the regex');
    assert.equal(
      checkSql(has, '--'),
      `regexp_matches(t, CAST(${lit('(?i)--')} AS VARCHAR))`,
      'no boundary to check: the plain regex',
    );
  });

  it('answers what the term regex answers, for every text (property)', async () => {
    await same(checkSql, 250);
  });

  it('catches a broken form: a letter in the ASCII boundary class', async () => {
    const broken = (f: Form, needle: string) => checkSql(f, needle).replaceAll('\\x7b-\\x7f', '\\x78-\\x7f');
    lastFailure = '';
    await assert.rejects(same(broken, 1000), /Property failed/);
    assert.match(lastFailure, /differs on/);
  });

  it('catches a broken form: a non-ASCII neighbour looked for before the needle only', async () => {
    const broken = (f: Form, needle: string) => checkSql(f, needle).replace(/\(\?:(\[\^\\x00-\\x7f\][^|]*)\|[^']*\)'/, "$1'");
    lastFailure = '';
    await assert.rejects(same(broken, 1000), /Property failed/);
    assert.match(lastFailure, /differs on/);
  });
});
