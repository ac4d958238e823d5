import type { TokenScope } from './token-scope.js';
import type { AgentIdentity, TokenType } from './token-service.js';

/** Who is calling: the user behind the token, their permissions, and the token's scope if any. */
export interface Principal {
  userId: string;
  tokenType: TokenType;
  /** Set for long-lived tokens and sessions exchanged from them: limits what the token can do. */
  scope?: TokenScope;
  globalPermissions: ReadonlySet<string>;
  /** Account id (lower case) → permission names held on it. */
  accountPermissions: ReadonlyMap<string, ReadonlySet<string>>;
  /** Set for a collection agent's access token: the approved device it was issued to. */
  agent?: AgentIdentity;
}

export const GLOBAL_ADMIN = 'Service.Global.Admin';

export function isGlobalAdmin(p: Principal): boolean {
  return p.globalPermissions.has(GLOBAL_ADMIN);
}

export function holdsOnAccount(p: Principal, accountId: string, permissions: readonly string[]): boolean {
  const held = p.accountPermissions.get(accountId.toLowerCase());
  return held !== undefined && permissions.some((x) => held.has(x));
}
