import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';
import type { GatewayDeps } from '../gateway-deps.js';
import type { CatalogUser } from './types.js';

/** The members of an account with their permissions there, for `schema.users(.permissions)`. */
export async function accountMembers(deps: GatewayDeps, accountId: string): Promise<CatalogUser[]> {
  const { members } = await deps.master.service(DirectoryServiceService).listAccountMembers({ accountId });
  return members.map((m) => ({
    userId: m.user!.userId,
    userName: m.user!.userName,
    firstName: m.user!.firstName,
    lastName: m.user!.lastName,
    email: m.user!.email,
    permissions: m.permissions,
  }));
}
