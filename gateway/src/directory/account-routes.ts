import { invalid, notFound, StrataError } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { z } from 'zod';
import { isGlobalAdmin } from '../auth/principal.js';
import type { RouteDef } from '../http/route.js';
import { accountJson, accountJsonSchema } from './directory-json.js';
import { guidParam } from './path-ids.js';

/**
 * Accounts (docs/api.md "Users, accounts and members"): everyone lists the accounts they are a
 * member of, a global admin all of them; only global admins create, rename and delete.
 */

const accountBody = z.object({ accountName: z.string().trim().min(1, 'accountName is required').max(200) });

export const accountRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts',
    operation: 'accounts.list',
    summary: 'Accounts by name: a global admin sees every account, anyone else the accounts they are a member of.',
    responseSchema: z.array(accountJsonSchema),
    async handler(rc) {
      const principal = rc.principal!;
      const directory = rc.deps.master.service(DirectoryServiceService);
      const { accounts } = await directory.listAccounts({});
      if (isGlobalAdmin(principal)) return { body: accounts.map(accountJson) };
      const { accounts: mine } = await directory.listUserPermissions({ userId: principal.userId });
      const memberOf = new Set(mine.map((a) => a.accountId));
      return { body: accounts.filter((a) => memberOf.has(a.accountId)).map(accountJson) };
    },
  },
  {
    method: 'PUT',
    path: '/accounts/:accountId',
    operation: 'accounts.manage',
    summary: 'Create (201) or rename (200) an account: { accountName }, unique (global admin).',
    requestSchema: accountBody,
    responseSchema: accountJsonSchema,
    successStatuses: [200, 201],
    async handler(rc) {
      const accountId = guidParam(rc, 'accountId');
      const { accountName } = await rc.body(accountBody);
      const res = await rc.deps.master
        .service(DirectoryServiceService)
        .upsertAccount({ account: { accountId, accountName, createdAt: '' } });
      return { status: res.created ? 201 : 200, body: accountJson(res.account!) };
    },
  },
  {
    method: 'DELETE',
    path: '/accounts/:accountId',
    operation: 'accounts.manage',
    summary:
      'Delete an account (global admin): removes the account, its memberships, permissions, settings, saved queries, agent registration tokens and devices, and queued mail. Refused (400, naming what is left) while stored event data, incidents, groups or alert records of it exist. 204; 404 when none.',
    successStatuses: [204],
    async handler(rc) {
      const accountId = guidParam(rc, 'accountId');
      const directory = rc.deps.master.service(DirectoryServiceService);
      if (!(await directory.getAccount({ accountId })).account) throw notFound(`Account ${accountId} does not exist.`);
      // Event data lives on the workers: asked fresh (no cache), so nothing stored is orphaned.
      let schemas: number;
      try {
        schemas = (await rc.deps.schemas.get(accountId, { fresh: true })).tables.length;
      } catch (err) {
        throw new StrataError('unavailable', 'Could not ask every worker whether the account still holds data.', {
          cause: err,
          retryAfterSeconds: 5,
        });
      }
      if (schemas > 0)
        throw invalid(
          `Account ${accountId} still has stored data in ${schemas} schemas; it cannot be deleted while it holds data.`,
        );
      const { deleted } = await directory.deleteAccount({ accountId });
      if (!deleted) throw notFound(`Account ${accountId} does not exist.`);
      return { status: 204 };
    },
  },
];
