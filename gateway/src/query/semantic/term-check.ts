/**
 * The exact check of `has`, `has_cs`, `hasprefix`, `hassuffix` (and their `_cs` forms, and each
 * term of `has_all`) for an ASCII needle, written so DuckDB never compiles RE2's Unicode class
 * (decision 0037).
 *
 * Why: the term regex (termRegex: `(?i)(?:^|[^\p{L}\p{N}])needle(?:[^\p{L}\p{N}]|$)`) is exact but
 * its class compiles into a large UTF-8 automaton, and DuckDB compiles a constant pattern at bind,
 * for its match range, and again per thread for every scan branch that evaluates it: measured
 * 4–8 ms per query and per branch, the whole cost of a `has` whose term index leaves out every
 * segment, and tens of ms over a 20-segment scan.
 *
 * What is written instead, with A = the ASCII characters that are not letters or digits (RE2 counts
 * exactly the ASCII letters and digits as `[\p{L}\p{N}]`, term-chars.ts):
 *
 *   CASE WHEN x IS NULL THEN NULL
 *        WHEN regexp_matches(x, F) THEN true      -- F: the term regex with A for the boundary class
 *        WHEN regexp_matches(x, S) THEN kql_term_match(x, needle, flags)
 *        ELSE false END                            -- S: the needle next to a non-ASCII character
 *
 * Exact, because for every text: F matching implies the term regex matches (A is inside the
 * boundary class, under (?i) too). If the term regex matches and F does not, the matching
 * occurrence has a required boundary that is a non-ASCII character (were both ASCII or an edge of
 * the text, F would match it there), so S matches; and kql_term_match is the term regex's answer
 * itself (common udfs/term-match.ts). Otherwise the answer is false. A NULL text stays NULL, as
 * with regexp_matches. CASE evaluates each THEN only on the rows its WHEN selects, so the JS
 * function runs only for texts holding the needle next to a non-ASCII character that F did not
 * accept. Checked against the term regex by property tests (gateway/test/query/term-check.test.ts).
 *
 * Needles with non-ASCII characters keep the regex (their (?i) case orbits would need RE2's fold
 * tables in JS), and so do needles with no boundary to check (the regex then has no class).
 */
import { isAsciiNeedle, TERM_MATCH_AFTER, TERM_MATCH_BEFORE, TERM_MATCH_CASELESS } from '@strata/common';
import { int, type Sql, sql, str } from '../sql/sql.js';

/** RE2 class of the ASCII characters that are neither letters nor digits. */
const ASCII_BOUNDARY = '[\\x00-\\x2f\\x3a-\\x40\\x5b-\\x60\\x7b-\\x7f]';
/** RE2 class of every non-ASCII character (one range: cheap to compile). */
const NON_ASCII = '[^\\x00-\\x7f]';

const alnum = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9]$/.test(c);

/** RE2 escape of an ASCII needle, matched case-insensitively unless `caseSensitive`. */
function literal(needle: string, caseSensitive: boolean): string {
  const escaped = needle.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return caseSensitive ? escaped : `(?i:${escaped})`;
}

/**
 * The exact check of `subject` holding `needle` as a term ('term': boundaries on both sides where
 * the needle starts/ends with a letter or digit), a term prefix ('prefix': before only) or a term
 * suffix ('suffix': after only). `regex` is the operator's term regex, used as it is where this
 * form does not apply.
 */
export function termCheckSql(
  subject: Sql,
  needle: string,
  caseSensitive: boolean,
  kind: 'term' | 'prefix' | 'suffix',
  regex: string,
): Sql {
  const before = kind !== 'suffix' && alnum(needle[0]);
  const after = kind !== 'prefix' && alnum(needle[needle.length - 1]);
  if (!isAsciiNeedle(needle) || (!before && !after)) return sql`regexp_matches(${subject}, ${str(regex)})`;
  const n = literal(needle, caseSensitive);
  const fast = `${before ? `(?:^|${ASCII_BOUNDARY})` : ''}${n}${after ? `(?:${ASCII_BOUNDARY}|$)` : ''}`;
  const sides = [...(before ? [`${NON_ASCII}${n}`] : []), ...(after ? [`${n}${NON_ASCII}`] : [])];
  const nextToNonAscii = sides.length === 1 ? sides[0]! : `(?:${sides.join('|')})`;
  const flags = (caseSensitive ? 0 : TERM_MATCH_CASELESS) | (before ? TERM_MATCH_BEFORE : 0) | (after ? TERM_MATCH_AFTER : 0);
  return sql`(CASE WHEN ${subject} IS NULL THEN NULL WHEN regexp_matches(${subject}, ${str(fast)}) THEN true WHEN regexp_matches(${subject}, ${str(nextToNonAscii)}) THEN kql_term_match(${subject}, ${str(needle)}, ${int(flags)}) ELSE false END)`;
}
