/**
 * The storage type model shared by the gateway (which infers a type per field and batch) and the
 * worker (which keeps one type per column and schema).
 *
 * Types: Int64, Float64, Boolean, DateTime, String, Dynamic (objects and arrays, stored as JSON)
 * for data fields, and Guid for `__INFLOW_ID`.
 *
 * Widening rules (docs/architecture.md "Ingest types"): when a write brings a type that differs
 * from a column's current type, the column takes the narrowest type that holds both values
 * without loss: Int64 + Float64 → Float64; any other pair → String. A column never narrows, and
 * no value is dropped: the worker converts stored values (worker/src/storage/column-sql.ts: numbers
 * and booleans to their text, DateTime to ISO 8601 UTC text, Dynamic to its JSON text).
 */
export type DataType = 'Int64' | 'Float64' | 'Boolean' | 'DateTime' | 'String' | 'Dynamic';
export type ColumnTypeName = DataType | 'Guid';

export const DATA_TYPES: readonly DataType[] = ['Int64', 'Float64', 'Boolean', 'DateTime', 'String', 'Dynamic'];

export interface ColumnSchema {
  name: string;
  type: ColumnTypeName;
}

/** The narrowest type that holds values of both `a` and `b` without loss. */
export function widen(a: DataType, b: DataType): DataType {
  if (a === b) return a;
  if ((a === 'Int64' && b === 'Float64') || (a === 'Float64' && b === 'Int64')) return 'Float64';
  return 'String';
}
