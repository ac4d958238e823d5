/**
 * The only ways user-influenced text reaches SQL in the worker. Names are validated against the
 * inflow name rules before they get here; these helpers still quote them strictly, so a name can
 * never end an identifier or a literal early.
 */
export function quoteIdent(name: string): string {
  if (name.includes('\0')) throw new Error('identifier contains NUL');
  return `"${name.replaceAll('"', '""')}"`;
}

export function quoteLiteral(text: string): string {
  if (text.includes('\0')) throw new Error('literal contains NUL');
  return `'${text.replaceAll("'", "''")}'`;
}

/** A DuckDB list literal of string literals: ['a', 'b']. */
export function quoteLiteralList(texts: readonly string[]): string {
  return `[${texts.map(quoteLiteral).join(', ')}]`;
}
