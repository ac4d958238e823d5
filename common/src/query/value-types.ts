/**
 * The value types of the query language, the one definition for the gateway's engine (which calls
 * them `KqlType`), the fragment wire format and the worker's schema listing.
 * `int` is folded into `long`. A decimal (Kusto's SqlDecimal) is a fixed-width VARCHAR cell whose
 * byte order is the values' order, with the value's precision and scale (decimal/decimal-cell.ts).
 * A timespan is carried as BIGINT ticks (100 ns) so arithmetic and comparisons stay exact; a
 * datetime is a TIMESTAMP (microseconds: the 7th fractional digit is always 0); dynamic is JSON.
 */
export type QueryValueType = 'string' | 'long' | 'real' | 'decimal' | 'bool' | 'datetime' | 'timespan' | 'guid' | 'dynamic';

/** DuckDB type holding each query value type. */
export const QUERY_VALUE_DUCKDB_TYPE: Readonly<Record<QueryValueType, string>> = {
  string: 'VARCHAR',
  long: 'BIGINT',
  real: 'DOUBLE',
  decimal: 'VARCHAR',
  bool: 'BOOLEAN',
  datetime: 'TIMESTAMP',
  timespan: 'BIGINT',
  guid: 'UUID',
  dynamic: 'JSON',
};
