import { isGuid } from '@strata/common';
import type { AlertEvaluation, AlertRecord, AlertRule, AlertRuleDefinition } from '@strata/proto/alerting/v1/alert_rules';
import { z } from 'zod';
import { CONDITION_OPERATORS } from './alert-condition.js';

/**
 * The HTTP shape of an alert rule (docs/api.md, Alert rules): the request body with its defaults
 * and limits, and the JSON of rules, records and evaluations.
 */

/** The query engine's own limit on query text (parse-kql.ts). */
const MAX_QUERY_LENGTH = 65_536;
const DAY = 86_400;
const guid = z.string().refine(isGuid, 'must be a GUID');
const column = z.string().trim().min(1).max(128);

const conditionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('rows') }),
  z.object({ kind: z.literal('threshold'), column, operator: z.enum(CONDITION_OPERATORS), threshold: z.number().finite() }),
]);

export const alertRuleBody = z
  .object({
    name: z.string().trim().min(1, 'name is required').max(200),
    query: z.string().trim().min(1, 'query is required').max(MAX_QUERY_LENGTH),
    intervalSeconds: z.number().int().min(10).max(DAY).default(60),
    /** Default: the interval, so consecutive evaluations see adjacent windows. */
    lookbackSeconds: z
      .number()
      .int()
      .min(1)
      .max(7 * DAY)
      .optional(),
    condition: conditionSchema.default({ kind: 'rows' }),
    dimensions: z.array(column).max(10).default([]),
    severity: z.enum(['SEV1', 'SEV2', 'SEV3', 'SEV4']).default('SEV3'),
    ownerType: z.enum(['USER', 'GROUP']),
    ownerId: guid,
    assigneeUserId: guid.nullish(),
    title: z.string().trim().min(1, 'title is required').max(512),
    description: z
      .string()
      .max(64 * 1024)
      .default(''),
    enabled: z.boolean().default(true),
    mutedUntil: z.string().datetime({ offset: true }).nullish(),
    resolveAfter: z.number().int().min(1).max(100).default(3),
    /** Default: the interval or 60 s, whichever is shorter. */
    timeoutSeconds: z.number().int().min(1).max(300).optional(),
  })
  // An evaluation still running when the next tick begins is superseded (decisions/0008).
  .refine((b) => b.timeoutSeconds === undefined || b.timeoutSeconds <= b.intervalSeconds, {
    message: 'timeoutSeconds must not exceed intervalSeconds.',
    path: ['timeoutSeconds'],
  });
export type AlertRuleBody = z.output<typeof alertRuleBody>;

export function ruleDefinition(b: AlertRuleBody): AlertRuleDefinition {
  const c = b.condition;
  return {
    name: b.name,
    query: b.query,
    intervalSeconds: b.intervalSeconds,
    lookbackSeconds: b.lookbackSeconds ?? b.intervalSeconds,
    condition:
      c.kind === 'threshold'
        ? { kind: 'threshold', column: c.column, operator: c.operator, threshold: c.threshold }
        : { kind: 'rows', column: '', operator: '', threshold: 0 },
    dimensions: b.dimensions,
    severity: b.severity,
    ownerType: b.ownerType,
    ownerId: b.ownerId.toLowerCase(),
    assigneeUserId: b.assigneeUserId?.toLowerCase() ?? '',
    title: b.title,
    description: b.description,
    enabled: b.enabled,
    mutedUntil: b.mutedUntil ? new Date(b.mutedUntil).toISOString() : '',
    resolveAfter: b.resolveAfter,
    timeoutSeconds: b.timeoutSeconds ?? Math.min(60, b.intervalSeconds),
  };
}

const orNull = (s: string) => (s === '' ? null : s);

export const alertRuleJsonSchema = z.object({
  alertId: z.string(),
  name: z.string(),
  query: z.string(),
  intervalSeconds: z.number(),
  lookbackSeconds: z.number(),
  condition: conditionSchema,
  dimensions: z.array(z.string()),
  severity: z.string(),
  ownerType: z.string(),
  ownerId: z.string(),
  assigneeUserId: z.string().nullable(),
  title: z.string(),
  description: z.string(),
  enabled: z.boolean(),
  mutedUntil: z.string().nullable(),
  resolveAfter: z.number(),
  timeoutSeconds: z.number(),
  createdByUserId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  status: z.object({
    state: z.enum(['PENDING', 'OK', 'ERROR']),
    lastError: z.string().nullable(),
    lastTickAt: z.string().nullable(),
    lastEvaluatedAt: z.string().nullable(),
  }),
});

export function alertRuleJson(r: AlertRule): z.output<typeof alertRuleJsonSchema> {
  const d = r.definition!;
  const s = r.status!;
  return {
    alertId: r.alertId,
    name: d.name,
    query: d.query,
    intervalSeconds: d.intervalSeconds,
    lookbackSeconds: d.lookbackSeconds,
    condition:
      d.condition?.kind === 'threshold'
        ? {
            kind: 'threshold',
            column: d.condition.column,
            operator: d.condition.operator as never,
            threshold: d.condition.threshold,
          }
        : { kind: 'rows' },
    dimensions: d.dimensions,
    severity: d.severity,
    ownerType: d.ownerType,
    ownerId: d.ownerId,
    assigneeUserId: orNull(d.assigneeUserId),
    title: d.title,
    description: d.description,
    enabled: d.enabled,
    mutedUntil: orNull(d.mutedUntil),
    resolveAfter: d.resolveAfter,
    timeoutSeconds: d.timeoutSeconds,
    createdByUserId: r.createdByUserId,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    status: {
      state: s.state as 'PENDING' | 'OK' | 'ERROR',
      lastError: orNull(s.lastError),
      lastTickAt: orNull(s.lastTickAt),
      lastEvaluatedAt: orNull(s.lastEvaluatedAt),
    },
  };
}

export const alertRecordJsonSchema = z.object({
  alertRecordId: z.string(),
  dimensions: z.record(z.string(), z.unknown()),
  state: z.enum(['ACTIVE', 'MUTED', 'RESOLVED']),
  incidentId: z.string().nullable(),
  firstFiredAt: z.string().nullable(),
  lastSeenAt: z.string().nullable(),
  cleanEvaluations: z.number(),
  resolvedAt: z.string().nullable(),
});

export function alertRecordJson(r: AlertRecord): z.output<typeof alertRecordJsonSchema> {
  return {
    alertRecordId: r.alertRecordId,
    dimensions: JSON.parse(r.dimensionsJson) as Record<string, unknown>,
    state: r.state as 'ACTIVE' | 'MUTED' | 'RESOLVED',
    incidentId: orNull(r.incidentId),
    firstFiredAt: orNull(r.firstFiredAt),
    lastSeenAt: orNull(r.lastSeenAt),
    cleanEvaluations: r.cleanEvaluations,
    resolvedAt: orNull(r.resolvedAt),
  };
}

export const alertEvaluationJsonSchema = z.object({
  tickAt: z.string(),
  claimedAt: z.string(),
  evaluatedAt: z.string(),
  durationMs: z.number(),
  rows: z.number(),
  fired: z.array(z.string()),
  resolved: z.array(z.string()),
  error: z.string().nullable(),
});

export function alertEvaluationJson(e: AlertEvaluation): z.output<typeof alertEvaluationJsonSchema> {
  return {
    tickAt: e.tickAt,
    claimedAt: e.claimedAt,
    evaluatedAt: e.evaluatedAt,
    durationMs: e.durationMs,
    rows: e.rows,
    fired: e.firedRecordIds,
    resolved: e.resolvedRecordIds,
    error: orNull(e.error),
  };
}
