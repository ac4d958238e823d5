import { invalid } from '@strata/common';
import { IncidentServiceService } from '@strata/proto/incidents/v1/incidents';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';
import { incidentBodySchema, incidentInput, writePrecondition } from './incident-input.js';
import { commentJson, historyJson, incidentEtag, incidentJson } from './incident-json.js';
import { pagingHeaders, queryInt, queryList } from './list-query.js';

/** Largest page of GET /accounts/{accountId}/incidents (also the default page size). */
export const INCIDENT_PAGE_SIZE = 1000;

const commentBodySchema = z.object({ body: z.string().nullish() });

const BASE = '/accounts/:accountId/incidents';

/** Incidents, comments and history (docs/api.md, Incidents). */
export const incidentRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'incidents.read',
    summary:
      'Incidents of the account, most recently updated first. Filters: state, severity, ownerId, assigneeUserId (repeat or comma-separate values). Paging: offset, limit (default and maximum 1000); X-Total-Count and Link (rel next/prev) headers.',
    async handler(rc) {
      const offset = queryInt(rc.koa, 'offset', 0);
      const limit = queryInt(rc.koa, 'limit', INCIDENT_PAGE_SIZE);
      if (limit < 1 || limit > INCIDENT_PAGE_SIZE) throw invalid(`limit must be between 1 and ${INCIDENT_PAGE_SIZE}.`);
      const res = await rc.deps.master.service(IncidentServiceService).listIncidents({
        accountId: rc.params.accountId!,
        states: queryList(rc.koa, 'state'),
        severities: queryList(rc.koa, 'severity'),
        ownerIds: queryList(rc.koa, 'ownerId'),
        assigneeUserIds: queryList(rc.koa, 'assigneeUserId'),
        offset,
        limit,
      });
      return {
        body: res.incidents.map(incidentJson),
        headers: pagingHeaders(rc.koa, offset, limit, res.incidents.length, res.total),
      };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:incidentId`,
    operation: 'incidents.read',
    summary: 'One incident; 404 when it does not exist. ETag: its version.',
    async handler(rc) {
      const { incident } = await rc.deps.master
        .service(IncidentServiceService)
        .getIncident({ accountId: rc.params.accountId!, incidentId: rc.params.incidentId! });
      return { body: incidentJson(incident!), headers: { etag: incidentEtag(incident!) } };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:incidentId`,
    operation: 'incidents.write',
    summary:
      'Create (201) or update (200) the incident. Absent fields keep their value (defaults OPEN, SEV3 on create); null clears description and assigneeUserId. If-Match: "<version>" or * and If-None-Match: * give 412 when not met. Answers the incident with its ETag.',
    requestSchema: incidentBodySchema,
    async handler(rc) {
      const body = await rc.body(incidentBodySchema);
      const res = await rc.deps.master.service(IncidentServiceService).putIncident({
        accountId: rc.params.accountId!,
        incidentId: rc.params.incidentId!,
        actorUserId: rc.principal!.userId,
        incident: incidentInput(body),
        precondition: writePrecondition(rc.koa),
      });
      const incident = res.incident!;
      const headers: Record<string, string> = { etag: incidentEtag(incident) };
      if (res.created) headers.location = `/accounts/${incident.accountId}/incidents/${incident.incidentId}`;
      return { status: res.created ? 201 : 200, body: incidentJson(incident), headers };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:incidentId`,
    operation: 'incidents.write',
    summary: 'Delete the incident with its comments, history and alert links: 204; 404 when it does not exist. Honours If-Match.',
    async handler(rc) {
      await rc.deps.master.service(IncidentServiceService).deleteIncident({
        accountId: rc.params.accountId!,
        incidentId: rc.params.incidentId!,
        precondition: writePrecondition(rc.koa),
      });
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:incidentId/comments`,
    operation: 'incidents.read',
    summary: 'Comments of the incident, oldest first.',
    async handler(rc) {
      const { comments } = await rc.deps.master
        .service(IncidentServiceService)
        .listComments({ accountId: rc.params.accountId!, incidentId: rc.params.incidentId! });
      return { body: comments.map(commentJson) };
    },
  },
  {
    method: 'POST',
    path: `${BASE}/:incidentId/comments`,
    operation: 'incidents.write',
    summary: 'Add a comment (required non-blank body); 201 with the comment. Writes COMMENT_ADDED and notifies.',
    requestSchema: commentBodySchema,
    async handler(rc) {
      const body = await rc.body(commentBodySchema);
      const { comment } = await rc.deps.master.service(IncidentServiceService).addComment({
        accountId: rc.params.accountId!,
        incidentId: rc.params.incidentId!,
        actorUserId: rc.principal!.userId,
        body: body.body ?? '',
      });
      return { status: 201, body: commentJson(comment!) };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:incidentId/history`,
    operation: 'incidents.read',
    summary: 'History events of the incident, oldest first.',
    async handler(rc) {
      const { events } = await rc.deps.master
        .service(IncidentServiceService)
        .listHistory({ accountId: rc.params.accountId!, incidentId: rc.params.incidentId! });
      return { body: events.map(historyJson) };
    },
  },
];
