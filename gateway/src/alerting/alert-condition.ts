import type { AlertCondition, FiringRecord } from '@strata/proto/alerting/v1/alert_rules';

type Row = Record<string, unknown>;

const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '==': (a, b) => a === b,
  '!=': (a, b) => a !== b,
};
export const CONDITION_OPERATORS = Object.keys(COMPARE) as ['>', '>=', '<', '<=', '==', '!='];

/** Whether one result row meets the rule's condition ("rows": every row does). */
export function rowMatches(row: Row, condition: AlertCondition): boolean {
  if (condition.kind !== 'threshold') return true;
  const raw = row[condition.column];
  // Int64 values may arrive as decimal strings (beyond 2^53); null never meets a threshold.
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN;
  const compare = COMPARE[condition.operator];
  return Number.isFinite(value) && (compare?.(value, condition.threshold) ?? false);
}

/**
 * The alert records a result fires: the matching rows grouped by the dimension columns' values
 * (no dimensions: at most one record), each with the first matching row, whose values the title
 * and description may quote.
 */
export function firingRecords(rows: readonly Row[], condition: AlertCondition, dimensions: readonly string[]): FiringRecord[] {
  const byKey = new Map<string, FiringRecord>();
  for (const row of rows) {
    if (!rowMatches(row, condition)) continue;
    const values = Object.fromEntries(dimensions.map((d) => [d, row[d] ?? null]));
    const key = JSON.stringify(dimensions.map((d) => values[d]));
    if (!byKey.has(key)) byKey.set(key, { dimensionsJson: JSON.stringify(values), rowJson: JSON.stringify(row) });
  }
  return [...byKey.values()];
}
