import { v5 as uuidV5 } from 'uuid';

/**
 * Namespace of alert record ids (name-based, version 5). Fixed forever: changing it would give
 * every firing combination a new record, a new incident and a new mail.
 */
const ALERT_RECORD_NAMESPACE = '9d0b7f2e-61a4-4c55-8f3e-2b7c1d4a9e10';

/**
 * The stable id of one (rule, dimension values) combination: the same rule and values always give
 * the same id, whichever gateway evaluated and whichever leader applied it. The values are keyed
 * by the rule's dimension order and JSON-encoded, so `{"host":"a"}` and `{"host":"a "}` differ
 * and key order in the evaluator's JSON does not matter.
 */
export function alertRecordId(
  accountId: string,
  alertId: string,
  dimensions: readonly string[],
  values: Record<string, unknown>,
): string {
  const key = JSON.stringify(dimensions.map((d) => [d, values[d] ?? null]));
  return uuidV5(`${accountId.toLowerCase()}/${alertId.toLowerCase()}/${key}`, ALERT_RECORD_NAMESPACE);
}
