import { v5 as uuidV5 } from 'uuid';

/**
 * Namespace of the name-based (version 5) incident ids of alert-driven incidents. Fixed forever:
 * changing it would give an alert that fires again a second incident.
 */
const ALERT_INCIDENT_NAMESPACE = '3c8e3c52-4f0e-4f43-9a55-7a3b8f1d2e61';

/**
 * The incident id of an alert-driven incident when the caller supplies none: the same account and
 * alert always give the same id, so repeated or concurrent calls find the same incident.
 */
export function alertIncidentId(accountId: string, alertRecordId: string): string {
  return uuidV5(`${accountId.toLowerCase()}/${alertRecordId.toLowerCase()}`, ALERT_INCIDENT_NAMESPACE);
}
