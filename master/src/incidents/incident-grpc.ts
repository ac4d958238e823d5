import { type HandlersOf, invalid } from '@strata/common';
import type { IncidentServiceService } from '@strata/proto/incidents/v1/incidents';
import type { IncidentService } from './incident-service.js';

/** gRPC handlers of the master's IncidentService. */
export function incidentHandlers(service: () => IncidentService): HandlersOf<typeof IncidentServiceService> {
  return {
    putIncident: async (req) => {
      if (!req.actorUserId) throw invalid('actorUserId is required.');
      return service().putIncident({
        accountId: req.accountId,
        incidentId: req.incidentId,
        input: req.incident ?? {},
        actor: { type: 'USER', id: req.actorUserId.toLowerCase() },
        creatorUserId: req.actorUserId.toLowerCase(),
        precondition: req.precondition,
      });
    },
    getIncident: async (req) => ({ incident: await service().getIncident(req.accountId, req.incidentId) }),
    listIncidents: async (req) =>
      service().listIncidents(
        req.accountId,
        { states: req.states, severities: req.severities, ownerIds: req.ownerIds, assigneeUserIds: req.assigneeUserIds },
        { offset: req.offset, limit: req.limit },
      ),
    deleteIncident: async (req) => {
      await service().deleteIncident(req.accountId, req.incidentId, req.precondition);
      return {};
    },
    addComment: async (req) => {
      if (!req.actorUserId) throw invalid('actorUserId is required.');
      return { comment: await service().addComment(req.accountId, req.incidentId, req.actorUserId, req.body) };
    },
    listComments: async (req) => ({ comments: await service().listComments(req.accountId, req.incidentId) }),
    listHistory: async (req) => ({ events: await service().listHistory(req.accountId, req.incidentId) }),
  };
}
