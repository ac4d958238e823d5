/**
 * `search`'s predicate, rewritten into an ordinary `where` predicate over one table's columns:
 * - a bare string term matches when any column has it (every column read as text, as `tostring`
 *   writes it);
 * - `Column:"term"` matches when that column has it;
 * - a term with `*` at its end matches a term prefix, at its start a term suffix, at both ends
 *   any substring, inside it a pattern between word boundaries (`*` standing for any text);
 * - `search *` matches every row;
 * - matching is case-insensitive unless `kind=case_sensitive`;
 * - `and`, `or`, `not()` combine; any other predicate (`Column == "x"`, `Column > 5`) is kept.
 * A predicate naming a column the table does not have is false for that table (search runs over
 * tables of different schemas), so each table is rewritten on its own.
 */
import { queryError, type Span } from '../errors.js';
import type { Expr } from '../syntax/ast.js';
import { escapeRegex } from './expr-binder.js';
import type { Column } from './rel.js';

const FALSE = (span: Span): Expr => ({ kind: 'literal', lit: { type: 'bool', value: false }, span });
const str = (value: string, span: Span): Expr => ({ kind: 'literal', lit: { type: 'string', value }, span });
const binary = (op: string, left: Expr, right: Expr, span: Span): Expr => ({
  kind: 'binary',
  op,
  opSpan: span,
  left,
  right,
  span,
});

/** Comparison operators whose left side names a column that may be missing from a table. */
const COLUMN_TESTS = new Set([
  '==',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  '=~',
  '!~',
  'has',
  'contains',
  'startswith',
  'endswith',
  'has_cs',
]);

export function searchPredicate(e: Expr, columns: Column[], caseSensitive: boolean): Expr {
  const byName = new Map(columns.map((c) => [c.name, c] as const));
  const rewrite = (x: Expr): Expr => {
    // `search *`: every row.
    if (x.kind === 'star') return { kind: 'literal', lit: { type: 'bool', value: true }, span: x.span };
    if (x.kind === 'literal' && x.lit.type === 'string') {
      const tests = columns.map((c) => termMatch(c, x.lit.value as string, caseSensitive, x.span));
      if (tests.length === 0) return FALSE(x.span);
      return tests.reduce((a, b) => binary('or', a, b, x.span));
    }
    if (x.kind === 'binary' && (x.op === 'and' || x.op === 'or')) return { ...x, left: rewrite(x.left), right: rewrite(x.right) };
    if (x.kind === 'call' && x.name.toLowerCase() === 'not' && x.args.length === 1)
      return { ...x, args: [rewrite(x.args[0] as Expr)] };
    if (x.kind === 'binary' && x.op === ':') {
      if (x.left.kind !== 'name') throw queryError('search\'s Column:"term" needs a column name on the left.', x.left.span);
      if (x.right.kind !== 'literal' || x.right.lit.type !== 'string')
        throw queryError('search\'s Column:"term" needs a string literal on the right.', x.right.span);
      const column = byName.get(x.left.name);
      return column ? termMatch(column, x.right.lit.value, caseSensitive, x.span) : FALSE(x.span);
    }
    if (x.kind === 'binary' && COLUMN_TESTS.has(x.op) && x.left.kind === 'name' && !byName.has(x.left.name)) return FALSE(x.span);
    return x;
  };
  return rewrite(e);
}

/** One column has the term (wildcards as in the file comment). */
function termMatch(column: Column, term: string, caseSensitive: boolean, span: Span): Expr {
  const name: Expr = { kind: 'name', name: column.name, span };
  const text: Expr = column.type === 'string' ? name : { kind: 'call', name: 'tostring', nameSpan: span, args: [name], span };
  const cs = caseSensitive ? '_cs' : '';
  const starts = term.startsWith('*');
  const ends = term.endsWith('*') && term.length > 1;
  const core = term.slice(starts ? 1 : 0, ends ? -1 : undefined);
  if (core.includes('*')) {
    // Kusto: `"Lab*PC"` is `matches regex @"\bLab.*PC\b"`.
    const pattern = `${caseSensitive ? '' : '(?i)'}\\b${core.split('*').map(escapeRegex).join('.*')}\\b`;
    return binary('matches regex', text, str(pattern, span), span);
  }
  if (starts && ends) return binary(`contains${cs}`, text, str(core, span), span);
  if (!starts && !ends) return binary(`has${cs}`, text, str(core, span), span);
  // A term prefix (suffix): the text is preceded (followed) by a non-term character or an end.
  const flags = caseSensitive ? '' : '(?i)';
  const pattern = ends ? `${flags}(^|[^\\p{L}\\p{N}])${escapeRegex(core)}` : `${flags}${escapeRegex(core)}($|[^\\p{L}\\p{N}])`;
  return binary('matches regex', text, str(pattern, span), span);
}
