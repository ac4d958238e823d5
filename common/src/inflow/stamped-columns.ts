import type { ColumnSchema } from './column-types.js';

/**
 * Columns every entry carries besides its data, in table order. `timestamp` is the entry's own
 * time; the `__INFLOW_*` columns are stamped by the gateway that received it.
 */
export const STAMPED_COLUMNS: readonly ColumnSchema[] = [
  { name: 'timestamp', type: 'DateTime' },
  { name: '__INFLOW_ID', type: 'Guid' },
  { name: '__INFLOW_TIMESTAMP', type: 'DateTime' },
  { name: '__INFLOW_HOST', type: 'String' },
  { name: '__INFLOW_SOURCE_ADDRESS', type: 'String' },
  { name: '__INFLOW_AGENT', type: 'String' },
];

const RESERVED = new Set(STAMPED_COLUMNS.map((c) => c.name.toLowerCase()));

/** True for a data field name that would collide with a stamped column (case-insensitively). */
export function isReservedFieldName(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED.has(lower) || lower.startsWith('__inflow_');
}
