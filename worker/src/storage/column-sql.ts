/**
 * How the worker's storage holds the column types of common/src/inflow/column-types.ts in DuckDB,
 * and the SQL that carries a stored value to a wider type.
 */
import type { ColumnTypeName } from '@strata/common';

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

/** ISO 8601 UTC text with microseconds, the text form of a DateTime converted to String. */
const DATETIME_TEXT_FORMAT = '%Y-%m-%dT%H:%M:%S.%fZ';

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
