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
 * no value is dropped: stored values are converted with `convertSql` (numbers and booleans to
 * their text, DateTime to ISO 8601 UTC text, Dynamic to its JSON text).
 */
export type DataType = 'Int64' | 'Float64' | 'Boolean' | 'DateTime' | 'String' | 'Dynamic';
export type ColumnTypeName = DataType | 'Guid';

export const DATA_TYPES: readonly DataType[] = ['Int64', 'Float64', 'Boolean', 'DateTime', 'String', 'Dynamic'];

/** DuckDB type of each column type (hot tables and Parquet segments). */
export const DUCKDB_TYPE: Record<ColumnTypeName, string> = {
  Int64: 'BIGINT',
  Float64: 'DOUBLE',
  Boolean: 'BOOLEAN',
  DateTime: 'TIMESTAMP',
  String: 'VARCHAR',
  Dynamic: 'JSON',
  Guid: 'UUID',
};

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

/** ISO 8601 UTC text with microseconds, the text form of a DateTime converted to String. */
export const DATETIME_TEXT_FORMAT = '%Y-%m-%dT%H:%M:%S.%fZ';

/**
 * SQL expression converting `expr` (a value of type `from`) to type `to`, where `to` is `from`
 * or a widening of it. Used when a column widens (ALTER … USING), when a batch's narrower values
 * are inserted into a wider column, and when a segment written before a widening is scanned.
 */
export function convertSql(expr: string, from: ColumnTypeName, to: ColumnTypeName): string {
  if (from === to) return expr;
  if (to === 'Float64' && from === 'Int64') return `CAST(${expr} AS DOUBLE)`;
  if (to === 'String') {
    if (from === 'DateTime') return `strftime(${expr}, '${DATETIME_TEXT_FORMAT}')`;
    // Whole doubles read as integers ('7', not '7.0'), as the gateway writes numbers as text.
    if (from === 'Float64')
      return `CASE WHEN isfinite(${expr}) AND ${expr} = trunc(${expr}) AND abs(${expr}) < 1e15 THEN CAST(CAST(${expr} AS BIGINT) AS VARCHAR) ELSE CAST(${expr} AS VARCHAR) END`;
    // DuckDB's own casts give 'true'/'false', integers' digits and JSON text.
    return `CAST(${expr} AS VARCHAR)`;
  }
  throw new Error(`no conversion from ${from} to ${to}`);
}
