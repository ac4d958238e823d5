/**
 * KQL scalar types as the engine models them, and how each is represented in DuckDB and in results.
 * The types themselves are common's `QueryValueType` (common/src/query/value-types.ts), which the
 * fragment wire format and the workers share; the engine calls them `KqlType`.
 */
import { QUERY_VALUE_DUCKDB_TYPE, type QueryValueType } from '@strata/common';

export type KqlType = QueryValueType;

export const RESULT_TYPE_NAME: Record<KqlType, string> = {
  string: 'String',
  long: 'Int64',
  real: 'Float64',
  decimal: 'Decimal',
  bool: 'Boolean',
  datetime: 'DateTime',
  timespan: 'TimeSpan',
  guid: 'Guid',
  dynamic: 'Dynamic',
};

/** DuckDB column type holding each KQL type inside the engine's statements (the workers' too). */
export const DUCKDB_TYPE: Readonly<Record<KqlType, string>> = QUERY_VALUE_DUCKDB_TYPE;

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
  decimal: 'decimal',
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
  decimal: 'decimal',
  bool: 'bool',
  datetime: 'datetime',
  timespan: 'timespan',
  guid: 'guid',
  dynamic: 'dynamic',
};

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
  /** What each worker stores of each visible schema; loaded only when a query names `schema.usage`. */
  usage?: CatalogUsage[];
}

/** One worker's share of one schema (`schema.usage`). Timestamps in µs since the epoch, 0 for none. */
export interface CatalogUsage {
  schema: string;
  worker: string;
  rows: number;
  hotRows: number;
  segments: number;
  bytes: number;
  oldestUs: number;
  newestUs: number;
}
