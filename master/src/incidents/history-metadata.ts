import type { Incident } from '@strata/proto/incidents/v1/incidents';
import { EMPTY_GUID } from './incident-model.js';

/**
 * The compact metadata string of a history event (docs/api.md, HistoryEvent):
 * `owner=<owner_type>:<owner_id>`, then `changes=<item>|<item>…` when fields changed, then
 * `reopenReason=<text>` for a reopen, joined by `;`.
 *
 * Owner types are written as their enum names, `INCIDENT_OWNER_TYPE_GROUP` (the form the
 * product's documentation gives) and `INCIDENT_OWNER_TYPE_USER`, in the owner segment and in `Owner:` change items alike.
 * States and severities are written as the API spells them (`OPEN`, `SEV2`).
 */
function ownerTypeName(ownerType: string): string {
  return `INCIDENT_OWNER_TYPE_${ownerType}`;
}

const ownerRef = (i: Pick<Incident, 'ownerType' | 'ownerId'>) => `${ownerTypeName(i.ownerType)}:${i.ownerId}`;

/** Change items in the documented order: State, Severity, Owner, Assignee, Title, Description. */
export function changeItems(before: Incident, after: Incident): string[] {
  const items: string[] = [];
  if (before.state !== after.state) items.push(`State:${before.state}->${after.state}`);
  if (before.severity !== after.severity) items.push(`Severity:${before.severity}->${after.severity}`);
  if (before.ownerType !== after.ownerType || before.ownerId !== after.ownerId)
    items.push(`Owner:${ownerRef(before)}->${ownerRef(after)}`);
  if ((before.assigneeUserId ?? '') !== (after.assigneeUserId ?? ''))
    items.push(`Assignee:${before.assigneeUserId ?? EMPTY_GUID}->${after.assigneeUserId ?? EMPTY_GUID}`);
  if (before.title !== after.title) items.push('Title:updated');
  if ((before.description ?? '') !== (after.description ?? '')) items.push('Description:updated');
  return items;
}

export function historyMetadata(incident: Incident, options: { changes?: string[]; reopenReason?: string } = {}): string {
  const segments = [`owner=${ownerRef(incident)}`];
  if (options.changes && options.changes.length > 0) segments.push(`changes=${options.changes.join('|')}`);
  if (options.reopenReason !== undefined) segments.push(`reopenReason=${options.reopenReason}`);
  return segments.join(';');
}
