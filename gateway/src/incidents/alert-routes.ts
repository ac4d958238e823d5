import { AlertServiceService } from '@strata/proto/incidents/v1/alerts';
import { z } from 'zod';
import { validateBody } from '../http/request-body.js';
import type { RouteDef } from '../http/route.js';
import { incidentBodySchema, incidentInput } from './incident-input.js';
import { incidentJson, linkJson, runtimeStateJson } from './incident-json.js';

const fromAlertSchema = incidentBodySchema.extend({ incidentId: z.string().nullish() });
const runtimeStateSchema = z.object({ state: z.string().nullish() });
const linkSchema = z.object({ linkSource: z.string().nullish() });

/** Alert integration (docs/api.md, Alert integration). */
export const alertRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/accounts/:accountId/incidents/from-alert/:alertRecordId',
    operation: 'incidents.write',
    summary:
      "Create the alert's incident unless one exists (id derived from account and alert unless incidentId is given; body: the incident fields), link it (alert-triggered), set the alert runtime state ACTIVE. 201 when created, 200 when it existed: { created, incident, link }.",
    requestSchema: fromAlertSchema,
    async handler(rc) {
      const raw = await rc.json();
      const body = raw === undefined ? {} : validateBody(raw, fromAlertSchema);
      const res = await rc.deps.master.service(AlertServiceService).createIncidentFromAlert({
        accountId: rc.params.accountId!,
        alertRecordId: rc.params.alertRecordId!,
        actorUserId: rc.principal!.userId,
        incident: incidentInput(body),
        incidentId: body.incidentId ?? undefined,
      });
      return {
        status: res.created ? 201 : 200,
        body: { created: res.created, incident: incidentJson(res.incident!), link: linkJson(res.link!) },
      };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/alert-runtime-states',
    operation: 'incidents.read',
    summary: 'Runtime state of every alert of the account.',
    async handler(rc) {
      const { states } = await rc.deps.master
        .service(AlertServiceService)
        .listAlertRuntimeStates({ accountId: rc.params.accountId! });
      return { body: states.map(runtimeStateJson) };
    },
  },
  {
    method: 'PUT',
    path: '/accounts/:accountId/alert-runtime-states/:alertRecordId',
    operation: 'incidents.write',
    summary: 'Set the runtime state of an alert (body: { state }, e.g. ACTIVE); 201 when new, 200 otherwise.',
    requestSchema: runtimeStateSchema,
    async handler(rc) {
      const body = await rc.body(runtimeStateSchema);
      const res = await rc.deps.master.service(AlertServiceService).putAlertRuntimeState({
        accountId: rc.params.accountId!,
        alertRecordId: rc.params.alertRecordId!,
        actorUserId: rc.principal!.userId,
        state: body.state ?? '',
      });
      return { status: res.created ? 201 : 200, body: runtimeStateJson(res.state!) };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/alert-incident-links',
    operation: 'incidents.read',
    summary: 'Alert-to-incident links of the account.',
    async handler(rc) {
      const { links } = await rc.deps.master
        .service(AlertServiceService)
        .listAlertIncidentLinks({ accountId: rc.params.accountId! });
      return { body: links.map(linkJson) };
    },
  },
  {
    method: 'PUT',
    path: '/accounts/:accountId/alert-incident-links/:alertRecordId/incidents/:incidentId',
    operation: 'incidents.write',
    summary: 'Link an alert to an existing incident (optional body { linkSource }, default manual); 201 when new, 200 otherwise.',
    requestSchema: linkSchema,
    async handler(rc) {
      const raw = await rc.json();
      const body = raw === undefined ? {} : validateBody(raw, linkSchema);
      const res = await rc.deps.master.service(AlertServiceService).putAlertIncidentLink({
        accountId: rc.params.accountId!,
        alertRecordId: rc.params.alertRecordId!,
        incidentId: rc.params.incidentId!,
        actorUserId: rc.principal!.userId,
        linkSource: body.linkSource ?? undefined,
      });
      return { status: res.created ? 201 : 200, body: linkJson(res.link!) };
    },
  },
  {
    method: 'DELETE',
    path: '/accounts/:accountId/alert-incident-links/:alertRecordId/incidents/:incidentId',
    operation: 'incidents.write',
    summary: 'Remove an alert-to-incident link: 204; 404 when there is no such link.',
    async handler(rc) {
      await rc.deps.master.service(AlertServiceService).deleteAlertIncidentLink({
        accountId: rc.params.accountId!,
        alertRecordId: rc.params.alertRecordId!,
        incidentId: rc.params.incidentId!,
      });
      return { status: 204 };
    },
  },
];
