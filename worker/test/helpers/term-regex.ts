/**
 * The gateway's term regex for `has`/`has_cs` (termRegex in gateway/src/query/semantic/
 * expr-binder.ts), as it is: the worker's term-index tests count exact matches with it, and the
 * worker cannot import the gateway.
 */
const TERM_CHAR = /[\p{L}\p{N}]/u;
const escapeRegex = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

export function termRegex(needle: string, caseSensitive: boolean): string {
  const chars = [...needle];
  const before = chars.length > 0 && TERM_CHAR.test(chars[0] as string) ? '(?:^|[^\\p{L}\\p{N}])' : '';
  const after = chars.length > 0 && TERM_CHAR.test(chars[chars.length - 1] as string) ? '(?:[^\\p{L}\\p{N}]|$)' : '';
  return `${caseSensitive ? '' : '(?i)'}${before}${escapeRegex(needle)}${after}`;
}

/** A SQL string literal. */
export const sqlString = (s: string) => `'${s.replace(/'/g, "''")}'`;
