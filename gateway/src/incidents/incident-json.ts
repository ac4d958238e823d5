import type { AlertIncidentLink, AlertRuntimeState } from '@strata/proto/incidents/v1/alerts';
import type { Group, GroupMember } from '@strata/proto/incidents/v1/groups';
import type { Incident, IncidentComment, IncidentHistoryEvent } from '@strata/proto/incidents/v1/incidents';

/** The API's JSON of a message: every field present, absent optional ones as null. */
function withNulls<T extends object>(record: T, optional: readonly (keyof T)[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(record as Record<string, unknown>) };
  for (const k of optional) out[k as string] = record[k] ?? null;
  return out;
}

export const incidentJson = (i: Incident) =>
  withNulls(i, ['description', 'assigneeUserId', 'resolvedAt', 'resolutionNote', 'reopenReason']);
export const commentJson = (c: IncidentComment) => withNulls(c, []);
export const historyJson = (e: IncidentHistoryEvent) => withNulls(e, ['beforeJson', 'afterJson']);
export const groupJson = (g: Group) => withNulls(g, ['description']);
export const memberJson = (m: GroupMember) => withNulls(m, []);
export const linkJson = (l: AlertIncidentLink) => withNulls(l, []);
export const runtimeStateJson = (s: AlertRuntimeState) => withNulls(s, []);

/** The ETag of an incident: its version, quoted (a strong validator). */
export const incidentEtag = (i: Incident) => `"${i.version}"`;
