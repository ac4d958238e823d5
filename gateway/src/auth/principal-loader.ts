import { StrataError } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import type { MasterClient } from '../master-client.js';
import type { Principal } from './principal.js';
import type { TokenClaims } from './token-service.js';

/**
 * Builds the Principal of a verified token, reading the user's permissions from the master. A
 * short cache (2 s) keeps a burst of requests from one user to one master call, while a changed
 * permission still takes effect within seconds.
 */
export class PrincipalLoader {
  private readonly cache = new Map<
    string,
    { at: number; permissions: Promise<Pick<Principal, 'globalPermissions' | 'accountPermissions'>> }
  >();
  private static readonly TTL_MS = 2_000;

  constructor(private readonly master: MasterClient) {}

  async load(claims: TokenClaims): Promise<Principal> {
    const permissions = await this.permissions(claims.sub);
    return { userId: claims.sub, tokenType: claims.typ, scope: claims.scope, ...permissions };
  }

  private permissions(userId: string) {
    const now = Date.now();
    const hit = this.cache.get(userId);
    if (hit && now - hit.at < PrincipalLoader.TTL_MS) return hit.permissions;
    const permissions = this.master
      .service(DirectoryServiceService)
      .listUserPermissions({ userId })
      .then((r) => {
        // A deleted user's tokens stop working at once (within the cache time).
        if (!r.userExists) throw new StrataError('unauthenticated', 'The token is invalid or expired.');
        return {
          globalPermissions: new Set(r.globalPermissions),
          accountPermissions: new Map(r.accounts.map((a) => [a.accountId.toLowerCase(), new Set(a.permissions)])),
        };
      });
    permissions.catch(() => this.cache.delete(userId));
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(userId, { at: now, permissions });
    return permissions;
  }
}
