/**
 * KQL scalar types as the engine models them, and how each is represented in DuckDB and in results.
 * `int` and `decimal` are folded into `long` and `real`: results only know Int64 and Float64.
 * A timespan is carried as BIGINT ticks (100 ns) so arithmetic and comparisons stay exact; a
 * datetime is a TIMESTAMP (microseconds: the 7th fractional digit is always 0); dynamic is JSON.
 */
export type KqlType = 'string' | 'long' | 'real' | 'bool' | 'datetime' | 'timespan' | 'guid' | 'dynamic';

export const RESULT_TYPE_NAME: Record<KqlType, string> = {
  string: 'String',
  long: 'Int64',
  real: 'Float64',
  bool: 'Boolean',
  datetime: 'DateTime',
  timespan: 'TimeSpan',
  guid: 'Guid',
  dynamic: 'Dynamic',
};

/** DuckDB column type holding each KQL type inside the engine's statements. */
export const DUCKDB_TYPE: Record<KqlType, string> = {
  string: 'VARCHAR',
  long: 'BIGINT',
  real: 'DOUBLE',
  bool: 'BOOLEAN',
  datetime: 'TIMESTAMP',
  timespan: 'BIGINT',
  guid: 'UUID',
  dynamic: 'JSON',
};

const TYPE_NAMES: Record<string, KqlType> = {
  string: 'string',
  str: 'string',
  long: 'long',
  int: 'long',
  int64: 'long',
  int32: 'long',
  real: 'real',
  double: 'real',
  float: 'real',
  float64: 'real',
  decimal: 'real',
  bool: 'bool',
  boolean: 'bool',
  datetime: 'datetime',
  date: 'datetime',
  timespan: 'timespan',
  time: 'timespan',
  guid: 'guid',
  uuid: 'guid',
  dynamic: 'dynamic',
  json: 'dynamic',
};

/** Type names accepted in `datatable(...)`, `parse` declarations and schemas (product names included). */
export function kqlTypeFromName(name: string): KqlType | undefined {
  return Object.hasOwn(TYPE_NAMES, name.toLowerCase()) ? TYPE_NAMES[name.toLowerCase()] : undefined;
}

/** KQL type names as Kusto writes them (used in diagnostics and schema symbols). */
export const KQL_TYPE_NAME: Record<KqlType, string> = {
  string: 'string',
  long: 'long',
  real: 'real',
  bool: 'bool',
  datetime: 'datetime',
  timespan: 'timespan',
  guid: 'guid',
  dynamic: 'dynamic',
};

export function isNumeric(t: KqlType): boolean {
  return t === 'long' || t === 'real';
}

/** Columns of one table as the caller's schema catalog describes it. */
export interface CatalogColumn {
  name: string;
  type: KqlType;
}

export interface CatalogTable {
  name: string;
  columns: CatalogColumn[];
}

/** A member of the queried account, for the built-in tables `schema.users(.permissions)`. */
export interface CatalogUser {
  userId: string;
  userName: string;
  firstName: string;
  lastName: string;
  email: string;
  /** Account permissions held on the queried account (possibly none). */
  permissions: string[];
}

/** The tables a query may read (already filtered to what the caller may see). */
export interface SchemaCatalog {
  tables: CatalogTable[];
  /** The queried account's members; loaded only when a query names `schema.users` (else none). */
  people?: { accountId: string; members: CatalogUser[] };
}
