import { invalid, notFound } from '@strata/common';
import type { AlertIncidentLink, AlertRuntimeState, CreateIncidentFromAlertRequest } from '@strata/proto/incidents/v1/alerts';
import type { Incident, IncidentInput } from '@strata/proto/incidents/v1/incidents';
import { historyMetadata } from '../incidents/history-metadata.js';
import { type Actor, journal } from '../incidents/incident-journal.js';
import { blankToUndefined, jsonSnapshot, requireGuid } from '../incidents/incident-model.js';
import { incidentRows } from '../incidents/incident-repository.js';
import { type IncidentService, incidentMissing } from '../incidents/incident-service.js';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';
import { alertIncidentId } from './alert-incident-id.js';
import { linkRows, runtimeStateRows } from './alert-repository.js';

const ALERT_TRIGGERED = 'alert-triggered';
const MANUAL = 'manual';
export const ACTIVE = 'ACTIVE';

const LINK_SOURCE = /^[A-Za-z0-9._-]{1,64}$/;
const RUNTIME_STATE = /^[A-Z][A-Z0-9_]{0,63}$/;

/** History events of the alert-driven flow are system actions, attributed to the alert. */
const alertActor = (alertRecordId: string): Actor => ({ type: 'SYSTEM', id: `alert:${alertRecordId}` });

const linkJson = (l: AlertIncidentLink) => jsonSnapshot(l, []);

/**
 * Alert integration: the alert-driven incident flow, manual alert-to-incident links and alert
 * runtime states.
 */
export class AlertService {
  constructor(
    private readonly store: RelationalStore,
    private readonly incidents: IncidentService,
  ) {}

  /**
   * Creates the alert's incident unless one exists, links it (`alert-triggered`), sets the runtime
   * state to ACTIVE and records the history event, in one transaction. Transactions are serialized,
   * so concurrent calls for one alert find the incident the first one created.
   */
  async createIncidentFromAlert(req: CreateIncidentFromAlertRequest) {
    const accountId = requireGuid(req.accountId, 'accountId');
    const alertRecordId = requireGuid(req.alertRecordId, 'alertRecordId');
    const actorUserId = req.actorUserId.toLowerCase();
    const explicitId = blankToUndefined(req.incidentId);
    const targetId = explicitId ? requireGuid(explicitId.trim(), 'incidentId') : alertIncidentId(accountId, alertRecordId);
    return this.store.transaction((tx) =>
      this.fromAlert(
        tx,
        { accountId, alertRecordId, actorUserId, targetId, input: req.incident ?? {} },
        new Date().toISOString(),
      ),
    );
  }

  /**
   * The from-alert flow on the caller's transaction (alert rules run it inside the transaction
   * that applies an evaluation).
   */
  async fromAlert(
    tx: SqlExecutor,
    req: { accountId: string; alertRecordId: string; actorUserId: string; targetId: string; input: IncidentInput },
    now: string,
  ): Promise<{ incident: Incident; created: boolean; link: AlertIncidentLink }> {
    const { accountId, alertRecordId, actorUserId, targetId } = req;
    const actor = alertActor(alertRecordId);
    const linkedId = await linkRows.triggeredIncidentId(tx, accountId, alertRecordId);
    let incident: Incident | undefined = await incidentRows.get(tx, accountId, linkedId ?? targetId);
    let created = false;
    if (!incident) {
      const result = await this.incidents.save(tx, {
        accountId,
        incidentId: targetId,
        input: req.input,
        actor,
        creatorUserId: actorUserId,
        now,
      });
      incident = result.incident;
      created = true;
    }
    const previous = await linkRows.get(tx, accountId, alertRecordId, incident.incidentId);
    const link: AlertIncidentLink = {
      accountId,
      alertRecordId,
      incidentId: incident.incidentId,
      linkSource: ALERT_TRIGGERED,
      createdByUserId: previous?.createdByUserId ?? actorUserId,
      createdAt: previous?.createdAt ?? now,
    };
    await linkRows.upsert(tx, link);
    await this.setRuntimeState(tx, accountId, alertRecordId, ACTIVE, actorUserId, now);
    await journal(tx, {
      eventType: created ? 'ALERT_TRIGGERED_INCIDENT' : 'ALERT_LINKED_INCIDENT',
      actor,
      incident,
      after: linkJson(link),
      metadata: historyMetadata(incident),
      now,
    });
    return { incident, created, link };
  }

  /** Writes an alert record's runtime state on the caller's transaction. */
  async setRuntimeState(tx: SqlExecutor, accountId: string, alertRecordId: string, state: string, userId: string, now: string) {
    const record: AlertRuntimeState = { accountId, alertRecordId, state, updatedByUserId: userId, updatedAt: now };
    await runtimeStateRows.upsert(tx, record);
    return record;
  }

  async listRuntimeStates(accountId: string): Promise<AlertRuntimeState[]> {
    const a = requireGuid(accountId, 'accountId');
    return this.store.read((x) => runtimeStateRows.list(x, a));
  }

  async putRuntimeState(accountId: string, alertRecordId: string, state: string, actorUserId: string) {
    const a = requireGuid(accountId, 'accountId');
    const alert = requireGuid(alertRecordId, 'alertRecordId');
    const value = state.trim().toUpperCase();
    if (!value) throw invalid('Alert runtime state is required.');
    if (!RUNTIME_STATE.test(value)) throw invalid('Alert runtime state must be a name of letters, digits and underscores.');
    return this.store.transaction(async (tx) => {
      const existed = (await runtimeStateRows.get(tx, a, alert)) !== undefined;
      const record = await this.setRuntimeState(tx, a, alert, value, actorUserId.toLowerCase(), new Date().toISOString());
      return { state: record, created: !existed };
    });
  }

  async listLinks(accountId: string): Promise<AlertIncidentLink[]> {
    const a = requireGuid(accountId, 'accountId');
    return this.store.read((x) => linkRows.list(x, a));
  }

  /**
   * Links an alert to an existing incident; the source defaults to `manual`. A new link records
   * ALERT_LINKED_INCIDENT; re-putting an existing link only updates its source.
   */
  async putLink(accountId: string, alertRecordId: string, incidentId: string, actorUserId: string, linkSource?: string) {
    const a = requireGuid(accountId, 'accountId');
    const alert = requireGuid(alertRecordId, 'alertRecordId');
    const i = requireGuid(incidentId, 'incidentId');
    const source = blankToUndefined(linkSource)?.trim() ?? MANUAL;
    if (!LINK_SOURCE.test(source)) throw invalid('linkSource must be 1 to 64 letters, digits, dots, dashes or underscores.');
    return this.store.transaction(async (tx) => {
      const incident = await incidentRows.get(tx, a, i);
      if (!incident) throw notFound(incidentMissing(i));
      const previous = await linkRows.get(tx, a, alert, i);
      const now = new Date().toISOString();
      const link: AlertIncidentLink = {
        accountId: a,
        alertRecordId: alert,
        incidentId: i,
        linkSource: source,
        createdByUserId: previous?.createdByUserId ?? actorUserId.toLowerCase(),
        createdAt: previous?.createdAt ?? now,
      };
      await linkRows.upsert(tx, link);
      if (!previous) {
        await journal(tx, {
          eventType: 'ALERT_LINKED_INCIDENT',
          actor: { type: 'USER', id: actorUserId.toLowerCase() },
          incident,
          after: linkJson(link),
          metadata: historyMetadata(incident),
          now,
        });
      }
      return { link, created: !previous };
    });
  }

  async deleteLink(accountId: string, alertRecordId: string, incidentId: string): Promise<void> {
    const a = requireGuid(accountId, 'accountId');
    const alert = requireGuid(alertRecordId, 'alertRecordId');
    const i = requireGuid(incidentId, 'incidentId');
    await this.store.transaction(async (tx) => {
      if (!(await linkRows.get(tx, a, alert, i))) throw notFound(`Alert ${alert} is not linked to incident ${i}.`);
      await linkRows.delete(tx, a, alert, i);
    });
  }
}
