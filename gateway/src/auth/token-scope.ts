/**
 * The scope of a long-lived token (docs/api.md, Authentication: body of POST /auth/pat-token). A token
 * with a scope can push to the schemas its inflow patterns match and, with a query scope, query the
 * schemas its query patterns match; nothing else.
 */
export interface TokenAccountScope {
  accountId: string;
  inflow: { schemas: string[] };
  query?: { queryTimeoutSeconds: number | null; schemas: string[] };
}

export interface TokenScope {
  accounts: TokenAccountScope[];
}

/**
 * `*` matches every schema; a trailing `*` matches by prefix (`logs.*` matches `logs.app`);
 * anything else matches exactly.
 */
export function schemaPatternMatches(pattern: string, schema: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('*')) return schema.startsWith(pattern.slice(0, -1));
  return pattern === schema;
}

export function anySchemaPatternMatches(patterns: string[], schema: string): boolean {
  return patterns.some((p) => schemaPatternMatches(p, schema));
}

export function accountScope(scope: TokenScope | undefined, accountId: string): TokenAccountScope | undefined {
  return scope?.accounts.find((a) => a.accountId === accountId.toLowerCase());
}
