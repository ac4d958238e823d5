import { type HandlersOf, invalid } from '@strata/common';
import type { GroupServiceService } from '@strata/proto/incidents/v1/groups';
import type { GroupService } from './group-service.js';

/** gRPC handlers of the master's GroupService. */
export function groupHandlers(service: () => GroupService): HandlersOf<typeof GroupServiceService> {
  return {
    putGroup: async (req) => {
      if (!req.actorUserId) throw invalid('actorUserId is required.');
      return service().putGroup(req);
    },
    listGroups: async (req) => ({ groups: await service().listGroups(req.accountId) }),
    getGroup: async (req) => ({ group: await service().getGroup(req.accountId, req.groupId) }),
    deleteGroup: async (req) => {
      await service().deleteGroup(req.accountId, req.groupId);
      return {};
    },
    listGroupMembers: async (req) => ({ members: await service().listMembers(req.accountId, req.groupId) }),
    putGroupMember: async (req) => {
      if (!req.actorUserId) throw invalid('actorUserId is required.');
      return service().putMember(req.accountId, req.groupId, req.userId, req.actorUserId);
    },
    deleteGroupMember: async (req) => {
      await service().deleteMember(req.accountId, req.groupId, req.userId);
      return {};
    },
  };
}
