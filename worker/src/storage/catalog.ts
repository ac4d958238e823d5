import type { DuckDBConnection } from '@duckdb/node-api';
import { type ColumnSchema, type ColumnTypeName, quoteLiteral } from '@strata/common';
import { BLOCK_TIMES_DDL } from './block-times.js';
import { IDEMPOTENCY_DDL } from './idempotency-keys.js';
import { isSegmentFormat, type SegmentFormat } from './segment-format.js';
import { deleteTermIndex, TERM_BLOCKS_DDL, TERM_INDEX_DDL } from './term-index.js';

/**
 * The per-worker catalog lives in the same DuckDB file as the hot buffer, so that a seal (hot rows
 * deleted, segment listed) and a compaction swap (old segments unlisted, new one listed) are each
 * one transaction with the data they describe. Every statement on the `strata_*` tables is in this
 * file, except the idempotency keys' (idempotency-keys.ts).
 *
 * - strata_tables: one row per account and schema, naming its hot table.
 * - strata_columns: the current columns of each table, in table order, with their types.
 * - strata_segments: sealed segment files with account, schema, time range, rows and bytes, the
 *   columns (names and types) the file was written with, and its format (segment-format.ts;
 *   added by decision 0025: rows listed before it are 'parquet').
 * - strata_idempotency: idempotency keys of stored requests, written in the request's own
 *   transaction, pruned by age and count (idempotency-keys.ts).
 * - strata_handoffs: segments in the middle of a handoff between workers (a drain): 'incoming'
 *   ones were copied here and are read only by queries that name this worker as their owner;
 *   'outgoing' ones were handed away and are not read by queries that name another owner
 *   (scan.ts, docs/decisions/0016-drain-and-replication.md). 'replica' ones are copies of
 *   another worker's segment (replication factor > 1), read only when a query names this worker.
 * - strata_replicas: where copies of this worker's own segments are (segment, worker id).
 * - strata_term_index: per segment and String column, a filter of the terms it holds
 *   (term-index.ts, docs/decisions/0026-has-term-index.md); strata_term_blocks: the same per
 *   block of 16,384 rows of a DuckDB segment file (decision 0037); strata_block_times: each such
 *   block's lowest and highest time (block-times.ts, decision 0046).
 */
export const CATALOG_DDL = [
  `CREATE TABLE IF NOT EXISTS strata_tables (
     table_id INTEGER PRIMARY KEY,
     account_id VARCHAR NOT NULL,
     schema_name VARCHAR NOT NULL,
     created_at TIMESTAMP NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS strata_columns (
     table_id INTEGER NOT NULL,
     position INTEGER NOT NULL,
     name VARCHAR NOT NULL,
     type VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS strata_segments (
     segment_id VARCHAR PRIMARY KEY,
     table_id INTEGER NOT NULL,
     file_name VARCHAR NOT NULL,
     min_ts TIMESTAMP,
     max_ts TIMESTAMP,
     row_count BIGINT NOT NULL,
     byte_size BIGINT NOT NULL,
     columns VARCHAR NOT NULL,
     created_at TIMESTAMP NOT NULL)`,
  IDEMPOTENCY_DDL,
  `CREATE TABLE IF NOT EXISTS strata_handoffs (
     segment_id VARCHAR PRIMARY KEY,
     direction VARCHAR NOT NULL,
     peer_worker_id VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS strata_replicas (
     segment_id VARCHAR NOT NULL,
     worker_id VARCHAR NOT NULL,
     PRIMARY KEY (segment_id, worker_id))`,
  TERM_INDEX_DDL,
  TERM_BLOCKS_DDL,
  BLOCK_TIMES_DDL,
  // Decision 0025. Catalogs written before it get the column, their segments the format they
  // were all written in.
  `ALTER TABLE strata_segments ADD COLUMN IF NOT EXISTS format VARCHAR DEFAULT 'parquet'`,
];

/**
 * Which side of a handoff a segment is on here, or 'replica': a copy of the segment of the worker
 * named by the mark's peer.
 */
export type HandoffDirection = 'incoming' | 'outgoing' | 'replica';

export interface TableInfo {
  tableId: number;
  accountId: string;
  schema: string;
  /** Name of the DuckDB hot table (generated, never user text). */
  hotTable: string;
  /** Current columns in table order: the stamped columns first, then data fields. */
  columns: ColumnSchema[];
}

export interface SegmentInfo {
  segmentId: string;
  tableId: number;
  accountId: string;
  schema: string;
  /** Path relative to the segments directory. */
  fileName: string;
  /** Entry time range in microseconds since the epoch (null only for an empty file). */
  minTsUs: number | null;
  maxTsUs: number | null;
  rowCount: number;
  byteSize: number;
  /** Columns the file was written with; scans convert them to the table's current types. */
  columns: ColumnSchema[];
  createdAtMs: number;
  /** How the file stores its rows. */
  format: SegmentFormat;
  /**
   * The columns whose term fold the file stores (decision 0045, term-folds.ts): read from the
   * file by a scan (storedFolds), not kept in the catalog; absent elsewhere.
   */
  folds?: readonly string[];
  /** Set while the segment is being handed to or from another worker, or is a replica (strata_handoffs). */
  handoff?: HandoffDirection;
  /** The other side of the handoff: the giving or receiving worker, or a replica's primary. */
  peerWorkerId?: string;
}

export function hotTableName(tableId: number): string {
  return `hot_${tableId}`;
}

export function tableKey(accountId: string, schema: string): string {
  return `${accountId}\u0000${schema}`;
}

/** The committed table definitions, kept in memory; changed only after a commit. */
export class TableDirectory {
  private readonly byKey = new Map<string, TableInfo>();
  private readonly byId = new Map<number, TableInfo>();
  private maxId = 0;

  static async load(conn: DuckDBConnection): Promise<TableDirectory> {
    const dir = new TableDirectory();
    const tables = (
      await conn.runAndReadAll('SELECT table_id, account_id, schema_name FROM strata_tables ORDER BY table_id')
    ).getRowObjectsJS() as { table_id: number; account_id: string; schema_name: string }[];
    const columns = (
      await conn.runAndReadAll('SELECT table_id, name, type FROM strata_columns ORDER BY table_id, position')
    ).getRowObjectsJS() as { table_id: number; name: string; type: string }[];
    const colsById = new Map<number, ColumnSchema[]>();
    for (const c of columns) {
      const list = colsById.get(c.table_id) ?? [];
      colsById.set(c.table_id, list);
      list.push({ name: c.name, type: c.type as ColumnTypeName });
    }
    for (const t of tables) {
      dir.put({
        tableId: t.table_id,
        accountId: t.account_id,
        schema: t.schema_name,
        hotTable: hotTableName(t.table_id),
        columns: colsById.get(t.table_id) ?? [],
      });
    }
    return dir;
  }

  get(accountId: string, schema: string): TableInfo | undefined {
    return this.byKey.get(tableKey(accountId, schema));
  }

  getById(tableId: number): TableInfo | undefined {
    return this.byId.get(tableId);
  }

  all(): TableInfo[] {
    return [...this.byId.values()];
  }

  ofAccount(accountId: string): TableInfo[] {
    return this.all().filter((t) => t.accountId === accountId);
  }

  /** Reserves an id for a table about to be created (ids are never reused, even after a rollback). */
  reserveId(): number {
    return ++this.maxId;
  }

  /** Forgets a table whose catalog rows were deleted (a dropped schema); its id is not reused. */
  remove(tableId: number): void {
    const table = this.byId.get(tableId);
    if (!table) return;
    this.byId.delete(tableId);
    this.byKey.delete(tableKey(table.accountId, table.schema));
  }

  put(table: TableInfo): void {
    this.byKey.set(tableKey(table.accountId, table.schema), table);
    this.byId.set(table.tableId, table);
    this.maxId = Math.max(this.maxId, table.tableId);
  }
}

interface SegmentRow {
  segment_id: string;
  table_id: number;
  account_id: string;
  schema_name: string;
  file_name: string;
  min_us: bigint | null;
  max_us: bigint | null;
  row_count: bigint;
  byte_size: bigint;
  columns: string;
  created_ms: bigint;
  format: string | null;
  handoff: string | null;
  peer: string | null;
}

const SEGMENT_SELECT = `
  SELECT s.segment_id, s.table_id, t.account_id, t.schema_name, s.file_name,
         epoch_us(s.min_ts) AS min_us, epoch_us(s.max_ts) AS max_us, s.row_count, s.byte_size,
         s.columns, epoch_ms(s.created_at) AS created_ms, s.format, h.direction AS handoff, h.peer_worker_id AS peer
  FROM strata_segments s JOIN strata_tables t USING (table_id) LEFT JOIN strata_handoffs h USING (segment_id)`;

function segmentOf(r: SegmentRow): SegmentInfo {
  return {
    segmentId: r.segment_id,
    tableId: r.table_id,
    accountId: r.account_id,
    schema: r.schema_name,
    fileName: r.file_name,
    minTsUs: r.min_us === null ? null : Number(r.min_us),
    maxTsUs: r.max_us === null ? null : Number(r.max_us),
    rowCount: Number(r.row_count),
    byteSize: Number(r.byte_size),
    columns: JSON.parse(r.columns) as ColumnSchema[],
    createdAtMs: Number(r.created_ms),
    format: r.format !== null && isSegmentFormat(r.format) ? r.format : 'parquet',
    ...(r.handoff === null ? {} : { handoff: r.handoff as HandoffDirection, peerWorkerId: r.peer ?? '' }),
  };
}

/** Segments, optionally of one account. Runs in the caller's transaction when it has one. */
export async function selectSegments(conn: DuckDBConnection, accountId?: string): Promise<SegmentInfo[]> {
  const reader = accountId
    ? await conn.runAndReadAll(`${SEGMENT_SELECT} WHERE t.account_id = $1 ORDER BY s.min_ts, s.segment_id`, [accountId])
    : await conn.runAndReadAll(`${SEGMENT_SELECT} ORDER BY s.min_ts, s.segment_id`);
  return (reader.getRowObjectsJS() as unknown as SegmentRow[]).map(segmentOf);
}

/**
 * Every segment of one table, by min_ts. Runs in the caller's transaction, which gives scans a
 * snapshot consistent with the hot rows.
 */
export async function selectTableSegments(conn: DuckDBConnection, tableId: number): Promise<SegmentInfo[]> {
  const reader = await conn.runAndReadAll(`${SEGMENT_SELECT} WHERE s.table_id = $1 ORDER BY s.min_ts`, [tableId]);
  return (reader.getRowObjectsJS() as unknown as SegmentRow[]).map(segmentOf);
}

/** The segments whose time range overlaps [fromUs, toUs) (either bound optional; no range: all). */
export function segmentsOverlapping(segments: readonly SegmentInfo[], range: { fromUs?: number; toUs?: number }): SegmentInfo[] {
  return segments.filter(
    (s) =>
      (range.toUs === undefined || s.minTsUs === null || s.minTsUs < range.toUs) &&
      (range.fromUs === undefined || s.maxTsUs === null || s.maxTsUs >= range.fromUs),
  );
}

/** A table's columns in position order, as the caller's transaction sees them. */
export async function selectTableColumns(conn: DuckDBConnection, tableId: number): Promise<ColumnSchema[]> {
  const rows = (
    await conn.runAndReadAll('SELECT name, type FROM strata_columns WHERE table_id = $1 ORDER BY position', [tableId])
  ).getRowObjectsJS() as { name: string; type: string }[];
  return rows.map((c) => ({ name: c.name, type: c.type as ColumnTypeName }));
}

export async function insertSegment(conn: DuckDBConnection, s: SegmentInfo): Promise<void> {
  await conn.run(
    `INSERT INTO strata_segments (segment_id, table_id, file_name, min_ts, max_ts, row_count, byte_size, columns, created_at, format)
     VALUES ($1, $2, $3, make_timestamp($4::BIGINT), make_timestamp($5::BIGINT), $6, $7, $8, make_timestamp($9::BIGINT), $10)`,
    [
      s.segmentId,
      s.tableId,
      s.fileName,
      s.minTsUs === null ? null : BigInt(s.minTsUs),
      s.maxTsUs === null ? null : BigInt(s.maxTsUs),
      BigInt(s.rowCount),
      BigInt(s.byteSize),
      JSON.stringify(s.columns),
      BigInt(s.createdAtMs) * 1000n,
      s.format,
    ],
  );
}

/**
 * Begins a read transaction and fixes its snapshot at once: DuckDB starts a database's
 * transaction when a statement first touches it, so both go in one round trip.
 */
export async function beginCatalogSnapshot(conn: DuckDBConnection): Promise<void> {
  await conn.run('BEGIN TRANSACTION; SELECT 1 FROM strata_tables LIMIT 0');
}

/** The id of an account's table for a schema, as the caller's transaction sees it. */
export async function selectTableId(conn: DuckDBConnection, accountId: string, schema: string): Promise<number | undefined> {
  const row = (
    await conn.runAndReadAll('SELECT table_id FROM strata_tables WHERE account_id = $1 AND schema_name = $2', [accountId, schema])
  ).getRowObjectsJS()[0] as { table_id: number } | undefined;
  return row?.table_id;
}

/** Lists a new table with its columns (its hot table is created by the caller, in the same transaction). */
export async function insertTable(conn: DuckDBConnection, table: TableInfo, columns: readonly ColumnSchema[]): Promise<void> {
  await conn.run('INSERT INTO strata_tables VALUES ($1, $2, $3, make_timestamp($4::BIGINT))', [
    table.tableId,
    table.accountId,
    table.schema,
    BigInt(Date.now()) * 1000n,
  ]);
  await insertColumns(conn, table.tableId, columns, 0);
}

/** Appends columns to a table's list, the first at `firstPosition`. */
export async function insertColumns(
  conn: DuckDBConnection,
  tableId: number,
  columns: readonly ColumnSchema[],
  firstPosition: number,
): Promise<void> {
  for (const [i, c] of columns.entries()) {
    await conn.run('INSERT INTO strata_columns VALUES ($1, $2, $3, $4)', [tableId, firstPosition + i, c.name, c.type]);
  }
}

export async function updateColumnType(
  conn: DuckDBConnection,
  tableId: number,
  name: string,
  type: ColumnTypeName,
): Promise<void> {
  await conn.run('UPDATE strata_columns SET type = $1 WHERE table_id = $2 AND name = $3', [type, tableId, name]);
}

/** How many of the segment ids are listed (ids are UUIDs, checked by the caller). */
export async function countListedSegments(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<number> {
  const row = (
    await conn.runAndReadAll(
      `SELECT count(*) AS n FROM strata_segments WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`,
    )
  ).getRowObjectsJS()[0] as { n: bigint };
  return Number(row.n);
}

/** Unlists a table: its segments, columns and the table row (the caller drops its hot table in the same transaction). */
export async function deleteTable(conn: DuckDBConnection, tableId: number): Promise<void> {
  await conn.run('DELETE FROM strata_handoffs WHERE segment_id IN (SELECT segment_id FROM strata_segments WHERE table_id = $1)', [
    tableId,
  ]);
  for (const index of ['strata_term_index', 'strata_term_blocks', 'strata_block_times'])
    await conn.run(`DELETE FROM ${index} WHERE segment_id IN (SELECT segment_id FROM strata_segments WHERE table_id = $1)`, [
      tableId,
    ]);
  await conn.run('DELETE FROM strata_segments WHERE table_id = $1', [tableId]);
  await conn.run('DELETE FROM strata_columns WHERE table_id = $1', [tableId]);
  await conn.run('DELETE FROM strata_tables WHERE table_id = $1', [tableId]);
}

export async function deleteSegments(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<void> {
  await deleteHandoffs(conn, segmentIds);
  await deleteTermIndex(conn, segmentIds);
  await conn.run(`DELETE FROM strata_segments WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`);
}

/** Marks a listed segment as being handed in or out (see strata_handoffs). */
export async function insertHandoff(
  conn: DuckDBConnection,
  segmentId: string,
  direction: HandoffDirection,
  peerWorkerId: string,
): Promise<void> {
  await conn.run('INSERT OR REPLACE INTO strata_handoffs VALUES ($1, $2, $3)', [segmentId, direction, peerWorkerId]);
}

/** Ends the handoff marks of segments (they are ordinary segments again, or unlisted). */
export async function deleteHandoffs(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<void> {
  if (segmentIds.length === 0) return;
  await conn.run(`DELETE FROM strata_handoffs WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`);
}

/** How many of the segment ids are in a handoff (ids are UUIDs, checked by the caller). */
export async function countHandoffs(conn: DuckDBConnection, segmentIds: readonly string[]): Promise<number> {
  const row = (
    await conn.runAndReadAll(
      `SELECT count(*) AS n FROM strata_handoffs WHERE segment_id IN (${segmentIds.map(quoteLiteral).join(', ')})`,
    )
  ).getRowObjectsJS()[0] as { n: bigint };
  return Number(row.n);
}

/** Where copies of this worker's segments are: segment id → worker ids. */
export async function selectReplicas(conn: DuckDBConnection): Promise<Map<string, string[]>> {
  const rows = (
    await conn.runAndReadAll('SELECT segment_id, worker_id FROM strata_replicas ORDER BY segment_id, worker_id')
  ).getRowObjectsJS() as { segment_id: string; worker_id: string }[];
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.segment_id) ?? [];
    list.push(r.worker_id);
    out.set(r.segment_id, list);
  }
  return out;
}

export async function insertReplica(conn: DuckDBConnection, segmentId: string, workerId: string): Promise<void> {
  await conn.run('INSERT OR IGNORE INTO strata_replicas VALUES ($1, $2)', [segmentId, workerId]);
}

export async function deleteReplica(conn: DuckDBConnection, segmentId: string, workerId: string): Promise<void> {
  await conn.run('DELETE FROM strata_replicas WHERE segment_id = $1 AND worker_id = $2', [segmentId, workerId]);
}
