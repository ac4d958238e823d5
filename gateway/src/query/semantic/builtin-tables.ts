/**
 * The product's built-in tables, answered from the caller's schema catalog (so they list only what
 * the caller may query): `schema.tables` (TableName, DatabaseName), and the column listings
 * `schema.tables.schema` (read by the Grafana plugin) and `$metadata.schema.tables.fields` (read
 * by logsh), both with TableName, ColumnName, ColumnType; and the account's people (compatibility
 * reference §1.5): `schema.users` (UserId, UserName, FirstName, LastName, Email) and
 * `schema.users.permissions` (UserId, UserName, AccountId, Permission), listing the members of
 * the queried account and the permissions they hold on it — what anyone allowed to query the
 * account may see; a scoped token sees none. And what the account stores (docs/api.md, Data
 * lifecycle): `schema.usage` (TableName, Worker, Rows, HotRows, Segments, Bytes, Oldest, Newest),
 * one row per worker and schema the caller may see.
 */
import { type KqlType, RESULT_TYPE_NAME, type SchemaCatalog } from '../types.js';

export interface BuiltinTable {
  columns: { name: string; type: KqlType }[];
  rows: string[][];
}

function columnListing(catalog: SchemaCatalog): BuiltinTable {
  return {
    columns: [
      { name: 'TableName', type: 'string' },
      { name: 'ColumnName', type: 'string' },
      { name: 'ColumnType', type: 'string' },
    ],
    rows: catalog.tables.flatMap((t) => t.columns.map((c) => [t.name, c.name, RESULT_TYPE_NAME[c.type]])),
  };
}

export const BUILTIN_TABLES: Record<string, (catalog: SchemaCatalog) => BuiltinTable> = {
  'schema.tables': (catalog) => ({
    columns: [
      { name: 'TableName', type: 'string' },
      { name: 'DatabaseName', type: 'string' },
    ],
    rows: catalog.tables.map((t) => [t.name, '']),
  }),
  'schema.tables.schema': columnListing,
  '$metadata.schema.tables.fields': columnListing,
  'schema.users': (catalog) => ({
    columns: ['UserId', 'UserName', 'FirstName', 'LastName', 'Email'].map((name) => ({ name, type: 'string' as KqlType })),
    rows: (catalog.people?.members ?? []).map((u) => [u.userId, u.userName, u.firstName, u.lastName, u.email]),
  }),
  'schema.usage': (catalog) => ({
    columns: [
      { name: 'TableName', type: 'string' },
      { name: 'Worker', type: 'string' },
      { name: 'Rows', type: 'long' },
      { name: 'HotRows', type: 'long' },
      { name: 'Segments', type: 'long' },
      { name: 'Bytes', type: 'long' },
      { name: 'Oldest', type: 'datetime' },
      { name: 'Newest', type: 'datetime' },
    ],
    // Values are cast from text to the column types; a worker's share always has rows, so times exist.
    rows: (catalog.usage ?? [])
      .filter((u) => u.rows > 0)
      .map((u) => [
        u.schema,
        u.worker,
        String(u.rows),
        String(u.hotRows),
        String(u.segments),
        String(u.bytes),
        new Date(Math.floor(u.oldestUs / 1000)).toISOString(),
        new Date(Math.floor(u.newestUs / 1000)).toISOString(),
      ]),
  }),
  'schema.users.permissions': (catalog) => ({
    columns: ['UserId', 'UserName', 'AccountId', 'Permission'].map((name) => ({ name, type: 'string' as KqlType })),
    rows: (catalog.people?.members ?? []).flatMap((u) =>
      u.permissions.map((p) => [u.userId, u.userName, catalog.people!.accountId, p]),
    ),
  }),
};
