/**
 * Term hints: what the gateway tells a worker about the constant `has` terms of a fragment's
 * filter, so that the worker's scan can leave out segments whose term index proves that no row
 * can match (docs/decisions/0026-has-term-index.md). The statement keeps the full term check, so
 * a worker that ignores the hints (an older one) still answers correctly.
 *
 * The contract between both sides is the key of a term: the lower-case ASCII letters and digits
 * of one maximal run of letters and digits. The worker's index holds, per segment and string
 * column, the keys of every maximal run of ASCII letters, digits, U+212A KELVIN SIGN and U+017F
 * LONG S in its texts, folded to lower case (the Kelvin sign to `k`, the long s to `s`: the only
 * non-ASCII characters RE2's `(?i)` matches with an ASCII letter): a superset of the keys of the
 * whole terms that match (worker/src/storage/term-index.ts).
 */

/**
 * One conjunct of a fragment's filter over a scan column: a row passes it only if, for at least
 * one of `anyOf`, every key of that alternative is a term of the row's `column`. `has "a-b"` is
 * one alternative with keys a and b; `has_any ("x", "y")` two alternatives; `has_all` one hint per
 * term.
 */
export interface TermHint {
  /** The scan's (stored) column name. */
  column: string;
  anyOf: string[][];
}

/** A key as it travels: what `termKeys` makes and a worker accepts. */
export const TERM_KEY = /^[a-z0-9]+$/;

/** Keys longer than this are not looked up (still sound: the hint is simply not sent). */
export const MAX_TERM_KEY_LENGTH = 256;

/**
 * The keys every match of `has`/`has_cs` with this constant needle implies, or undefined when the
 * needle gives none that is safe to look up.
 *
 * Why every maximal run of letters and digits of the needle is a whole term of a matching text:
 * the term regex (termRegex in the gateway's expr-binder.ts) requires a non-letter, non-digit (or
 * the text's edge) before a needle that starts with a letter or digit and after one that ends
 * with one, and inside the needle a run is delimited by the needle's own other characters, which
 * the text repeats. Under `(?i)` RE2's boundary class `[^\p{L}\p{N}]` only shrinks (it drops
 * U+0345, which folds to a letter), so a boundary there is a boundary of the index's term cut too.
 *
 * Only ASCII needles: an ASCII letter matches only its two cases, and k and s also U+212A and
 * U+017F, all of which the index folds to the key. Non-ASCII needles would need RE2's Unicode
 * tables (case orbits, and which characters are letters: Node's and RE2's Unicode versions
 * differ), so they get no hint and are simply scanned.
 */
export function termKeys(needle: string): string[] | undefined {
  if (needle === '' || !/^\p{ASCII}*$/u.test(needle)) return undefined;
  const runs = needle.match(/[A-Za-z0-9]+/g);
  if (!runs) return undefined;
  const keys = [...new Set(runs.map((r) => r.toLowerCase()))];
  return keys.every((k) => k.length <= MAX_TERM_KEY_LENGTH) ? keys : undefined;
}

/**
 * Hints as a worker receives them, with anything malformed dropped (never refused: a hint only
 * narrows which segments are read, and dropping one reads more).
 */
export function checkedTermHints(hints: readonly TermHint[]): TermHint[] {
  const out: TermHint[] = [];
  for (const h of hints) {
    if (typeof h.column !== 'string' || h.column === '' || h.anyOf.length === 0) continue;
    const ok = h.anyOf.every(
      (alt) => alt.length > 0 && alt.every((k) => typeof k === 'string' && k.length <= MAX_TERM_KEY_LENGTH && TERM_KEY.test(k)),
    );
    if (ok) out.push({ column: h.column, anyOf: h.anyOf.map((a) => [...a]) });
  }
  return out;
}
