import type { HandlersOf } from '@strata/common';
import type { AgentServiceService } from '@strata/proto/agents/v1/agents';
import type { AgentRepository } from './agent-repository.js';

/** gRPC handlers of the master's AgentService. */
export function agentHandlers(repo: () => AgentRepository): HandlersOf<typeof AgentServiceService> {
  return {
    createRegistrationToken: async (req) =>
      repo().createRegistrationToken(req.accountId, req.description, req.createdByUserId, req.expiresAt),
    listRegistrationTokens: async (req) => ({ tokens: await repo().listRegistrationTokens(req.accountId) }),
    deleteRegistrationToken: async (req) => ({ deleted: await repo().deleteRegistrationToken(req.accountId, req.tokenId) }),
    refresh: async (req) => repo().refresh(req),
    listDevices: async (req) => ({ devices: await repo().listDevices(req.accountId) }),
    getDevice: async (req) => ({ device: await repo().getDevice(req.accountId, req.deviceId) }),
    approveDevice: async (req) => ({ device: await repo().approveDevice(req.accountId, req.deviceId, req.approvedByUserId) }),
    deleteDevice: async (req) => ({ deleted: await repo().deleteDevice(req.accountId, req.deviceId) }),
  };
}
