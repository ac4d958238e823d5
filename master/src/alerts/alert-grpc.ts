import { type HandlersOf, invalid } from '@strata/common';
import type { AlertServiceService } from '@strata/proto/incidents/v1/alerts';
import type { AlertService } from './alert-service.js';

/** gRPC handlers of the master's AlertService. */
export function alertHandlers(service: () => AlertService): HandlersOf<typeof AlertServiceService> {
  const actor = (id: string) => {
    if (!id) throw invalid('actorUserId is required.');
    return id;
  };
  return {
    createIncidentFromAlert: async (req) => {
      actor(req.actorUserId);
      return service().createIncidentFromAlert(req);
    },
    listAlertRuntimeStates: async (req) => ({ states: await service().listRuntimeStates(req.accountId) }),
    putAlertRuntimeState: async (req) =>
      service().putRuntimeState(req.accountId, req.alertRecordId, req.state, actor(req.actorUserId)),
    listAlertIncidentLinks: async (req) => ({ links: await service().listLinks(req.accountId) }),
    putAlertIncidentLink: async (req) =>
      service().putLink(req.accountId, req.alertRecordId, req.incidentId, actor(req.actorUserId), req.linkSource),
    deleteAlertIncidentLink: async (req) => {
      await service().deleteLink(req.accountId, req.alertRecordId, req.incidentId);
      return {};
    },
  };
}
