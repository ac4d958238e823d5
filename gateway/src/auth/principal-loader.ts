import { StrataError } from '@strata/common';
import { AgentServiceService } from '@strata/proto/agents/v1/agents';
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
  private readonly devices = new Map<string, { at: number; check: Promise<void> }>();
  private static readonly TTL_MS = 2_000;

  constructor(private readonly master: MasterClient) {}

  async load(claims: TokenClaims): Promise<Principal> {
    if (claims.agent) {
      await this.approvedDevice(claims.agent.accountId, claims.agent.deviceId);
      return {
        userId: claims.sub,
        tokenType: claims.typ,
        scope: claims.scope,
        globalPermissions: new Set(),
        accountPermissions: new Map(),
        agent: claims.agent,
      };
    }
    const permissions = await this.permissions(claims.sub);
    return { userId: claims.sub, tokenType: claims.typ, scope: claims.scope, ...permissions };
  }

  /**
   * An agent's access token works only while its device stays approved: revoking a device (an
   * account admin's DELETE) stops its uploads within the cache time, not only at the token's expiry.
   */
  private approvedDevice(accountId: string, deviceId: string): Promise<void> {
    const key = `agent\u0000${accountId}\u0000${deviceId}`;
    const now = Date.now();
    const hit = this.devices.get(key);
    if (hit && now - hit.at < PrincipalLoader.TTL_MS) return hit.check;
    const check = this.master
      .service(AgentServiceService)
      .getDevice({ accountId, deviceId })
      .then((r) => {
        if (r.device?.state !== 'approved') throw new StrataError('unauthenticated', 'The token is invalid or expired.');
      });
    check.catch(() => undefined);
    if (this.devices.size > 10_000) this.devices.clear();
    this.devices.set(key, { at: now, check });
    return check;
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
