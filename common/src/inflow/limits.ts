/**
 * Inflow limits (documented in docs/api.md "Ingest limits"). The gateway checks them first with
 * precise per-entry messages; the worker checks the ones it can see again, because any gRPC
 * client may call it.
 */
export const INFLOW_LIMITS = {
  /** Longest schema name and field name, in characters. */
  maxNameLength: 256,
  /** Columns of one schema, stamped columns included. */
  maxColumnsPerSchema: 1_000,
  /** Longest string value (Dynamic values: their JSON text), in UTF-16 code units. */
  maxValueLength: 1_048_576,
  /** Entries in one JSON inflow request. */
  maxEntriesPerBatch: 100_000,
  /** Decoded (after gzip) JSON inflow request body, in bytes. */
  maxBodyBytes: 32 * 1024 * 1024,
} as const;

/** Schema names and field names: letters, digits, '.', '_' and '-'. */
const NAME_PATTERN = /^[A-Za-z0-9._-]+$/;

export function isValidName(name: string): boolean {
  return name.length > 0 && name.length <= INFLOW_LIMITS.maxNameLength && NAME_PATTERN.test(name);
}
