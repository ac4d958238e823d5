import type { Account, User } from '@strata/proto/directory/v1/directory';
import { z } from 'zod';

/**
 * JSON shapes of users, accounts and memberships (camelCase, as the clients read them), with the
 * zod schemas the OpenAPI document shows for them. A password or its hash never appears here.
 */
export const userJsonSchema = z.object({
  userId: z.string(),
  userName: z.string(),
  firstName: z.string(),
  lastName: z.string(),
  email: z.string(),
  createdAt: z.string(),
});

export const userDetailJsonSchema = userJsonSchema.extend({
  globalPermissions: z.array(z.string()),
  accounts: z.array(z.object({ accountId: z.string(), accountName: z.string(), permissions: z.array(z.string()) })),
});

export const accountJsonSchema = z.object({ accountId: z.string(), accountName: z.string(), createdAt: z.string() });

export const memberJsonSchema = userJsonSchema.extend({ permissions: z.array(z.string()) });

export const membershipJsonSchema = z.object({ accountId: z.string(), userId: z.string(), permissions: z.array(z.string()) });

export function userJson(u: User): z.output<typeof userJsonSchema> {
  return {
    userId: u.userId,
    userName: u.userName,
    firstName: u.firstName,
    lastName: u.lastName,
    email: u.email,
    createdAt: u.createdAt,
  };
}

export function accountJson(a: Account): z.output<typeof accountJsonSchema> {
  return { accountId: a.accountId, accountName: a.accountName, createdAt: a.createdAt };
}
