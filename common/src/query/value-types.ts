/**
 * The value types of the query language, the one definition for the gateway's engine (which calls
 * them `KqlType`), the fragment wire format and the worker's schema listing.
 * `int` and `decimal` are folded into `long` and `real`: results only know Int64 and Float64.
 * A timespan is carried as BIGINT ticks (100 ns) so arithmetic and comparisons stay exact; a
 * datetime is a TIMESTAMP (microseconds: the 7th fractional digit is always 0); dynamic is JSON.
 */
export type QueryValueType = 'string' | 'long' | 'real' | 'bool' | 'datetime' | 'timespan' | 'guid' | 'dynamic';

/** DuckDB type holding each query value type. */
export const QUERY_VALUE_DUCKDB_TYPE: Readonly<Record<QueryValueType, string>> = {
  string: 'VARCHAR',
  long: 'BIGINT',
  real: 'DOUBLE',
  bool: 'BOOLEAN',
  datetime: 'TIMESTAMP',
  timespan: 'BIGINT',
  guid: 'UUID',
  dynamic: 'JSON',
};
