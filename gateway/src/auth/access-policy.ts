import { holdsOnAccount, isGlobalAdmin, type Principal } from './principal.js';
import { accountScope } from './token-scope.js';

/**
 * The permission table (docs/api.md, Permissions), in one place. Every route declares one of these operations; the
 * gateway checks it before the handler runs, and a test walks every route against every role.
 *
 * - `global`: only global admins (no account in the path).
 * - `account`: global admins, and holders of one of `accountPermissions` on the path's account.
 * - `authenticated`: any valid token (identity calls).
 * - `public`: no token (sign-in).
 * Scoped tokens (long-lived tokens, or sessions exchanged from them) may only do what their scope
 * names: `inflow` or `query` on the accounts they list, plus `authenticated` calls. An agent's
 * access token is scoped to inflow on its account and may do nothing else.
 */
export type Operation =
  | 'public'
  | 'authenticated'
  | 'system.settings.read'
  | 'system.settings.write'
  | 'account.settings.read'
  | 'account.settings.write'
  | 'incidents.read'
  | 'incidents.write'
  | 'groups.read'
  | 'groups.write'
  | 'alerts.read'
  | 'alerts.write'
  | 'inflow.push'
  | 'query.run'
  | 'users.manage'
  | 'password.self'
  | 'accounts.list'
  | 'accounts.manage'
  | 'members.read'
  | 'members.write'
  | 'agents.manage'
  | 'webhooks.manage'
  | 'cluster.manage';

interface Rule {
  kind: 'public' | 'authenticated' | 'global' | 'account';
  accountPermissions: readonly string[];
  /** What a scoped token needs in its scope for this operation, if it may do it at all. */
  scoped: 'inflow' | 'query' | 'any' | 'never';
}

const ADMIN = 'Service.Account.Admin';
const VIEWER = 'Service.Incident.Viewer';
const EDITOR = 'Service.Incident.Editor';
const MANAGER = 'Service.Incident.Manager';
const INFLOW = 'Service.Account.Inflow';
const QUERY = 'Service.Account.Query';

export const ACCESS_POLICY: Record<Operation, Rule> = {
  public: { kind: 'public', accountPermissions: [], scoped: 'any' },
  authenticated: { kind: 'authenticated', accountPermissions: [], scoped: 'any' },
  'system.settings.read': { kind: 'global', accountPermissions: [], scoped: 'never' },
  'system.settings.write': { kind: 'global', accountPermissions: [], scoped: 'never' },
  'account.settings.read': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  'account.settings.write': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  'incidents.read': { kind: 'account', accountPermissions: [ADMIN, VIEWER, EDITOR, MANAGER], scoped: 'never' },
  'incidents.write': { kind: 'account', accountPermissions: [ADMIN, EDITOR, MANAGER], scoped: 'never' },
  'groups.read': { kind: 'account', accountPermissions: [ADMIN, VIEWER, EDITOR, MANAGER], scoped: 'never' },
  'groups.write': { kind: 'account', accountPermissions: [ADMIN, MANAGER], scoped: 'never' },
  // Alert rules (docs/alerting.md): who sees incidents sees the rules that open them; writing one
  // is like managing groups, since a rule opens incidents and mails people on its own.
  'alerts.read': { kind: 'account', accountPermissions: [ADMIN, VIEWER, EDITOR, MANAGER], scoped: 'never' },
  'alerts.write': { kind: 'account', accountPermissions: [ADMIN, MANAGER], scoped: 'never' },
  // Schema-level scope checks (which entries a token may push) happen in the inflow handler.
  'inflow.push': { kind: 'account', accountPermissions: [ADMIN, INFLOW], scoped: 'inflow' },
  // Any member role of the account may query it; Query alone grants query without incident rights.
  'query.run': { kind: 'account', accountPermissions: [ADMIN, QUERY, VIEWER, EDITOR, MANAGER], scoped: 'query' },
  // Users and accounts are installation-wide: global admins only (docs/decisions/0005).
  'users.manage': { kind: 'global', accountPermissions: [], scoped: 'never' },
  'accounts.manage': { kind: 'global', accountPermissions: [], scoped: 'never' },
  // Any signed-in user, but not a scoped token: changing a password or listing accounts is a person's act.
  'password.self': { kind: 'authenticated', accountPermissions: [], scoped: 'never' },
  'accounts.list': { kind: 'authenticated', accountPermissions: [], scoped: 'never' },
  // An account admin manages who belongs to their own account and what they hold there.
  'members.read': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  'members.write': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  // Registration tokens and device approval decide who may push as an agent: account admins.
  'agents.manage': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  // A webhook sends the account's incidents to a URL of its maker's choosing: account admins.
  'webhooks.manage': { kind: 'account', accountPermissions: [ADMIN], scoped: 'never' },
  // Draining a worker moves every account's data: installation-wide, global admins only.
  'cluster.manage': { kind: 'global', accountPermissions: [], scoped: 'never' },
};

/** Whether `principal` may perform `operation` (on `accountId` for account operations). */
export function isAllowed(principal: Principal | undefined, operation: Operation, accountId?: string): boolean {
  const rule = ACCESS_POLICY[operation];
  if (rule.kind === 'public') return true;
  if (!principal) return false;
  // A collection agent's access token pushes events and does nothing else.
  if (principal.tokenType === 'agent' && rule.scoped !== 'inflow') return false;
  if (principal.scope) {
    if (rule.scoped === 'any') return true;
    if (rule.scoped === 'never' || !accountId) return false;
    const scope = accountScope(principal.scope, accountId);
    if (!scope) return false;
    return rule.scoped === 'inflow' ? scope.inflow.schemas.length > 0 : (scope.query?.schemas.length ?? 0) > 0;
  }
  if (rule.kind === 'authenticated') return true;
  if (isGlobalAdmin(principal)) return true;
  if (rule.kind === 'global' || !accountId) return false;
  return holdsOnAccount(principal, accountId, rule.accountPermissions);
}
