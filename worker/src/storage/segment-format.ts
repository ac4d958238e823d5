import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { foldedColumn, quoteIdentifier, quoteLiteral, quoteLiteralList, StrataError, TERM_FOLD_PREFIX } from '@strata/common';

/**
 * How a sealed segment's rows are stored (docs/decisions/0025-segment-format.md):
 *
 * - 'duckdb': a DuckDB database file holding one table, `rows`, sorted by timestamp. Written by
 *   every seal, compaction and purge rewrite since decision 0025. DuckDB reads its own format
 *   faster than Parquet for everything the query bench asks (counts 0.4×, top-N 0.16×, `has`
 *   and the group-bys 0.7–0.8× at 10 M rows), and a top-N fetches its rows by row id (late
 *   materialization). A file is read through an ATTACH of it (read-only) on the account's
 *   instance, made once when the segment becomes listed (segmentAttachments below).
 * - 'parquet': a Parquet file, as every segment was before. Still read (read_parquet), so data
 *   directories of earlier versions answer after an upgrade; they turn into 'duckdb' segments
 *   when compaction or a purge rewrites them.
 *
 * The catalog records each segment's format (strata_segments.format, 'parquet' for rows listed
 * before the column existed), and a segment copied to another worker carries it.
 */
export type SegmentFormat = 'parquet' | 'duckdb';

/** What seals and rewrites write. */
export const WRITTEN_FORMAT: SegmentFormat = 'duckdb';

export function isSegmentFormat(value: string): value is SegmentFormat {
  return value === 'parquet' || value === 'duckdb';
}

/** Parquet options segments were written with (read only now; kept for tests and benches). */
export const PARQUET_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 122880';

/** The table a 'duckdb' segment file holds. */
const ROWS_TABLE = 'rows';

export function segmentFileName(tableId: number, segmentId: string, format: SegmentFormat = WRITTEN_FORMAT): string {
  return path.join(String(tableId), `${segmentId}.${format}`);
}

/** The format of a segment file, by its name. */
export function formatOfFile(file: string): SegmentFormat {
  return file.endsWith('.duckdb') ? 'duckdb' : 'parquet';
}

/**
 * The name a 'duckdb' segment file is attached under: one per file path, so the same segment
 * id in another place (a temporary file) never collides. Only derived from paths of this account's
 * own directories; quoted wherever it is used.
 */
function attachedName(file: string): string {
  return `seg_${path
    .basename(file)
    .replace(/\.duckdb(\.tmp)?$/, '')
    .replaceAll('-', '')}${file.endsWith('.tmp') ? '_tmp' : ''}`;
}

/**
 * SQL table sources for segment files of one format and column list: one `read_parquet` of all
 * the Parquet files, or the `rows` table of each attached DuckDB file (one source per file).
 */
export function segmentSources(files: readonly string[], format: SegmentFormat): string[] {
  if (format === 'parquet') return [`read_parquet(${quoteLiteralList(files)})`];
  return files.map((f) => `${quoteIdentifier(attachedName(f))}.${quoteIdentifier(ROWS_TABLE)}`);
}

/** Rows, and the entry time range in µs, of a written segment file. */
export interface WrittenSummary {
  rows: number;
  minUs: number | null;
  maxUs: number | null;
}

function summaryOf(row: { n: bigint; lo: bigint | null; hi: bigint | null }): WrittenSummary {
  return { rows: Number(row.n), minUs: row.lo === null ? null : Number(row.lo), maxUs: row.hi === null ? null : Number(row.hi) };
}

const SUMMARY = 'count(*) AS n, epoch_us(min("timestamp")) AS lo, epoch_us(max("timestamp")) AS hi';

/**
 * Writes the rows of `select` (sorted by the caller) into a new segment file at `file`, and
 * answers what the file holds, read back from it. `conn` must not be inside a transaction that
 * wrote to the account's database: DuckDB lets one transaction write to one database only, so a
 * 'duckdb' file is written by its own statements (the seal runs them under the write gate, which
 * keeps the hot rows it reads the same as its own transaction's).
 */
export async function writeSegmentFile(
  conn: DuckDBConnection,
  select: string,
  file: string,
  format: SegmentFormat,
): Promise<WrittenSummary> {
  if (format === 'parquet') {
    await conn.run(`COPY (${select}) TO ${quoteLiteral(file)} (${PARQUET_OPTIONS})`);
    return summaryOf(
      (await conn.runAndReadAll(`SELECT ${SUMMARY} FROM read_parquet(${quoteLiteral(file)})`)).getRowObjectsJS()[0] as {
        n: bigint;
        lo: bigint | null;
        hi: bigint | null;
      },
    );
  }
  const name = quoteIdentifier(`${attachedName(file)}_w`);
  await conn.run(`ATTACH ${quoteLiteral(file)} AS ${name}`);
  try {
    await conn.run(`CREATE TABLE ${name}.${quoteIdentifier(ROWS_TABLE)} AS ${select}`);
    const summary = summaryOf(
      (await conn.runAndReadAll(`SELECT ${SUMMARY} FROM ${name}.${quoteIdentifier(ROWS_TABLE)}`)).getRowObjectsJS()[0] as {
        n: bigint;
        lo: bigint | null;
        hi: bigint | null;
      },
    );
    // Everything into the file itself, none left in a write-ahead log beside it: the file is
    // renamed into place after this, alone.
    await conn.run(`CHECKPOINT ${name}`);
    return summary;
  } finally {
    await conn.run(`DETACH ${name}`);
  }
}

/** Rows of a segment file not listed yet (a copy received from another worker). */
export async function countFileRows(conn: DuckDBConnection, file: string, format: SegmentFormat): Promise<number> {
  if (format === 'parquet')
    return Number(
      (
        (await conn.runAndReadAll(`SELECT count(*) AS n FROM read_parquet(${quoteLiteral(file)})`)).getRowObjectsJS()[0] as {
          n: bigint;
        }
      ).n,
    );
  const name = quoteIdentifier(`${attachedName(file)}_c`);
  await conn.run(`ATTACH ${quoteLiteral(file)} AS ${name} (READ_ONLY)`);
  try {
    return Number(
      (
        (await conn.runAndReadAll(`SELECT count(*) AS n FROM ${name}.${quoteIdentifier(ROWS_TABLE)}`)).getRowObjectsJS()[0] as {
          n: bigint;
        }
      ).n,
    );
  } catch (err) {
    throw new StrataError('internal', `Segment file ${path.basename(file)} is not a readable segment: ${(err as Error).message}`);
  } finally {
    await conn.run(`DETACH ${name}`);
  }
}

/**
 * Attaches 'duckdb' segment files read-only, each once (ATTACH is instance-wide). Must run
 * before the catalog commit that lists the segment, and outside any transaction: an ATTACH is
 * itself transactional in DuckDB, and a transaction that began before it does not see the
 * attached file. So every snapshot that lists a segment finds its file attached, and a scan
 * never attaches anything itself. Parquet files need nothing.
 */
export async function attachSegmentFiles(conn: DuckDBConnection, files: readonly string[]): Promise<void> {
  for (const file of files) {
    if (formatOfFile(file) !== 'duckdb') continue;
    await conn.run(`ATTACH IF NOT EXISTS ${quoteLiteral(file)} AS ${quoteIdentifier(attachedName(file))} (READ_ONLY)`);
  }
}

/** Detaches a segment file about to be deleted (no open scan lists it any more). */
export async function detachSegmentFile(conn: DuckDBConnection, file: string): Promise<void> {
  if (formatOfFile(file) !== 'duckdb') return;
  await conn.run(`DETACH DATABASE IF EXISTS ${quoteIdentifier(attachedName(file))}`);
}

/**
 * The columns whose term fold each attached 'duckdb' file among `files` stores (its `#fold:c`
 * columns, decision 0045), by file; files without one are absent. Read from DuckDB's own
 * listing of the attached files' columns: a file is immutable, so the answer never changes.
 */
export async function storedFolds(conn: DuckDBConnection, files: readonly string[]): Promise<Map<string, string[]>> {
  const byName = new Map(files.filter((f) => formatOfFile(f) === 'duckdb').map((f) => [attachedName(f), f] as const));
  const out = new Map<string, string[]>();
  if (byName.size === 0) return out;
  const rows = (
    await conn.runAndReadAll(
      `SELECT database_name AS db, column_name AS col FROM duckdb_columns()
       WHERE table_name = ${quoteLiteral(ROWS_TABLE)} AND starts_with(column_name, ${quoteLiteral(TERM_FOLD_PREFIX)})
         AND list_contains(${quoteLiteralList([...byName.keys()])}, database_name)`,
    )
  ).getRowObjectsJS() as { db: string; col: string }[];
  for (const r of rows) {
    const file = byName.get(r.db);
    const column = foldedColumn(r.col);
    if (file === undefined || column === undefined) continue;
    const list = out.get(file);
    if (list) list.push(column);
    else out.set(file, [column]);
  }
  return out;
}
