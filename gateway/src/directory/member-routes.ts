import { notFound } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';
import { memberJsonSchema, membershipJsonSchema, userJson } from './directory-json.js';
import { guidParam } from './path-ids.js';

/**
 * Members of an account and the permissions they hold there, managed by the account's admins (and
 * global admins). Membership is its own fact: a member may hold no permission and can still own or
 * be assigned incidents and join groups (docs/decisions/0006-users-and-memberships.md).
 */

const BASE = '/accounts/:accountId/users';
const memberBody = z.object({ permissions: z.array(z.string()).default([]) });

export const memberRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'members.read',
    summary: "The account's members with the permissions each holds there (account admin); 404 when the account does not exist.",
    responseSchema: z.array(memberJsonSchema),
    async handler(rc) {
      const accountId = guidParam(rc, 'accountId');
      const directory = rc.deps.master.service(DirectoryServiceService);
      if (!(await directory.getAccount({ accountId })).account) throw notFound(`Account ${accountId} does not exist.`);
      const { members } = await directory.listAccountMembers({ accountId });
      return { body: members.map((m) => ({ ...userJson(m.user!), permissions: m.permissions })) };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:userId`,
    operation: 'members.write',
    summary:
      'Make a user a member of the account holding exactly { permissions } (may be empty; account permission names). 201 when newly a member, 200 otherwise (account admin).',
    requestSchema: memberBody,
    responseSchema: membershipJsonSchema,
    successStatuses: [200, 201],
    async handler(rc) {
      const accountId = guidParam(rc, 'accountId');
      const userId = guidParam(rc, 'userId');
      const { permissions } = await rc.body(memberBody);
      const res = await rc.deps.master.service(DirectoryServiceService).putMember({ accountId, userId, permissions });
      return { status: res.created ? 201 : 200, body: { accountId, userId, permissions: res.permissions } };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:userId`,
    operation: 'members.write',
    summary:
      'Remove a user from the account with their permissions and group memberships there (account admin). Refused (400, naming the count) while they own or are assigned incidents of the account. 204; 404 when not a member.',
    successStatuses: [204],
    async handler(rc) {
      const accountId = guidParam(rc, 'accountId');
      const userId = guidParam(rc, 'userId');
      await rc.deps.master.service(DirectoryServiceService).removeMember({ accountId, userId });
      return { status: 204 };
    },
  },
];
