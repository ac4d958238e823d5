import type { Logger, StrataConfig } from '@strata/common';
import type { RelationalStore } from '../store/relational-store.js';
import type { DirectoryRepository } from './directory-repository.js';

export interface ProvisioningResult {
  accountsCreated: number;
  usersCreated: number;
}

/**
 * Applies the `setupService` section (docs/configuration.md): creates the listed accounts and users and
 * grants their permissions. Run by the elected leader at each election; idempotent: an existing
 * account or user (matched by id) is updated, never duplicated; permissions are added, never
 * removed; an existing user's password is left as it is, so a password changed after the first
 * start is not reset by a restart. Everything commits in one transaction.
 */
export async function applyProvisioning(
  setup: StrataConfig['setupService'],
  store: RelationalStore,
  directory: DirectoryRepository,
  log: Logger,
): Promise<ProvisioningResult> {
  const result: ProvisioningResult = { accountsCreated: 0, usersCreated: 0 };
  if (!setup.enable || !setup.provision) return result;
  await store.transaction(async (tx) => {
    const idByName = new Map<string, string>();
    for (const a of setup.accounts) {
      const { account, created } = await directory.upsertAccount(
        { accountId: a.accountId, accountName: a.accountName, createdAt: '' },
        tx,
      );
      idByName.set(a.accountName, account.accountId);
      if (created) result.accountsCreated++;
    }
    for (const u of setup.users) {
      const existing = await tx.one('SELECT 1 AS x FROM users WHERE user_id = $1', [u.userId]);
      const { created } = await directory.upsertUser(
        { userId: u.userId, userName: u.username, firstName: u.firstname, lastName: u.lastname, email: u.email, createdAt: '' },
        existing ? '' : u.password,
        tx,
      );
      if (created) result.usersCreated++;
      await directory.grantPermissions(u.userId, '', u.defaultGlobalPermissions, tx);
      for (const da of u.defaultAccounts) {
        const accountId = idByName.get(da.accountName);
        // The config validator guarantees the name exists; this guards programmatic callers.
        if (!accountId) throw new Error(`setupService: unknown account name ${da.accountName}`);
        await directory.grantPermissions(u.userId, accountId, da.userPermissions, tx);
      }
    }
  });
  log.info({ ...result }, 'setup-service provisioning applied');
  return result;
}
