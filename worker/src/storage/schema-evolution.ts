import type { DuckDBConnection } from '@duckdb/node-api';
import {
  type ColumnSchema,
  type ColumnTypeName,
  DATA_TYPES,
  type DataType,
  INFLOW_LIMITS,
  isReservedFieldName,
  isValidName,
  quoteIdentifier,
  STAMPED_COLUMNS,
  StrataError,
  widen,
} from '@strata/common';
import { insertColumns, insertTable, type TableInfo, updateColumnType } from './catalog.js';
import { convertSql, DUCKDB_TYPE } from './column-sql.js';

/** A change to a table's columns that a write needs before its rows fit. */
export type ColumnChange =
  | { kind: 'add'; column: ColumnSchema }
  | { kind: 'widen'; name: string; from: ColumnTypeName; to: DataType };

/** How one batch column lands in its table column. */
export interface ColumnMapping {
  batchName: string;
  batchType: DataType;
  tableName: string;
  tableType: ColumnTypeName;
}

export interface EvolutionPlan {
  /** The table's columns after the write. */
  columns: ColumnSchema[];
  changes: ColumnChange[];
  mappings: ColumnMapping[];
}

/**
 * Decides what a batch with `batchColumns` does to a table whose columns are `current` (undefined:
 * the table does not exist yet and is created with the stamped columns first). Field names match
 * table columns case-insensitively (DuckDB identifiers are case-insensitive); the first spelling
 * seen stays the column's name. Throws an 'invalid' StrataError naming the schema when a name is
 * not allowed or the schema would exceed the column limit.
 */
export function planEvolution(
  schema: string,
  current: readonly ColumnSchema[] | undefined,
  batchColumns: readonly { name: string; type: DataType }[],
): EvolutionPlan {
  const columns = (current ?? STAMPED_COLUMNS).map((c) => ({ ...c }));
  const byLower = new Map(columns.map((c, i) => [c.name.toLowerCase(), i]));
  const changes: ColumnChange[] = [];
  const mappings: ColumnMapping[] = [];
  const seen = new Set<string>();
  for (const bc of batchColumns) {
    if (!isValidName(bc.name)) throw new StrataError('invalid', `Schema ${schema}: invalid field name '${bc.name}'.`);
    if (isReservedFieldName(bc.name))
      throw new StrataError('invalid', `Schema ${schema}: field name '${bc.name}' is reserved for a stamped column.`);
    if (!DATA_TYPES.includes(bc.type))
      throw new StrataError('invalid', `Schema ${schema}: field '${bc.name}' has no valid type.`);
    const lower = bc.name.toLowerCase();
    if (seen.has(lower))
      throw new StrataError('invalid', `Schema ${schema}: field '${bc.name}' occurs twice (names are case-insensitive).`);
    seen.add(lower);
    const index = byLower.get(lower);
    if (index === undefined) {
      const column: ColumnSchema = { name: bc.name, type: bc.type };
      byLower.set(lower, columns.length);
      columns.push(column);
      changes.push({ kind: 'add', column: { ...column } });
      mappings.push({ batchName: bc.name, batchType: bc.type, tableName: bc.name, tableType: bc.type });
      continue;
    }
    const existing = columns[index]!;
    const to = widen(existing.type as DataType, bc.type);
    if (to !== existing.type) {
      changes.push({ kind: 'widen', name: existing.name, from: existing.type, to });
      existing.type = to;
    }
    mappings.push({ batchName: bc.name, batchType: bc.type, tableName: existing.name, tableType: existing.type });
  }
  if (columns.length > INFLOW_LIMITS.maxColumnsPerSchema)
    throw new StrataError(
      'invalid',
      `Schema ${schema} would have ${columns.length} columns; the limit is ${INFLOW_LIMITS.maxColumnsPerSchema}.`,
    );
  return { columns, changes, mappings };
}

/**
 * Applies a plan inside the caller's transaction: creates the hot table and lists it (`create`),
 * or adds and widens columns, the first added one at `firstAddPosition`. Used by group commits and
 * by a segment adopted from another worker (handoff.ts), which both must leave the table able to
 * hold what they bring.
 */
export async function applyColumnChanges(
  conn: DuckDBConnection,
  table: TableInfo,
  plan: EvolutionPlan,
  create: boolean,
  firstAddPosition: number,
): Promise<void> {
  const hot = quoteIdentifier(table.hotTable);
  if (create) {
    const defs = plan.columns.map((c) => `${quoteIdentifier(c.name)} ${DUCKDB_TYPE[c.type]}`).join(', ');
    await conn.run(`CREATE TABLE ${hot} (${defs})`);
    await insertTable(conn, table, plan.columns);
    return;
  }
  let position = firstAddPosition;
  for (const change of plan.changes) {
    if (change.kind === 'add') {
      await conn.run(`ALTER TABLE ${hot} ADD COLUMN ${quoteIdentifier(change.column.name)} ${DUCKDB_TYPE[change.column.type]}`);
      await insertColumns(conn, table.tableId, [change.column], position++);
    } else {
      const col = quoteIdentifier(change.name);
      await conn.run(
        `ALTER TABLE ${hot} ALTER ${col} TYPE ${DUCKDB_TYPE[change.to]} USING ${convertSql(col, change.from, change.to)}`,
      );
      await updateColumnType(conn, table.tableId, change.name, change.to);
    }
  }
}
