import { type HandlersOf, invalid, LoginThrottle } from '@strata/common';
import type { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import type { DirectoryRepository } from './directory-repository.js';

/**
 * gRPC handlers of the master's DirectoryService over the repository. Password checks are
 * throttled here, where they happen, whichever gateway (or caller) asks: the gateways' own
 * throttle only sees its share of the guesses.
 */
export function directoryHandlers(
  repo: () => DirectoryRepository,
  throttle: LoginThrottle = new LoginThrottle(),
): HandlersOf<typeof DirectoryServiceService> {
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
      return repo().upsertAccount(req.account);
    },
    upsertUser: async (req) => {
      if (!req.user) throw invalid('user is required.');
      return repo().upsertUser(req.user, req.password);
    },
    listUserPermissions: async (req) => repo().listUserPermissions(req.userId),
    setPermissions: async (req) => {
      await repo().setPermissions(req.userId, req.accountId, req.permissions);
      return {};
    },
    listAccountMembers: async (req) => ({ users: await repo().listAccountMembers(req.accountId) }),
  };
}
