import { invalid, isGuid } from '@strata/common';

/** Incident lifecycle states, in the order of the state table (docs/api.md, Incidents). */
export const INCIDENT_STATES = ['OPEN', 'IN_PROGRESS', 'MITIGATED', 'RESOLVED'] as const;
export type IncidentState = (typeof INCIDENT_STATES)[number];

/** SEV1 is the most critical. */
const INCIDENT_SEVERITIES = ['SEV1', 'SEV2', 'SEV3', 'SEV4'] as const;
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];

const OWNER_TYPES = ['USER', 'GROUP'] as const;
export type OwnerType = (typeof OWNER_TYPES)[number];

export const DEFAULT_STATE: IncidentState = 'OPEN';
export const DEFAULT_SEVERITY: IncidentSeverity = 'SEV3';

const HISTORY_EVENT_TYPES = [
  'INCIDENT_CREATED',
  'INCIDENT_UPDATED',
  'INCIDENT_RESOLVED',
  'INCIDENT_REOPENED',
  'COMMENT_ADDED',
  'ALERT_TRIGGERED_INCIDENT',
  'ALERT_LINKED_INCIDENT',
] as const;
export type HistoryEventType = (typeof HISTORY_EVENT_TYPES)[number];

/** The event types that send a notification mail (docs/operations.md, Incident notification e-mail). */
export const NOTIFIED_EVENT_TYPES: ReadonlySet<HistoryEventType> = new Set([
  'INCIDENT_CREATED',
  'INCIDENT_UPDATED',
  'INCIDENT_RESOLVED',
  'INCIDENT_REOPENED',
  'COMMENT_ADDED',
]);

export type ActorType = 'USER' | 'SYSTEM';

/** The all-zero GUID that stands for "no assignee" in history metadata. */
export const EMPTY_GUID = '00000000-0000-0000-0000-000000000000';

export { isGuid };

/** Validates an identifier (path parameter or body field) and returns it in lower case. */
export function requireGuid(value: string, what: string): string {
  if (!isGuid(value)) throw invalid(`${what} must be a GUID.`);
  return value.toLowerCase();
}

function parseEnum<T extends string>(values: readonly T[], raw: string, what: string): T {
  const upper = raw.trim().toUpperCase();
  const found = values.find((v) => v === upper);
  if (!found) throw invalid(`${what} must be one of ${values.join(', ')}.`);
  return found;
}

export const parseState = (raw: string) => parseEnum(INCIDENT_STATES, raw, 'Incident state');
export const parseSeverity = (raw: string) => parseEnum(INCIDENT_SEVERITIES, raw, 'Incident severity');

/**
 * Owner types arrive as `USER`/`GROUP` and, from clients that speak the enum names the history
 * metadata uses, as `INCIDENT_OWNER_TYPE_USER`/`INCIDENT_OWNER_TYPE_GROUP`.
 */
export function parseOwnerType(raw: string): OwnerType {
  const upper = raw
    .trim()
    .toUpperCase()
    .replace(/^INCIDENT_OWNER_TYPE_/, '');
  return parseEnum(OWNER_TYPES, upper, 'Incident owner type');
}

/** Whitespace-only text counts as absent. */
export function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** Size limits of incident text fields (characters). */
export const LIMITS = {
  title: 512,
  description: 64 * 1024,
  note: 8 * 1024,
  comment: 64 * 1024,
} as const;

export function checkLength(value: string | undefined, max: number, what: string): void {
  if (value !== undefined && value.length > max) throw invalid(`${what} is longer than ${max} characters.`);
}

/**
 * The JSON form of a record as the API shows it and history events store it: every field of the
 * message, with absent optional fields as null.
 */
export function jsonSnapshot<T extends object>(record: T, optionalKeys: readonly (keyof T)[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  for (const k of optionalKeys) out[k as string] = record[k] ?? null;
  return out;
}

export const INCIDENT_OPTIONAL_FIELDS = [
  'description',
  'assigneeUserId',
  'resolvedAt',
  'resolutionNote',
  'reopenReason',
] as const;
