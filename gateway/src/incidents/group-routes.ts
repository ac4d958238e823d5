import { GroupServiceService } from '@strata/proto/incidents/v1/groups';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';
import { groupJson, memberJson } from './incident-json.js';

const groupBodySchema = z.object({
  name: z.string().nullish(),
  description: z.string().nullish(),
  createdByUserId: z.string().nullish(),
  createdAt: z.string().nullish(),
});

const BASE = '/accounts/:accountId/groups';
const orUndefined = (v: string | null | undefined) => v ?? undefined;

/** Groups and members (docs/api.md, Groups). Group changes publish no notification. */
export const groupRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'groups.read',
    summary: 'Groups of the account, by name.',
    async handler(rc) {
      const { groups } = await rc.deps.master.service(GroupServiceService).listGroups({ accountId: rc.params.accountId! });
      return { body: groups.map(groupJson) };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:groupId`,
    operation: 'groups.read',
    summary: 'One group; 404 when it does not exist.',
    async handler(rc) {
      const { group } = await rc.deps.master
        .service(GroupServiceService)
        .getGroup({ accountId: rc.params.accountId!, groupId: rc.params.groupId! });
      return { body: groupJson(group!) };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:groupId`,
    operation: 'groups.write',
    summary:
      'Create (201) or update (200) a group: name required; empty description stored as absent; createdByUserId and createdAt kept when supplied; updatedAt set now.',
    requestSchema: groupBodySchema,
    async handler(rc) {
      const body = await rc.body(groupBodySchema);
      const res = await rc.deps.master.service(GroupServiceService).putGroup({
        accountId: rc.params.accountId!,
        groupId: rc.params.groupId!,
        actorUserId: rc.principal!.userId,
        name: orUndefined(body.name),
        // null clears like ""; absent keeps the stored description.
        description: body.description === null ? '' : body.description,
        createdByUserId: orUndefined(body.createdByUserId),
        createdAt: orUndefined(body.createdAt),
      });
      return { status: res.created ? 201 : 200, body: groupJson(res.group!) };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:groupId`,
    operation: 'groups.write',
    summary: 'Delete the group and its memberships: 204; 400 while it owns incidents; 404 when it does not exist.',
    async handler(rc) {
      await rc.deps.master
        .service(GroupServiceService)
        .deleteGroup({ accountId: rc.params.accountId!, groupId: rc.params.groupId! });
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:groupId/members`,
    operation: 'groups.read',
    summary: 'Members of the group; 404 when the group does not exist.',
    async handler(rc) {
      const { members } = await rc.deps.master
        .service(GroupServiceService)
        .listGroupMembers({ accountId: rc.params.accountId!, groupId: rc.params.groupId! });
      return { body: members.map(memberJson) };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:groupId/members/:memberUserId`,
    operation: 'groups.write',
    summary:
      'Add a user who is a member of the account to the group (no body needed); 201 when new, 200 when the membership record was replaced.',
    async handler(rc) {
      const res = await rc.deps.master.service(GroupServiceService).putGroupMember({
        accountId: rc.params.accountId!,
        groupId: rc.params.groupId!,
        userId: rc.params.memberUserId!,
        actorUserId: rc.principal!.userId,
      });
      return { status: res.created ? 201 : 200, body: memberJson(res.member!) };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:groupId/members/:memberUserId`,
    operation: 'groups.write',
    summary: 'Remove one membership: 204; 404 when the group or the membership does not exist.',
    async handler(rc) {
      await rc.deps.master.service(GroupServiceService).deleteGroupMember({
        accountId: rc.params.accountId!,
        groupId: rc.params.groupId!,
        userId: rc.params.memberUserId!,
      });
      return { status: 204 };
    },
  },
];
