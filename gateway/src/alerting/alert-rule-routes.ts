import { invalid, isGuid, notFound } from '@strata/common';
import { AlertRuleServiceService } from '@strata/proto/alerting/v1/alert_rules';
import { z } from 'zod';
import type { RouteContext, RouteDef } from '../http/route.js';
import { evaluateRule } from './alert-evaluation.js';
import {
  alertEvaluationJson,
  alertEvaluationJsonSchema,
  alertRecordJson,
  alertRecordJsonSchema,
  alertRuleBody,
  alertRuleJson,
  alertRuleJsonSchema,
  ruleDefinition,
} from './alert-rule-body.js';
import { checkAlertRule } from './alert-rule-check.js';

/**
 * Alert rules of an account (docs/alerting.md, docs/api.md "Alert rules"). Reading rules, their
 * records and evaluation log is `alerts.read` (account admins and every incident role: who sees
 * the incidents sees what opens them); writing, deleting and dry runs are `alerts.write` (account
 * admins and incident managers: a rule opens incidents and mails people on its own).
 */

const BASE = '/accounts/:accountId/alerts';

function ids(rc: RouteContext): { accountId: string; alertId: string } {
  const accountId = rc.params.accountId!;
  const alertId = rc.params.alertId ?? '';
  if (!isGuid(accountId)) throw invalid('The account id must be a GUID.');
  if (rc.params.alertId !== undefined && !isGuid(alertId)) throw invalid('The alert id must be a GUID.');
  return { accountId: accountId.toLowerCase(), alertId: alertId.toLowerCase() };
}

const ruleWithRecords = alertRuleJsonSchema.extend({ records: z.array(alertRecordJsonSchema) });
const dryRunJsonSchema = z.object({
  at: z.string(),
  durationMs: z.number(),
  rows: z.number(),
  wouldFire: z.array(z.object({ dimensions: z.record(z.string(), z.unknown()), row: z.record(z.string(), z.unknown()) })),
});

async function dryRun(rc: RouteContext, accountId: string, def: ReturnType<typeof ruleDefinition>) {
  await checkAlertRule(rc.deps.query, accountId, def);
  const at = new Date();
  const result = await evaluateRule(rc.deps.query, accountId, def, at);
  return {
    body: {
      at: at.toISOString(),
      durationMs: result.durationMs,
      rows: result.rows,
      wouldFire: result.firing.map((f) => ({
        dimensions: JSON.parse(f.dimensionsJson) as Record<string, unknown>,
        row: JSON.parse(f.rowJson) as Record<string, unknown>,
      })),
    },
  };
}

export const alertRuleRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'alerts.read',
    summary: "The account's alert rules with their status.",
    responseSchema: z.array(alertRuleJsonSchema),
    async handler(rc) {
      const { rules } = await rc.deps.master.service(AlertRuleServiceService).listAlertRules({ accountId: ids(rc).accountId });
      return { body: rules.map(alertRuleJson) };
    },
  },
  {
    method: 'POST',
    path: `${BASE}/test`,
    operation: 'alerts.write',
    summary:
      'Dry run of an unsaved rule (body as for PUT): evaluates it now and answers what would fire, changing nothing: { at, durationMs, rows, wouldFire: [{ dimensions, row }] }.',
    requestSchema: alertRuleBody,
    responseSchema: dryRunJsonSchema,
    async handler(rc) {
      const body = await rc.body(alertRuleBody);
      return dryRun(rc, ids(rc).accountId, ruleDefinition(body));
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:alertId`,
    operation: 'alerts.read',
    summary: 'One alert rule with its status and its alert records (one per firing dimension combination).',
    responseSchema: ruleWithRecords,
    async handler(rc) {
      const { accountId, alertId } = ids(rc);
      const service = rc.deps.master.service(AlertRuleServiceService);
      const { rule } = await service.getAlertRule({ accountId, alertId });
      if (!rule) throw notFound(`Alert rule ${alertId} does not exist.`);
      const { records } = await service.listAlertRecords({ accountId, alertId });
      return { body: { ...alertRuleJson(rule), records: records.map(alertRecordJson) } };
    },
  },
  {
    method: 'PUT',
    path: `${BASE}/:alertId`,
    operation: 'alerts.write',
    summary:
      'Create or replace an alert rule (upsert). The query is checked first (400 with the engine message and token positions); the owner must be a group of the account or a member. 201 when created, 200 when replaced.',
    requestSchema: alertRuleBody,
    responseSchema: alertRuleJsonSchema,
    successStatuses: [200, 201],
    async handler(rc) {
      const { accountId, alertId } = ids(rc);
      const definition = ruleDefinition(await rc.body(alertRuleBody));
      await checkAlertRule(rc.deps.query, accountId, definition);
      const res = await rc.deps.master
        .service(AlertRuleServiceService)
        .putAlertRule({ accountId, alertId, definition, actorUserId: rc.principal!.userId });
      return { status: res.created ? 201 : 200, body: alertRuleJson(res.rule!) };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:alertId`,
    operation: 'alerts.write',
    summary: 'Delete an alert rule with its records and evaluation log (incidents it opened stay). 204; 404 when none.',
    successStatuses: [204],
    async handler(rc) {
      const { accountId, alertId } = ids(rc);
      const { deleted } = await rc.deps.master.service(AlertRuleServiceService).deleteAlertRule({ accountId, alertId });
      if (!deleted) throw notFound(`Alert rule ${alertId} does not exist.`);
      return { status: 204 };
    },
  },
  {
    method: 'GET',
    path: `${BASE}/:alertId/evaluations`,
    operation: 'alerts.read',
    summary: "The rule's evaluation log, newest first (kept 7 days; ?limit=1..1000, default 100).",
    responseSchema: z.array(alertEvaluationJsonSchema),
    async handler(rc) {
      const { accountId, alertId } = ids(rc);
      const limit = Number(rc.koa.query.limit ?? 100);
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw invalid('limit must be an integer from 1 to 1000.');
      const service = rc.deps.master.service(AlertRuleServiceService);
      const { rule } = await service.getAlertRule({ accountId, alertId });
      if (!rule) throw notFound(`Alert rule ${alertId} does not exist.`);
      const { evaluations } = await service.listAlertEvaluations({ accountId, alertId, limit });
      return { body: evaluations.map(alertEvaluationJson) };
    },
  },
  {
    method: 'POST',
    path: `${BASE}/:alertId/test`,
    operation: 'alerts.write',
    summary: 'Dry run of a saved rule: evaluates it now and answers what would fire, changing nothing.',
    responseSchema: dryRunJsonSchema,
    async handler(rc) {
      const { accountId, alertId } = ids(rc);
      const { rule } = await rc.deps.master.service(AlertRuleServiceService).getAlertRule({ accountId, alertId });
      if (!rule) throw notFound(`Alert rule ${alertId} does not exist.`);
      return dryRun(rc, accountId, rule.definition!);
    },
  },
];
