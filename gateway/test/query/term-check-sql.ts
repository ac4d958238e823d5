/**
 * The has family's SQL as the binder writes it, for the tests that compare it with the reference
 * regex in DuckDB (term-check.test.ts: the 0037 check against the regex; term-fold.test.ts: the
 * same on a lower-cased copy).
 */
import { inlineParams } from '@strata/common';
import fc from 'fast-check';
import { termRegex } from '../../src/query/semantic/expr-binder.js';
import { termCheckSql } from '../../src/query/semantic/term-check.js';
import { affixRegex } from '../../src/query/semantic/term-operators.js';
import { render, Sql } from '../../src/query/sql/sql.js';

export type TermKind = 'term' | 'prefix' | 'suffix';

/** SQL text of a string literal. */
export const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The reference regex of has (kind 'term'), hasprefix or hassuffix, `_cs` when `cs`. */
export const termRegexOf = (kind: TermKind, needle: string, cs: boolean): string =>
  kind === 'term' ? termRegex(needle, cs) : affixRegex(needle, kind, cs);

/** The binder's exact check (decision 0037) over the SQL expression `subject`, parameters inlined. */
export function termCheckText(subject: string, kind: TermKind, needle: string, cs: boolean): string {
  const r = render(termCheckSql(new Sql([subject], []), needle, cs, kind, termRegexOf(kind, needle, cs)));
  const text = inlineParams(r.text, r.params);
  if (text === undefined) throw new Error('parameters that do not inline');
  return text;
}

/**
 * Texts of pieces of `alphabet` and of the needle in any of its case forms (with the Kelvin sign
 * and the long s, which RE2 folds to k and s; with U+0130/U+0131 for an i when `dottedI`), or
 * NULL: the texts the has family's property tests compare the binder's SQL on.
 */
export function termTextArb(needle: string, alphabet: readonly string[], dottedI = false): fc.Arbitrary<string | null> {
  const forms = (c: string) => {
    const out = new Set([c, c.toLowerCase(), c.toUpperCase()]);
    if (dottedI && c.toLowerCase() === 'i') out.add('\u0130').add('\u0131');
    if (c.toLowerCase() === 'k') out.add('\u212A');
    if (c.toLowerCase() === 's') out.add('\u017F');
    return [...out].filter((v) => [...v].length === 1);
  };
  const caseForm = fc.tuple(...[...needle].map((c) => fc.constantFrom(...forms(c)))).map((cs) => cs.join(''));
  return fc.option(
    fc.array(fc.oneof(fc.constantFrom(...alphabet), caseForm), { maxLength: 8 }).map((ps) => ps.join('')),
    { freq: 20 },
  );
}
