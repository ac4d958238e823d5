/**
 * How a certificate says which Strata role(s) its holder may act as: one DNS subject alternative
 * name `<role>.role.strata` per role. DNS names (not URIs) because Helm's `genSignedCert` and every
 * certificate tool can set them; the `.strata` pseudo-domain is never resolved, it is only matched.
 */

export const ROLE_NAMES = ['database', 'backend', 'gateway'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

const SUFFIX = '.role.strata';

export const roleSubjectAltName = (role: RoleName) => `${role}${SUFFIX}`;

/**
 * The roles in a peer certificate's `subjectaltname` text as Node's TLS reports it
 * (`DNS:gateway.role.strata, DNS:x, IP Address:…`). Anything not of the exact form is ignored.
 */
export function rolesOfSubjectAltName(subjectAltName: string | undefined): Set<RoleName> {
  const roles = new Set<RoleName>();
  for (const part of (subjectAltName ?? '').split(',')) {
    const entry = part.trim();
    if (!entry.startsWith('DNS:') || !entry.endsWith(SUFFIX)) continue;
    const role = entry.slice(4, -SUFFIX.length);
    if ((ROLE_NAMES as readonly string[]).includes(role)) roles.add(role as RoleName);
  }
  return roles;
}
