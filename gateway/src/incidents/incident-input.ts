import { invalid } from '@strata/common';
import type { IncidentInput, WritePrecondition } from '@strata/proto/incidents/v1/incidents';
import type { Context } from 'koa';
import { z } from 'zod';

const text = z.string().nullish();

/**
 * The incident object of PUT (and of the alert flow). Only types are checked here: the master
 * applies the rules and messages of docs/api.md (required title and owner, states, ownership). Unknown
 * keys (incidentId, createdAt, … from a GET-modify-PUT round trip) are ignored.
 */
export const incidentBodySchema = z.object({
  title: text,
  description: text,
  state: text,
  severity: text,
  ownerType: text,
  ownerId: text,
  assigneeUserId: text,
  resolutionNote: text,
  reopenReason: text,
});

export type IncidentBody = z.output<typeof incidentBodySchema>;

/**
 * Body to master input. An absent key keeps the stored value (on create: the default); null
 * clears description and assignee, and counts as absent for the other fields.
 */
export function incidentInput(body: IncidentBody): IncidentInput {
  const keep = (v: string | null | undefined) => (v === null ? undefined : v);
  const clearable = (v: string | null | undefined) => (v === null ? '' : v);
  return {
    title: keep(body.title),
    description: clearable(body.description),
    state: keep(body.state),
    severity: keep(body.severity),
    ownerType: keep(body.ownerType),
    ownerId: keep(body.ownerId),
    assigneeUserId: clearable(body.assigneeUserId),
    resolutionNote: keep(body.resolutionNote),
    reopenReason: keep(body.reopenReason),
  };
}

/**
 * Optimistic concurrency from the request headers: `If-Match: "<version>"` (the ETag of GET) makes
 * the write fail with 412 when the incident changed since; `If-Match: *` requires that it exists;
 * `If-None-Match: *` makes a PUT create-only.
 */
export function writePrecondition(ctx: Context): WritePrecondition | undefined {
  const ifMatch = ctx.get('if-match').trim();
  const ifNoneMatch = ctx.get('if-none-match').trim();
  if (!ifMatch && !ifNoneMatch) return undefined;
  const p: WritePrecondition = { mustExist: false, mustNotExist: false };
  if (ifMatch === '*') p.mustExist = true;
  else if (ifMatch) {
    const m = /^(?:W\/)?"?(\d{1,15})"?$/.exec(ifMatch);
    if (!m) throw invalid('If-Match must be * or the incident ETag (its version, e.g. "3").');
    p.expectedVersion = Number(m[1]);
  }
  if (ifNoneMatch === '*') p.mustNotExist = true;
  else if (ifNoneMatch) throw invalid('If-None-Match is only supported as * (create only).');
  return p;
}
