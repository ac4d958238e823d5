/**
 * Stored term folds (docs/decisions/0045-stored-term-fold.md): a 'duckdb' segment file may hold,
 * next to a String column c of its `rows` table, the column `#fold:c` = the term fold of c
 * (common/src/query/term-fold.ts). A `has`-family query for an ASCII needle then reads the fold
 * alone: its prefilter is a byte search and the exact check runs on it, without lowering (nor
 * decompressing) c.
 *
 * Which columns: a seal or rewrite folds the String columns that hold free text — in a sample of
 * the rows written, values of at least FOLD_MIN_AVG_BYTES bytes on average, most of them with a
 * space (several terms in one value: log messages, user agents). Why: the fold is a second copy of
 * the column (bytes, and lower() at every seal and rewrite), paid whether or not the column is
 * ever searched; free text is what `has` searches, and where lowering costs most at query time.
 * Identifiers, paths, hosts, levels (one token, or short) are left alone: their `has` lowers them
 * at query time, as before.
 *
 * Which files have a fold is read from the files themselves (storedFolds in segment-format.ts),
 * not recorded in the catalog: a file is immutable and carries its folds wherever it is copied
 * (drain, replication). Files without a fold (Parquet, 'duckdb' files written before 0045, columns
 * not chosen) answer through the fold computed at scan time, and get a stored one when a
 * compaction or a purge rewrites them.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnSchema, type ColumnTypeName, quoteIdentifier, termFoldColumn, termFoldSql } from '@strata/common';

/** Free text: sampled values average at least this many bytes… */
export const FOLD_MIN_AVG_BYTES = 24;

/** …and at least this share of the sampled values holds a space. */
export const FOLD_MIN_SPACED_SHARE = 0.5;

/** Rows sampled (the first ones written) to decide which columns are free text. */
export const FOLD_SAMPLE_ROWS = 16_384;

/**
 * The String columns of `columns` whose fold a segment written from `sources` (relations usable
 * in FROM holding those columns: the hot table, or the segments a rewrite merges) stores: free
 * text, judged on FOLD_SAMPLE_ROWS rows taken evenly from the sources' first rows (so a merge of
 * segments of different texts is judged on all of them). NULLs do not count.
 */
export async function chooseFoldColumns(
  conn: DuckDBConnection,
  sources: readonly string[],
  columns: readonly ColumnSchema[],
): Promise<string[]> {
  const strings = columns.filter((c) => c.type === 'String');
  if (strings.length === 0 || sources.length === 0) return [];
  const avgs = strings.map((c, i) => {
    const q = quoteIdentifier(c.name);
    return `avg(strlen(${q})) AS a${i}, avg(CAST(contains(${q}, ' ') AS DOUBLE)) AS s${i}`;
  });
  const list = strings.map((c) => quoteIdentifier(c.name)).join(', ');
  const each = Math.ceil(FOLD_SAMPLE_ROWS / sources.length);
  const sample = sources.map((s) => `(SELECT ${list} FROM ${s} LIMIT ${each})`).join(' UNION ALL ');
  const row = (await conn.runAndReadAll(`SELECT ${avgs.join(', ')} FROM (${sample})`)).getRowObjectsJS()[0] as Record<
    string,
    number | null
  >;
  return strings
    .filter((_, i) => (row[`a${i}`] ?? 0) >= FOLD_MIN_AVG_BYTES && (row[`s${i}`] ?? 0) >= FOLD_MIN_SPACED_SHARE)
    .map((c) => c.name);
}

/**
 * The select-list item computing the fold of column `name` from `value` (SQL of the value as the
 * table's current `type`): the fold is of the value as text, so a widened column folds as it reads.
 */
export function computedFoldItem(name: string, value: string, type: ColumnTypeName): string {
  const text = type === 'String' ? value : `CAST(${value} AS VARCHAR)`;
  return `${termFoldSql(text)} AS ${quoteIdentifier(termFoldColumn(name))}`;
}

/** The select-list items (each led by a comma) that add the folds of `folds` to a written segment. */
export function foldSelectItems(folds: readonly string[]): string {
  return folds.map((c) => `, ${computedFoldItem(c, quoteIdentifier(c), 'String')}`).join('');
}
