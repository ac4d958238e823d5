import { checkPassword, type HandlersOf, invalid, LoginThrottle } from '@strata/common';
import type { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import type { RelationalStore } from '../store/relational-store.js';
import { DirectoryRepository } from './directory-repository.js';
import { deleteAccount, deleteUser, removeMember } from './removals.js';

/**
 * gRPC handlers of the master's DirectoryService over the repository. Password checks are
 * throttled here, where they happen, whichever gateway (or caller) asks: the gateways' own
 * throttle only sees its share of the guesses.
 */
export function directoryHandlers(
  store: () => RelationalStore,
  changed: () => Promise<void>,
  throttle: LoginThrottle = new LoginThrottle(),
): HandlersOf<typeof DirectoryServiceService> {
  const repo = () => new DirectoryRepository(store());
  // Every handler that can change whether a user exists or what they may do announces it after
  // its commit (directory-changes.ts); gateways cache permissions until then. Not passwords:
  // a gateway caches no password, and sessions outlive a password change by design (decision 0006).
  const announcing = async <T>(change: Promise<T>): Promise<T> => {
    const result = await change;
    await changed();
    return result;
  };
  return {
    verifyPassword: async (req) => {
      throttle.check(req.userName);
      const user = await repo().verifyPassword(req.userName, req.password);
      if (user) throttle.recordSuccess(req.userName);
      else throttle.recordFailure(req.userName);
      return { ok: user !== undefined, user };
    },
    getUser: async (req) => ({ user: await repo().getUser(req.userId) }),
    listAccounts: async () => ({ accounts: await repo().listAccounts() }),
    getAccount: async (req) => ({ account: await repo().getAccount(req.accountId) }),
    upsertAccount: async (req) => {
      if (!req.account) throw invalid('account is required.');
      return announcing(repo().upsertAccount(req.account));
    },
    upsertUser: async (req) => {
      if (!req.user) throw invalid('user is required.');
      // Provisioning calls the repository directly; passwords set over the API follow the policy.
      if (req.password) checkPassword(req.password);
      return announcing(repo().upsertUser(req.user, req.password));
    },
    listUserPermissions: async (req) => repo().listUserPermissions(req.userId),
    setPermissions: async (req) => {
      await announcing(repo().setPermissions(req.userId, req.accountId, req.permissions));
      return {};
    },
    listAccountMembers: async (req) => {
      const members = await repo().listAccountMembers(req.accountId);
      return { users: members.map((m) => m.user), members };
    },
    listUsers: async () => ({ users: await repo().listUsers() }),
    deleteUser: async (req) => ({ deleted: await announcing(deleteUser(store(), req.userId)) }),
    setPassword: async (req) => {
      await repo().setPassword(req.userId, req.password, req.currentPassword || undefined);
      return {};
    },
    deleteAccount: async (req) => ({ deleted: await announcing(deleteAccount(store(), req.accountId)) }),
    putMember: async (req) => announcing(repo().putMember(req.accountId, req.userId, req.permissions)),
    removeMember: async (req) => {
      await announcing(removeMember(store(), req.accountId, req.userId));
      return {};
    },
  };
}
