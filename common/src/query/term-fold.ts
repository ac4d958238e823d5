/**
 * The term fold of a text: what a stored lower-cased copy of a text column must hold so that the
 * case-insensitive `has` family can be checked on the copy alone, without reading (or lowering)
 * the original column (decision 0041).
 *
 * Why not plain `lower()`: DuckDB's lower() maps every code point to one code point, keeps RE2's
 * term class `(?i)[^\p{L}\p{N}]` and, for every ASCII character a, keeps whether `(?i)a` matches —
 * except for U+0130 (LATIN CAPITAL LETTER I WITH DOT ABOVE), which lower() maps to ASCII `i`
 * although RE2's `(?i)i` does not match it (Unicode's simple case folding leaves U+0130 alone).
 * Plain lower() would make `has "id"` true for "İd". The fold first turns U+0130 into U+0131
 * (dotless i: a letter, its own lower case, matched by no ASCII character under `(?i)`), then
 * lowers. Checked over every code point in DuckDB itself, and by property tests against the term
 * regex on the original text (gateway/test/query/term-fold.test.ts).
 *
 * So, for an ASCII needle and a case-insensitive operator (has, hasprefix, hassuffix, the terms of
 * has_all/has_any, their negations), the term regex — and the cheaper exact check of decision
 * 0037 — answer on `fold(x)` what they answer on `x`, and the 0033 "lowered" prefilter is a plain
 * byte search `contains(fold(x), piece)` with no lower() at query time.
 */
/** SQL of the term fold of the text expression `expr` (a NULL stays NULL). */
export function termFoldSql(expr: string): string {
  return `lower(replace(${expr}, '\u0130', '\u0131'))`;
}
