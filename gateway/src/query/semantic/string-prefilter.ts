/**
 * Cheap substring tests put before a string operator's exact check, so the exact check (an RE2
 * term regex, or contains/starts_with/ends_with over lower()) runs only on candidate rows
 * (decision 0033). A prefilter is only ever a superset: every row the exact check accepts passes
 * it, so AND-ing it in front cannot change an answer, only how many rows reach the costly part.
 *
 * Two kinds, by what each costs DuckDB per row:
 * - `exact`: a substring the subject itself must hold, tested with contains(subject, …): a byte
 *   search, no copy (about half the cost of the lowered test on the bench's messages).
 * - `lowered`: a substring lower(subject) must hold: lower() copies every row's text first.
 *
 * Why the pieces are safe (checked exhaustively over every code point in DuckDB, and by property
 * tests, in gateway/test/query/string-prefilter.test.ts):
 * - An ASCII character that is not a letter has no case: RE2's (?i) matches it only by itself, and
 *   no character's lower() is such a character except itself. So a run of those characters in the
 *   needle is in every matching text byte for byte (`exact`), for `has` and for `contains` alike.
 * - An ASCII letter other than k and s folds under (?i) only to its other ASCII case, and lower()
 *   maps both to the small letter, one code point for one code point. k also folds from U+212A
 *   KELVIN SIGN and s from U+017F LONG S: lower() maps the Kelvin sign to k but leaves the long s
 *   alone, so a run of ASCII characters other than k/K/s/S, lowered, is in the lower() of every
 *   text the (?i) regex matches (`lowered`). For `contains`, whose exact check is itself over
 *   lower(), a lowered piece would test the same thing twice: only `exact` is used there.
 */
import { type Sql, sql, str } from '../sql/sql.js';

export interface Prefilter {
  /** A substring every matching subject holds byte for byte. */
  exact?: string;
  /** A substring the lower() of every matching subject holds. */
  lowered?: string;
}

/** Shorter pieces match almost every row: the test would cost more than it saves. */
const MIN_PIECE = 2;

/** Printable ASCII (space to ~): control characters are left to the exact check. */
const printable = (c: string) => c >= ' ' && c <= '~';
const letter = (c: string) => (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
/** ASCII characters without case: digits, punctuation, space. */
const caseless = (c: string) => printable(c) && !letter(c);
/** ASCII letters (?i) also matches from outside ASCII: U+212A KELVIN SIGN, U+017F LONG S. */
const foldsFromNonAscii = (c: string) => c === 'k' || c === 'K' || c === 's' || c === 'S';

/** The longest run of characters of the needle that `accept` takes (the first of equal length). */
function longestRun(needle: string, accept: (c: string) => boolean): string {
  let best = '';
  let run = '';
  for (const c of needle) {
    if (accept(c)) {
      run += c;
      if (run.length > best.length) best = run;
    } else run = '';
  }
  return best;
}

/** A piece worth testing: long enough, and not whitespace only (spaces are in most texts). */
function worth(piece: string): boolean {
  return piece.length >= MIN_PIECE && piece.trim() !== '';
}

/** The longest run of ASCII characters without case in the needle, when worth testing. */
export function caselessPiece(needle: string): string | undefined {
  const run = longestRun(needle, caseless);
  return worth(run) ? run : undefined;
}

/**
 * The prefilter of a needle matched as RE2 matches its regex-escaped literal: case-sensitively
 * (has_cs, hasprefix_cs, …: the needle itself, byte for byte) or under (?i) (has, hasprefix, …).
 */
export function regexLiteralPrefilter(needle: string, caseSensitive: boolean): Prefilter {
  if (needle === '') return {};
  if (caseSensitive) return { exact: needle };
  const exact = caselessPiece(needle);
  const run = longestRun(needle, (c) => printable(c) && !foldsFromNonAscii(c)).toLowerCase();
  // A run without letters is caseless: the exact piece (the longest such run) covers it, cheaper.
  const lowered = worth(run) && /[a-z]/.test(run) && run.length > (exact?.length ?? 0) ? run : undefined;
  return { ...(exact !== undefined ? { exact } : {}), ...(lowered !== undefined ? { lowered } : {}) };
}

/**
 * The prefilter of a case-insensitive needle tested on the term fold of the subject (decision
 * 0045): the fold is lower-cased already, so the lowered piece is a plain byte search on it, as
 * the caseless piece is (the fold keeps ASCII characters without case as they are); one search,
 * the longer piece.
 */
export function foldPrefilter(needle: string): Prefilter {
  const p = regexLiteralPrefilter(needle, false);
  const piece = p.lowered ?? p.exact;
  return piece === undefined ? {} : { exact: piece };
}

/**
 * The prefilter of contains / startswith / endswith (case-insensitive), whose exact check is
 * over lower(subject) and lower(needle): the caseless piece only.
 */
export function loweredCheckPrefilter(needle: string): Prefilter {
  const exact = caselessPiece(needle);
  return exact === undefined ? {} : { exact };
}

/** The prefilter as SQL over `subject`, or undefined when it has no piece. */
export function prefilterSql(subject: Sql, p: Prefilter): Sql | undefined {
  const parts: Sql[] = [];
  // The byte search first: lower() then runs on the rows it lets through only.
  if (p.exact !== undefined) parts.push(sql`contains(${subject}, ${str(p.exact)})`);
  if (p.lowered !== undefined) parts.push(sql`contains(lower(${subject}), ${str(p.lowered)})`);
  if (parts.length === 0) return undefined;
  return parts.reduce((acc, part) => sql`${acc} AND ${part}`);
}

/** `check`, with the prefilter in front of it where there is one. */
export function prefiltered(subject: Sql, p: Prefilter, check: Sql): Sql {
  const pre = prefilterSql(subject, p);
  return pre === undefined ? check : sql`(${pre} AND ${check})`;
}
