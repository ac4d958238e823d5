import { type Coordinator, StrataError } from '@strata/common';
import { AgentServiceService } from '@strata/proto/agents/v1/agents';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import type { MasterClient } from '../master-client.js';
import type { Principal } from './principal.js';
import type { TokenClaims } from './token-service.js';

type Permissions = Pick<Principal, 'globalPermissions' | 'accountPermissions'>;

/**
 * Builds the Principal of a verified token, reading the user's permissions from the master.
 *
 * The permissions are kept as long as the directory revision (decision 0049) reads the same as
 * when they were fetched: the master bumps it after every committed change of users, permissions,
 * memberships or accounts, so a revoked permission or a deleted user is refused on the very next
 * request, while a dashboard refreshing every 10-30 s no longer pays a master call per request,
 * only one linearizable etcd get. The revision is read BEFORE the master call: permissions stored
 * with revision r include every change up to r, and any later change raises the revision.
 * A backstop TTL (60 s) bounds the harm of a lost bump. When the revision cannot be read (etcd
 * down or slow), the old rule applies: a 2 s cache, then ask the master.
 */
export class PrincipalLoader {
  private readonly cache = new Map<string, { at: number; revision: number | undefined; permissions: Promise<Permissions> }>();
  private readonly devices = new Map<string, { at: number; check: Promise<void> }>();
  /** Without a directory revision to validate against: how long permissions (and devices) are kept. */
  private static readonly TTL_MS = 2_000;
  /** With an unchanged directory revision: how long permissions are kept at most. */
  static readonly BACKSTOP_TTL_MS = 60_000;
  /** How long a request waits for the revision before falling back to the 2 s rule. */
  private static readonly REVISION_WAIT_MS = 500;

  constructor(
    private readonly master: MasterClient,
    private readonly directory: Pick<Coordinator, 'readDirectoryRevision'>,
    private readonly now: () => number = Date.now,
  ) {}

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
    const now = this.now();
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

  private async permissions(userId: string): Promise<Permissions> {
    const revision = await this.directoryRevision();
    const now = this.now();
    const hit = this.cache.get(userId);
    if (hit) {
      const fresh =
        revision !== undefined && hit.revision === revision
          ? now - hit.at < PrincipalLoader.BACKSTOP_TTL_MS
          : now - hit.at < PrincipalLoader.TTL_MS && (revision === undefined || hit.revision === undefined);
      if (fresh) return hit.permissions;
    }
    const permissions = this.master
      .service(DirectoryServiceService)
      .listUserPermissions({ userId })
      .then((r) => {
        // A deleted user's tokens stop working at once.
        if (!r.userExists) throw new StrataError('unauthenticated', 'The token is invalid or expired.');
        return {
          globalPermissions: new Set(r.globalPermissions),
          accountPermissions: new Map(r.accounts.map((a) => [a.accountId.toLowerCase(), new Set(a.permissions)])),
        };
      });
    permissions.catch(() => {
      if (this.cache.get(userId)?.permissions === permissions) this.cache.delete(userId);
    });
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(userId, { at: now, revision, permissions });
    return permissions;
  }

  /** The directory revision, or undefined when etcd does not answer within REVISION_WAIT_MS. */
  private async directoryRevision(): Promise<number | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), PrincipalLoader.REVISION_WAIT_MS);
      timer.unref();
    });
    try {
      return await Promise.race([this.directory.readDirectoryRevision().catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
