import { forbidden, invalid, isGlobalPermission, normalizePermission, notFound, WRONG_CURRENT_PASSWORD } from '@strata/common';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import { z } from 'zod';
import { GLOBAL_ADMIN } from '../auth/principal.js';
import type { RouteDef } from '../http/route.js';
import { userDetailJsonSchema, userJson, userJsonSchema } from './directory-json.js';
import { guidParam } from './path-ids.js';

/**
 * Users of the installation (global admins only; docs/api.md "Users, accounts and members") and
 * the signed-in user's own password change. Passwords follow the master's policy
 * (master/src/auth/password-policy.ts); a changed password leaves existing tokens valid until they
 * expire (spec: tokens cannot be revoked; docs/decisions/0006-users-and-memberships.md).
 */

const userBody = z.object({
  username: z.string().trim().min(1, 'username is required').max(200),
  firstName: z.string().max(200).default(''),
  lastName: z.string().max(200).default(''),
  email: z.string().max(320).default(''),
  password: z.string().optional().describe('required when creating; when given on an update it replaces the password'),
  globalPermissions: z.array(z.string()).optional().describe('replaces the global permissions when given'),
});

const passwordBody = z.object({ password: z.string() });
const ownPasswordBody = z.object({ currentPassword: z.string(), password: z.string() });

export const userRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/users',
    operation: 'users.manage',
    summary: 'Every user of the installation, by user name (global admin).',
    responseSchema: z.array(userJsonSchema),
    async handler(rc) {
      const { users } = await rc.deps.master.service(DirectoryServiceService).listUsers({});
      return { body: users.map(userJson) };
    },
  },
  {
    method: 'GET',
    path: '/users/:userId',
    operation: 'users.manage',
    summary: 'One user with their global permissions and account memberships (global admin); 404 when none.',
    responseSchema: userDetailJsonSchema,
    async handler(rc) {
      const userId = guidParam(rc, 'userId');
      const directory = rc.deps.master.service(DirectoryServiceService);
      const { user } = await directory.getUser({ userId });
      if (!user) throw notFound(`User ${userId} does not exist.`);
      const perms = await directory.listUserPermissions({ userId });
      return {
        body: {
          ...userJson(user),
          globalPermissions: perms.globalPermissions,
          accounts: perms.accounts.map((a) => ({
            accountId: a.accountId,
            accountName: a.accountName,
            permissions: a.permissions,
          })),
        },
      };
    },
  },
  {
    method: 'PUT',
    path: '/users/:userId',
    operation: 'users.manage',
    summary:
      'Create (201) or update (200) a user: username (unique without regard to case), firstName, lastName, email; password required when creating (at least 12 characters); globalPermissions replaces the global permissions when given (global admin).',
    requestSchema: userBody,
    responseSchema: userJsonSchema,
    successStatuses: [200, 201],
    async handler(rc) {
      const userId = guidParam(rc, 'userId');
      const body = await rc.body(userBody);
      const directory = rc.deps.master.service(DirectoryServiceService);
      const global = body.globalPermissions?.map(normalizePermission);
      const unknown = global?.filter((p) => !isGlobalPermission(p)) ?? [];
      if (unknown.length) throw invalid(`Unknown global permission: ${unknown.join(', ')}.`);
      if (global && userId === rc.principal!.userId.toLowerCase() && !global.includes(GLOBAL_ADMIN))
        throw forbidden('You cannot remove your own global admin permission.');
      const { user: existing } = await directory.getUser({ userId });
      if (!existing && !body.password) throw invalid('password is required when creating a user.');
      const res = await directory.upsertUser({
        user: {
          userId,
          userName: body.username,
          firstName: body.firstName,
          lastName: body.lastName,
          email: body.email,
          createdAt: '',
        },
        password: body.password ?? '',
      });
      if (global) await directory.setPermissions({ userId, accountId: '', permissions: global });
      return { status: res.created ? 201 : 200, body: userJson(res.user!) };
    },
  },
  {
    method: 'DELETE',
    path: '/users/:userId',
    operation: 'users.manage',
    summary:
      'Delete a user with their memberships, permissions and group memberships (global admin). Refused (400, naming the count) while they own or are assigned incidents; you cannot delete yourself. 404 when none.',
    successStatuses: [204],
    async handler(rc) {
      const userId = guidParam(rc, 'userId');
      if (userId === rc.principal!.userId.toLowerCase()) throw forbidden('You cannot delete your own user.');
      const { deleted } = await rc.deps.master.service(DirectoryServiceService).deleteUser({ userId });
      if (!deleted) throw notFound(`User ${userId} does not exist.`);
      return { status: 204 };
    },
  },
  {
    method: 'PUT',
    path: '/users/:userId/password',
    operation: 'users.manage',
    summary: "Set a user's password (global admin): { password }, at least 12 characters. 204.",
    requestSchema: passwordBody,
    successStatuses: [204],
    async handler(rc) {
      const userId = guidParam(rc, 'userId');
      const { password } = await rc.body(passwordBody);
      await rc.deps.master.service(DirectoryServiceService).setPassword({ userId, password, currentPassword: '' });
      return { status: 204 };
    },
  },
  {
    method: 'PUT',
    path: '/whoami/password',
    operation: 'password.self',
    summary:
      'Change your own password: { currentPassword, password } (at least 12 characters). 204; a wrong current password answers 400 and counts toward the sign-in throttle.',
    requestSchema: ownPasswordBody,
    successStatuses: [204],
    async handler(rc) {
      const userId = rc.principal!.userId.toLowerCase();
      const { currentPassword, password } = await rc.body(ownPasswordBody);
      const throttleKey = `password-change:${userId}`;
      rc.deps.loginThrottle.check(throttleKey);
      try {
        await rc.deps.master.service(DirectoryServiceService).setPassword({ userId, password, currentPassword });
      } catch (err) {
        if (err instanceof Error && err.message === WRONG_CURRENT_PASSWORD) rc.deps.loginThrottle.recordFailure(throttleKey);
        throw err;
      }
      rc.deps.loginThrottle.recordSuccess(throttleKey);
      return { status: 204 };
    },
  },
];
