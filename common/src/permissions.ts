/**
 * Permission names (product prefix `Service.`; docs/api.md, Permissions). Global ones are held
 * installation-wide; account ones per account. Pushing events needs account admin or the inflow
 * permission on the account.
 */
const GLOBAL_PERMISSIONS = ['Service.Global.Admin'] as const;
const ACCOUNT_PERMISSIONS = [
  'Service.Account.Admin',
  'Service.Incident.Viewer',
  'Service.Incident.Editor',
  'Service.Incident.Manager',
  'Service.Account.Inflow',
  'Service.Account.Query',
] as const;

export type GlobalPermission = (typeof GLOBAL_PERMISSIONS)[number];
export type AccountPermission = (typeof ACCOUNT_PERMISSIONS)[number];

/**
 * Configs written for the public product use its own prefix (`Logship.Global.Admin`); Strata's documented
 * form is `Service.` — accept both spellings on input and store the `Service.` form.
 */
export function normalizePermission(name: string): string {
  const m = /^[A-Za-z]+\.(Global|Account|Incident)\.(.+)$/.exec(name.trim());
  return m ? `Service.${m[1]}.${m[2]}` : name.trim();
}

export function isGlobalPermission(name: string): name is GlobalPermission {
  return (GLOBAL_PERMISSIONS as readonly string[]).includes(name);
}

export function isAccountPermission(name: string): name is AccountPermission {
  return (ACCOUNT_PERMISSIONS as readonly string[]).includes(name);
}
