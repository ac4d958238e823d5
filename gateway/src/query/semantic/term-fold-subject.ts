/**
 * Reading a source column's term fold instead of the column (decision 0045): for an ASCII needle
 * and a case-insensitive term operator (has, !has, hasprefix, hassuffix, each term of has_all /
 * has_any), the prefilter and the exact check on the fold answer what they answer on the text
 * (decision 0041, proof in gateway/test/query/term-fold.test.ts), and the fold needs no lower() at
 * query time — where a segment stores it, not even the text column's decompression.
 *
 * Where: in a `where` directly over a table's scan (a chain of filters, which pass every column
 * on), on a string column still holding its source column unchanged. There the statement's scan
 * step can read the fold as one more source column (`#fold:c`, common/src/query/term-fold.ts);
 * after a projection or any other step it is not carried, so the column itself is checked.
 */
import { isAsciiNeedle, termFoldColumn } from '@strata/common';
import { ident, type Sql, sql } from '../sql/sql.js';
import type { Bound } from './bound.js';
import type { Column, Rel } from './rel.js';

/** The statement-internal id of the fold of the scan column `id` (column ids are `c<n>`: no clash). */
export function termFoldId(id: string): string {
  return `${id}_fold`;
}

/**
 * The scan column `col`'s fold as a column the scan step reads (sql-gen.ts), given its id was
 * used: a string source column named `#fold:<origin>`.
 */
export function termFoldScanColumn(col: Column): Column | undefined {
  if (col.type !== 'string' || col.origin === undefined) return undefined;
  return { name: termFoldColumn(col.origin), type: 'string', id: termFoldId(col.id), origin: termFoldColumn(col.origin) };
}

/** Ids of the columns whose fold a `where` over `input` may read: its scan's string columns. */
export function foldableColumns(input: Rel): ReadonlySet<string> | undefined {
  let rel = input;
  while (rel.kind === 'filter') rel = rel.input;
  if (rel.kind !== 'scan') return undefined;
  return new Set(rel.columns.filter((c) => termFoldScanColumn(c) !== undefined).map((c) => c.id));
}

/**
 * The fold to test in place of the operator's subject when `left` is a foldable column and every
 * needle is ASCII, else undefined. `bare`: the subject is the column itself (a filter's positive
 * match may read it so); otherwise coalesce(column, ''), where a NULL reads as "" (the fold of
 * NULL is NULL, and of "" is "").
 */
export function foldSubject(
  left: Bound,
  bare: boolean,
  needles: readonly string[],
  foldable: ReadonlySet<string> | undefined,
): Sql | undefined {
  const col = left.column;
  if (!foldable || !col || left.type !== 'string' || !foldable.has(col.id)) return undefined;
  if (needles.length === 0 || !needles.every((n) => isAsciiNeedle(n))) return undefined;
  const fold = sql`${ident(termFoldId(col.id))}`;
  return bare ? fold : sql`coalesce(${fold}, '')`;
}
