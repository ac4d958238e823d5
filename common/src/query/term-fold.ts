/**
 * The term fold of a text column (decision 0041, stored since decision 0045): the column a
 * worker may keep next to a String column of a segment, holding `lower(replace(x, 'İ', 'ı'))`,
 * so the case-insensitive `has` family for ASCII needles is checked on the fold alone — its
 * substring prefilter a plain byte search, its exact check (decision 0037) unchanged — without
 * lowering, or even decompressing, the text column at query time.
 *
 * Why not plain lower(): DuckDB's lower() maps U+0130 (İ) to ASCII `i` although RE2's `(?i)i` does
 * not match it; the fold turns it into U+0131 (ı, matched by no ASCII character) first. Proved
 * over every code point and by property tests in gateway/test/query/term-fold.test.ts.
 *
 * A fragment reads the fold of source column `c` as the source column `#fold:c` (`#` cannot start
 * a field name, so it never clashes with a data column). Whoever binds the fragment's source
 * exposes it: a worker's scan from the segment files that store it, computed elsewhere (hot rows,
 * Parquet and older segments), and boundStatement computes it over any relation that lacks it, so
 * a relation without stored folds answers the same.
 */

/** Prefix of the source column holding a column's term fold. */
export const TERM_FOLD_PREFIX = '#fold:';

/** The source column name of the term fold of `column`. */
export function termFoldColumn(column: string): string {
  return `${TERM_FOLD_PREFIX}${column}`;
}

/** The column whose fold `name` is, or undefined when `name` is not a fold column. */
export function foldedColumn(name: string): string | undefined {
  return name.startsWith(TERM_FOLD_PREFIX) && name.length > TERM_FOLD_PREFIX.length
    ? name.slice(TERM_FOLD_PREFIX.length)
    : undefined;
}

/**
 * SQL of the term fold of the text expression `expr` (NULL stays NULL): `lower(replace(x, 'İ',
 * 'ı'))`, with the replace only for texts that hold an İ. Why: DuckDB's replace() copies every
 * text and measured ~3× the cost of lower() on log messages (2 M rows, one thread: lower 286 ms,
 * replace alone 897, this form 278, the byte search for İ 54), so the plain form made the fold at
 * seal, and wherever it is computed at query time, several times dearer than lower().
 */
export function termFoldSql(expr: string): string {
  return `(CASE WHEN contains(${expr}, '\u0130') THEN lower(replace(${expr}, '\u0130', '\u0131')) ELSE lower(${expr}) END)`;
}
