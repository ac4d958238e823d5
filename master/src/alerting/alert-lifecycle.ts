import type { AlertRecord, AlertRule, FiringRecord } from '@strata/proto/alerting/v1/alert_rules';
import type { Incident } from '@strata/proto/incidents/v1/incidents';
import { alertIncidentId } from '../alerts/alert-incident-id.js';
import type { AlertService } from '../alerts/alert-service.js';
import type { Actor } from '../incidents/incident-journal.js';
import { LIMITS } from '../incidents/incident-model.js';
import { incidentRows } from '../incidents/incident-repository.js';
import type { IncidentService } from '../incidents/incident-service.js';
import type { SqlExecutor } from '../store/relational-store.js';
import { enqueueWebhookEvent } from '../webhooks/webhook-events.js';
import { alertRecordId } from './alert-record-id.js';
import { recordRows } from './alert-rule-repository.js';
import { renderAlertTemplate } from './alert-template.js';

/** Runtime states of alert records (docs/alerting.md); ACTIVE is the from-alert flow's. */
export const RECORD_STATE = { active: 'ACTIVE', muted: 'MUTED', resolved: 'RESOLVED' } as const;

/** Author of the comment a resolving rule writes: the all-zero id stands for "the system". */
export const SYSTEM_USER_ID = '00000000-0000-0000-0000-000000000000';

export interface LifecycleOutcome {
  fired: string[];
  resolved: string[];
}

/**
 * Applies one successful evaluation of `rule` to its alert records, on the caller's transaction
 * (so records, incidents, history, comments and outbox mail commit together, fenced):
 *
 * - a record that starts firing runs the from-alert flow (incident, `alert-triggered` link,
 *   runtime state ACTIVE, the incident-created mail); its incident, if it was resolved, is first
 *   reopened with a reopenReason (one incident per record, docs/alerting.md);
 * - a record that keeps firing only has `lastSeenAt` moved: no history, no mail;
 * - while the rule is muted a newly firing record becomes MUTED (no incident, no mail) and fires
 *   when an evaluation after the mute still finds it;
 * - a record not firing counts a clean evaluation; at `resolveAfter` it is RESOLVED, and its
 *   incident, if still open, is resolved with a note and gets a comment from the system actor.
 */
export async function applyEvaluation(
  tx: SqlExecutor,
  deps: { incidents: IncidentService; alerts: AlertService },
  rule: AlertRule,
  firing: FiringRecord[],
  now: string,
): Promise<LifecycleOutcome> {
  const def = rule.definition!;
  const { accountId, alertId } = rule;
  const records = new Map((await recordRows.list(tx, accountId, alertId)).map((r) => [r.alertRecordId, r] as const));
  const muted = def.mutedUntil !== '' && def.mutedUntil > now;
  const outcome: LifecycleOutcome = { fired: [], resolved: [] };
  const seen = new Set<string>();

  for (const f of firing) {
    const values = JSON.parse(f.dimensionsJson) as Record<string, unknown>;
    const id = alertRecordId(accountId, alertId, def.dimensions, values);
    if (seen.has(id)) continue;
    seen.add(id);
    const current = records.get(id);
    const base: AlertRecord = current ?? {
      accountId,
      alertId,
      alertRecordId: id,
      dimensionsJson: JSON.stringify(Object.fromEntries(def.dimensions.map((d) => [d, values[d] ?? null]))),
      state: '',
      incidentId: '',
      firstFiredAt: '',
      lastSeenAt: '',
      cleanEvaluations: 0,
      resolvedAt: '',
    };
    if (current?.state === RECORD_STATE.active) {
      await recordRows.upsert(tx, { ...current, lastSeenAt: now, cleanEvaluations: 0 });
      continue;
    }
    if (muted) {
      await recordRows.upsert(tx, { ...base, state: RECORD_STATE.muted, lastSeenAt: now, cleanEvaluations: 0 });
      await deps.alerts.setRuntimeState(tx, accountId, id, RECORD_STATE.muted, rule.createdByUserId, now);
      continue;
    }
    const row = JSON.parse(f.rowJson) as Record<string, unknown>;
    const actor: Actor = { type: 'SYSTEM', id: `alert:${id}` };
    if (current?.incidentId) await reopenIfResolved(tx, deps.incidents, accountId, current.incidentId, rule, actor, now);
    const { incident } = await deps.alerts.fromAlert(
      tx,
      {
        accountId,
        alertRecordId: id,
        actorUserId: rule.createdByUserId,
        targetId: alertIncidentId(accountId, id),
        input: {
          title: renderAlertTemplate(def.title, row, LIMITS.title),
          description: renderAlertTemplate(def.description, row, LIMITS.description),
          severity: def.severity,
          ownerType: def.ownerType,
          ownerId: def.ownerId,
          ...(def.assigneeUserId ? { assigneeUserId: def.assigneeUserId } : {}),
        },
      },
      now,
    );
    await recordRows.upsert(tx, {
      ...base,
      state: RECORD_STATE.active,
      incidentId: incident.incidentId,
      firstFiredAt: now,
      lastSeenAt: now,
      cleanEvaluations: 0,
      resolvedAt: '',
    });
    outcome.fired.push(id);
    await enqueueWebhookEvent(tx, {
      type: 'ALERT_FIRED',
      occurredAt: now,
      accountId,
      incident,
      alert: { alertId, alertRecordId: id, ruleName: def.name, dimensions: values, incidentId: incident.incidentId },
    });
  }

  for (const record of records.values()) {
    if (seen.has(record.alertRecordId) || record.state === RECORD_STATE.resolved) continue;
    const clean = record.cleanEvaluations + 1;
    if (clean < def.resolveAfter) {
      await recordRows.upsert(tx, { ...record, cleanEvaluations: clean });
      continue;
    }
    await recordRows.upsert(tx, { ...record, state: RECORD_STATE.resolved, cleanEvaluations: clean, resolvedAt: now });
    await deps.alerts.setRuntimeState(tx, accountId, record.alertRecordId, RECORD_STATE.resolved, rule.createdByUserId, now);
    if (record.state === RECORD_STATE.active && record.incidentId) {
      await resolveIncident(tx, deps.incidents, accountId, record, def.name, clean, now);
    }
    outcome.resolved.push(record.alertRecordId);
    await enqueueWebhookEvent(tx, {
      type: 'ALERT_RESOLVED',
      occurredAt: now,
      accountId,
      alert: {
        alertId,
        alertRecordId: record.alertRecordId,
        ruleName: def.name,
        dimensions: JSON.parse(record.dimensionsJson) as Record<string, unknown>,
        ...(record.incidentId ? { incidentId: record.incidentId } : {}),
      },
    });
  }
  return outcome;
}

/** The fields every incident save needs, taken from the stored incident. */
const keep = (i: Incident) => ({ title: i.title, ownerType: i.ownerType, ownerId: i.ownerId });

async function reopenIfResolved(
  tx: SqlExecutor,
  incidents: IncidentService,
  accountId: string,
  incidentId: string,
  rule: AlertRule,
  actor: Actor,
  now: string,
): Promise<void> {
  const incident = await incidentRows.get(tx, accountId, incidentId);
  // Only a resolved incident is reopened: one a person moved on (or deleted) is left as it is.
  if (incident?.state !== 'RESOLVED') return;
  await incidents.save(tx, {
    accountId,
    incidentId,
    input: { ...keep(incident), state: 'OPEN', reopenReason: `Alert rule "${rule.definition!.name}" fires again.` },
    actor,
    creatorUserId: rule.createdByUserId,
    now,
  });
}

async function resolveIncident(
  tx: SqlExecutor,
  incidents: IncidentService,
  accountId: string,
  record: AlertRecord,
  ruleName: string,
  clean: number,
  now: string,
): Promise<void> {
  const incident = await incidentRows.get(tx, accountId, record.incidentId);
  if (!incident) return;
  const actor: Actor = { type: 'SYSTEM', id: `alert:${record.alertRecordId}` };
  const note = `Alert rule "${ruleName}" found no firing rows in ${clean} consecutive evaluations.`;
  let current = incident;
  if (incident.state !== 'RESOLVED') {
    const saved = await incidents.save(tx, {
      accountId,
      incidentId: incident.incidentId,
      input: { ...keep(incident), state: 'RESOLVED', resolutionNote: note },
      actor,
      creatorUserId: incident.createdByUserId,
      now,
    });
    current = saved.incident;
  }
  await incidents.comment(tx, current, { authorUserId: SYSTEM_USER_ID, body: `Alert resolved: ${note}`, actor }, now);
}
