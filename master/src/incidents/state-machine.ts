import { invalid, StrataError } from '@strata/common';
import type { IncidentState } from './incident-model.js';

/**
 * The incident state table (docs/api.md, Incidents: State table). Keys are the "from" states, values the states an update may
 * move to; re-saving the same state is always allowed and is not listed.
 */
const ALLOWED_TRANSITIONS: Readonly<Record<IncidentState, readonly IncidentState[]>> = {
  OPEN: ['IN_PROGRESS', 'MITIGATED', 'RESOLVED'],
  IN_PROGRESS: ['MITIGATED', 'RESOLVED'],
  MITIGATED: ['IN_PROGRESS', 'RESOLVED'],
  RESOLVED: ['OPEN'],
};

/** What a save does to the lifecycle, which decides the history event type. */
export type TransitionKind = 'none' | 'move' | 'resolve' | 'reopen';

const INVALID_TRANSITION = 'Invalid incident state transition';
const RESOLUTION_NOTE_REQUIRED = 'Resolution note is required when resolving an incident.';
const REOPEN_REASON_REQUIRED = 'Reopen reason is required when reopening a resolved incident.';

/**
 * Checks a move from `from` to `to` against the table and its conditions. Returns what kind of
 * transition it is; throws a bad request with the documented message otherwise.
 */
export function checkTransition(
  from: IncidentState,
  to: IncidentState,
  conditions: { resolutionNote: string | undefined; reopenReason: string | undefined },
): TransitionKind {
  if (from === to) return 'none';
  if (!ALLOWED_TRANSITIONS[from].includes(to)) {
    throw new StrataError('invalid', INVALID_TRANSITION, { details: [{ message: `${from} -> ${to}`, tokens: [] }] });
  }
  if (to === 'RESOLVED') {
    if (!conditions.resolutionNote) throw invalid(RESOLUTION_NOTE_REQUIRED);
    return 'resolve';
  }
  if (from === 'RESOLVED') {
    if (!conditions.reopenReason) throw invalid(REOPEN_REASON_REQUIRED);
    return 'reopen';
  }
  return 'move';
}
