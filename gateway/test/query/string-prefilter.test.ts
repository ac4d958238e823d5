/**
 * The substring prefilters put before string operators' exact checks (string-prefilter.ts,
 * decision 0033) must never reject a text the exact check accepts: then `prefilter AND check`
 * counts exactly what `check` alone counts. Checked in DuckDB itself (its RE2 and its lower()):
 * exhaustively over every code point for the character facts the prefilters rest on, and by
 * property tests over needles and texts built around case folding (U+212A KELVIN SIGN folds to k,
 * U+017F LONG S to s, dotted and dotless i, sharp s, final sigma, non-ASCII letters), punctuation
 * and regex metacharacters inside needles, term boundaries, empty and one-character needles and
 * NULL texts. A prefilter broken on purpose must make the same property fail.
 */
import assert from 'node:assert/strict';
import type { DuckDBConnection } from '@duckdb/node-api';
import { memoryDuckDB } from '@strata/common/testing';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { termRegex } from '../../src/query/semantic/expr-binder.js';
import {
  caselessPiece,
  loweredCheckPrefilter,
  type Prefilter,
  regexLiteralPrefilter,
} from '../../src/query/semantic/string-prefilter.js';
import { affixRegex } from '../../src/query/semantic/term-operators.js';

const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The prefilter as SQL over column t (what prefilterSql writes, with the pieces inlined). */
function preSql(p: Prefilter): string {
  const parts: string[] = [];
  if (p.exact !== undefined) parts.push(`contains(t, ${lit(p.exact)})`);
  if (p.lowered !== undefined) parts.push(`contains(lower(t), ${lit(p.lowered)})`);
  return parts.length === 0 ? 'true' : parts.join(' AND ');
}

/** Each operator: its exact check over column t, as the binder writes it, and its prefilter. */
interface Operator {
  name: string;
  check: (needle: string) => string;
  prefilter: (needle: string) => Prefilter;
}

const OPERATORS: Operator[] = [
  ...[false, true].map((cs) => ({
    name: cs ? 'has_cs' : 'has',
    check: (n: string) => `regexp_matches(t, ${lit(termRegex(n, cs))})`,
    prefilter: (n: string) => regexLiteralPrefilter(n, cs),
  })),
  ...(['prefix', 'suffix'] as const).flatMap((kind) =>
    [false, true].map((cs) => ({
      name: `has${kind}${cs ? '_cs' : ''}`,
      check: (n: string) => `regexp_matches(t, ${lit(affixRegex(n, kind, cs))})`,
      prefilter: (n: string) => regexLiteralPrefilter(n, cs),
    })),
  ),
  { name: 'contains', check: (n) => `contains(lower(t), lower(${lit(n)}))`, prefilter: loweredCheckPrefilter },
  { name: 'startswith', check: (n) => `starts_with(lower(t), lower(${lit(n)}))`, prefilter: loweredCheckPrefilter },
  { name: 'endswith', check: (n) => `ends_with(lower(t), lower(${lit(n)}))`, prefilter: loweredCheckPrefilter },
];

/** Characters around case folding, term boundaries and regex syntax. */
const ALPHABET = [
  ...'abkKsStTiIoOuU09-3._ /\\()[]*+?$^|{}:,\'"\t',
  '\u212A', // KELVIN SIGN: (?i) k; lower() k
  '\u017F', // LONG S: (?i) s; lower() leaves it
  '\u0130', // LATIN CAPITAL I WITH DOT ABOVE
  '\u0131', // LATIN SMALL DOTLESS I
  'é',
  'É',
  'ß',
  '\u1E9E', // CAPITAL SHARP S
  'Σ',
  'σ',
  'ς',
  'µ',
  'μ',
  '\u212B', // ANGSTROM SIGN
  'Å',
  'ǅ',
  'ﬀ',
  '日',
];

/** The text forms (?i) or lower() may match for one character of a needle. */
function variants(c: string): string[] {
  const out = new Set([c, c.toLowerCase(), c.toUpperCase()]);
  if (c.toLowerCase() === 'k') out.add('\u212A');
  if (c.toLowerCase() === 's') out.add('\u017F');
  if (c.toLowerCase() === 'i') {
    out.add('\u0130');
    out.add('\u0131');
  }
  return [...out].filter((v) => [...v].length === 1);
}

const needleArb = fc.array(fc.constantFrom(...ALPHABET), { minLength: 0, maxLength: 6 }).map((cs) => cs.join(''));

/** Texts that hold the needle in some case form, between boundary-testing characters. */
function textArb(needle: string): fc.Arbitrary<string | null> {
  const caseForm = fc.tuple(...[...needle].map((c) => fc.constantFrom(...variants(c)))).map((cs) => cs.join(''));
  const piece = fc.oneof(fc.constantFrom(...ALPHABET), needle === '' ? fc.constant('') : caseForm);
  return fc.option(
    fc.array(piece, { maxLength: 8 }).map((ps) => ps.join('')),
    { freq: 20 },
  );
}

/**
 * For each operator, texts the check accepts that the prefilter rejects (a broken superset), and
 * whether `prefilter AND check` counts what `check` counts.
 */
async function violations(
  conn: DuckDBConnection,
  needle: string,
  texts: (string | null)[],
  operators: Operator[],
): Promise<string[]> {
  const rows = texts.map((t) => `(${t === null ? 'NULL' : lit(t)})`).join(', ');
  // One statement for all operators: per operator the count before, after, and the rejected texts.
  const columns = operators.flatMap((op) => {
    const check = op.check(needle);
    const pre = preSql(op.prefilter(needle));
    return [
      `count(*) FILTER (WHERE ${check})`,
      `count(*) FILTER (WHERE ${pre} AND ${check})`,
      `list(t) FILTER (WHERE ${check} AND NOT coalesce(${pre}, false))::VARCHAR`,
    ];
  });
  const [row] = (await conn.runAndReadAll(`SELECT ${columns.join(', ')} FROM (VALUES ${rows}) v(t)`)).getRows();
  const out: string[] = [];
  operators.forEach((op, i) => {
    const [before, after, rejected] = row!.slice(3 * i, 3 * i + 3);
    if (before !== after) out.push(`${op.name} ${JSON.stringify(needle)}: ${before} → ${after}, rejected ${rejected}`);
  });
  return out;
}

describe('string operator prefilters', function () {
  this.timeout(180_000);
  const db = memoryDuckDB();

  it('picks the pieces the decision describes', () => {
    assert.deepEqual(regexLiteralPrefilter('TimeOut', false), { lowered: 'timeout' });
    assert.deepEqual(regexLiteralPrefilter('TimeOut', true), { exact: 'TimeOut' });
    assert.deepEqual(regexLiteralPrefilter('2179ms', false), { exact: '2179', lowered: '2179m' });
    assert.deepEqual(regexLiteralPrefilter('status', false), { lowered: 'tatu' }, 's also folds from the long s');
    assert.deepEqual(regexLiteralPrefilter('ok', false), {}, 'k also folds from the Kelvin sign; "o" alone is too short');
    assert.deepEqual(regexLiteralPrefilter('café', false), { lowered: 'caf' });
    assert.deepEqual(regexLiteralPrefilter('db-3', false), { exact: '-3', lowered: 'db-3' });
    assert.deepEqual(regexLiteralPrefilter('', false), {});
    assert.deepEqual(loweredCheckPrefilter('db-3'), { exact: '-3' });
    assert.deepEqual(loweredCheckPrefilter('timeout'), {});
    assert.equal(caselessPiece('a  b'), undefined, 'whitespace alone is in most texts');
    assert.equal(caselessPiece('10.0.0.1'), '10.0.0.1');
  });

  // The facts over single characters, for every code point (surrogates are not text).
  const CODE_POINTS = `(SELECT range AS cp, chr(range::INTEGER) AS c FROM (SELECT range FROM range(1, 55296) UNION ALL SELECT range FROM range(57344, 1114112)))`;
  const CASELESS_CLASS = "'^[ -@\\[-`{-~]$'";

  it('RE2 (?i) matches an ASCII character without case only by itself (every code point)', async () => {
    const [[n]] = (
      await db.conn.runAndReadAll(
        `SELECT count(*) FROM ${CODE_POINTS} WHERE regexp_matches(c, '(?i)' || ${CASELESS_CLASS}) AND cp > 126`,
      )
    ).getRows();
    assert.equal(Number(n), 0);
  });

  it('RE2 (?i) matches ASCII letters from outside ASCII only by the Kelvin sign (k) and the long s (s)', async () => {
    const rows = (
      await db.conn.runAndReadAll(
        `SELECT cp, lower(c) FROM ${CODE_POINTS} WHERE regexp_matches(c, '(?i)^[a-z]$') AND cp > 126 ORDER BY cp`,
      )
    ).getRows();
    assert.deepEqual(
      rows.map(([cp]) => Number(cp)),
      [0x17f, 0x212a],
    );
  });

  it('lower() maps each code point to one code point, and only ASCII characters without case to themselves', async () => {
    const [[multi]] = (await db.conn.runAndReadAll(`SELECT count(*) FROM ${CODE_POINTS} WHERE length(lower(c)) <> 1`)).getRows();
    assert.equal(Number(multi), 0);
    const [[toCaseless]] = (
      await db.conn.runAndReadAll(
        `SELECT count(*) FROM ${CODE_POINTS} WHERE regexp_matches(lower(c), ${CASELESS_CLASS}) AND lower(c) <> c`,
      )
    ).getRows();
    assert.equal(Number(toCaseless), 0);
    const [[asciiLetters]] = (
      await db.conn.runAndReadAll(
        `SELECT count(*) FROM ${CODE_POINTS} WHERE cp BETWEEN 65 AND 90 AND lower(c) <> chr((cp + 32)::INTEGER)`,
      )
    ).getRows();
    assert.equal(Number(asciiLetters), 0);
  });

  it('lower() works code point by code point on texts', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...ALPHABET), { maxLength: 12 }), async (chars) => {
        const whole = lit(chars.join(''));
        const each = chars.length === 0 ? "''" : chars.map((c) => `lower(${lit(c)})`).join(' || ');
        const [[same]] = (await db.conn.runAndReadAll(`SELECT lower(${whole}) = ${each}`)).getRows();
        assert.equal(same, true, `lower(${whole})`);
      }),
      { numRuns: 200 },
    );
  });

  it('never rejects a text the exact check accepts, so the counts stay the same', async () => {
    let prefiltered = 0;
    await fc.assert(
      fc.asyncProperty(
        needleArb.chain((needle) => fc.tuple(fc.constant(needle), fc.array(textArb(needle), { minLength: 1, maxLength: 30 }))),
        async ([needle, texts]) => {
          if (OPERATORS.some((op) => preSql(op.prefilter(needle)) !== 'true')) prefiltered++;
          assert.deepEqual(await violations(db.conn, needle, texts, OPERATORS), []);
        },
      ),
      { numRuns: 300 },
    );
    assert.ok(prefiltered > 100, `needles with a prefilter: ${prefiltered}`);
  });

  /** The exactness property for `operators` alone: resolves when no prefilter rejects a match. */
  const noViolations = (operators: Operator[]) =>
    fc.assert(
      fc.asyncProperty(
        needleArb.chain((needle) => fc.tuple(fc.constant(needle), fc.array(textArb(needle), { minLength: 1, maxLength: 30 }))),
        async ([needle, texts]) => {
          assert.deepEqual(await violations(db.conn, needle, texts, operators), []);
        },
      ),
      { numRuns: 2000 },
    );

  it('catches a broken prefilter: the long s and the Kelvin sign taken as plain s and k', async () => {
    const broken: Operator[] = OPERATORS.filter((op) => op.name === 'has').map((op) => ({
      ...op,
      name: 'has (broken)',
      prefilter: (n: string) => {
        const lowered = n.toLowerCase();
        return /^[ -~]{2,}$/.test(n) && /[a-z]/.test(lowered) ? { lowered } : {};
      },
    }));
    await assert.rejects(noViolations(broken), /Property failed/);
  });

  it('catches a broken prefilter: a letter taken as caseless for contains', async () => {
    const broken: Operator[] = OPERATORS.filter((op) => op.name === 'contains').map((op) => ({
      ...op,
      name: 'contains (broken)',
      prefilter: (n: string) => (n.length >= 2 ? { exact: n } : {}),
    }));
    await assert.rejects(noViolations(broken), /Property failed/);
  });
});
