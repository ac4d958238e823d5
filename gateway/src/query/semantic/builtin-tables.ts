/**
 * The product's built-in tables, answered from the caller's schema catalog (so they list only what
 * the caller may query): `schema.tables` (TableName, DatabaseName), and the column listings
 * `schema.tables.schema` (read by the Grafana plugin) and `$metadata.schema.tables.fields` (read
 * by logsh), both with TableName, ColumnName, ColumnType.
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
};
