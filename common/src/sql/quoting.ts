/**
 * The one quoting rule for SQL text built outside bound parameters, used by the worker's storage,
 * the fragment runner and the gateway's SQL builder. Names are validated (inflow name rules, KQL
 * identifiers) before they get here; these helpers still quote them strictly, so a name can never
 * end an identifier or a literal early.
 */
export function quoteIdentifier(name: string): string {
  if (name.includes('\0')) throw new TypeError('identifier contains NUL');
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
