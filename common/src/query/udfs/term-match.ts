/**
 * The exact `has`-family term check on one text, for ASCII needles, answering what the binder's
 * RE2 term regex answers (gateway termRegex / affixRegex: `(?i)` optional, then
 * `(?:^|[^\p{L}\p{N}])` before the escaped needle when it starts with a letter or digit and
 * `(?:[^\p{L}\p{N}]|$)` after it when it ends with one; decision 0026).
 *
 * Why it exists (decision 0037): RE2 compiles the Unicode class `[^\p{L}\p{N}]` into a large
 * UTF-8 automaton, and DuckDB compiles a constant pattern at bind, again for its match range, and
 * once per thread and per union branch that evaluates it: 4–8 ms per query and per scan branch,
 * more than a `has` over a segment the term index left out costs otherwise. The binder now writes
 * a cheap regex with ASCII boundaries (exact where the needle's neighbours are ASCII), a cheap
 * regex that finds an occurrence next to a non-ASCII character, and calls this function only for
 * the texts the second finds and the first does not (term-check.ts in the gateway).
 *
 * What RE2 does, which this repeats character for character:
 * - An ASCII needle character without case matches only itself, also under `(?i)`; an ASCII
 *   letter matches its two cases, k also U+212A KELVIN SIGN and s also U+017F LONG S (checked
 *   over every code point in gateway/test/query/string-prefilter.test.ts).
 * - `^` and `$` are the start and end of the whole text (no multi-line mode).
 * - A boundary character is any code point outside `[\p{L}\p{N}]` as RE2's tables have it, folded
 *   under `(?i)` (term-chars.ts, checked over every code point against DuckDB).
 */
import { BIGINT, BOOLEAN, VARCHAR } from '@duckdb/node-api';
import { isTermChar } from '../term-chars.js';
import { int, scalarUdf } from './scalar-udf.js';

/** Flags of kql_term_match: match case-insensitively, require a boundary before, after. */
export const TERM_MATCH_CASELESS = 1;
export const TERM_MATCH_BEFORE = 2;
export const TERM_MATCH_AFTER = 4;

/** Whether a needle can be checked by termMatches: ASCII only (non-empty). */
export function isAsciiNeedle(needle: string): boolean {
  if (needle.length === 0) return false;
  for (let i = 0; i < needle.length; i++) if (needle.charCodeAt(i) > 0x7f) return false;
  return true;
}

const KELVIN = 0x212a;
const LONG_S = 0x17f;

/** Whether text unit `t` (one UTF-16 code unit) is matched by ASCII needle character `n`. */
function unitMatches(t: number, n: number, caseless: boolean): boolean {
  if (t === n) return true;
  if (!caseless) return false;
  const lower = n | 0x20;
  if (lower < 0x61 || lower > 0x7a) return false; // not a letter: only itself
  if (t === lower || t === (lower & ~0x20)) return true;
  return (lower === 0x6b && t === KELVIN) || (lower === 0x73 && t === LONG_S);
}

/** The code point that ends just before UTF-16 index i of text (i > 0). */
function codePointBefore(text: string, i: number): number {
  const low = text.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = text.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return ((high - 0xd800) << 10) + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/**
 * Whether `text` holds the ASCII `needle` as the term regex with these flags matches it. The needle's
 * characters each match one code unit: every character an ASCII character matches under (?i) is in
 * the Basic Multilingual Plane.
 */
export function termMatches(text: string, needle: string, flags: number): boolean {
  if (!isAsciiNeedle(needle)) throw new Error('kql_term_match takes ASCII needles only');
  const caseless = (flags & TERM_MATCH_CASELESS) !== 0;
  const before = (flags & TERM_MATCH_BEFORE) !== 0;
  const after = (flags & TERM_MATCH_AFTER) !== 0;
  const n = needle.length;
  for (let j = 0; j + n <= text.length; j++) {
    let i = 0;
    while (i < n && unitMatches(text.charCodeAt(j + i), needle.charCodeAt(i), caseless)) i++;
    if (i < n) continue;
    if (before && j > 0 && isTermChar(codePointBefore(text, j), caseless)) continue;
    if (after && j + n < text.length && isTermChar(text.codePointAt(j + n) as number, caseless)) continue;
    return true;
  }
  return false;
}

export const TERM_MATCH_UDFS = [
  () =>
    scalarUdf({
      name: 'kql_term_match',
      params: [VARCHAR, VARCHAR, BIGINT],
      returns: BOOLEAN,
      row: ([text, needle, flags]) =>
        typeof text === 'string' && typeof needle === 'string' ? termMatches(text, needle, int(flags) ?? 0) : null,
    }),
];
