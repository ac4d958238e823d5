import { unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  type DataType,
  errorFields,
  INFLOW_LIMITS,
  isValidName,
  type Logger,
  MAX_JSON_DEPTH,
  ndjsonDepthWithin,
  quoteIdentifier,
  quoteLiteral,
  STAMPED_COLUMNS,
  StrataError,
} from '@strata/common';
import { hotTableName, type TableDirectory, type TableInfo, tableKey } from './catalog.js';
import type { CatalogChanges } from './catalog-changes.js';
import { convertSql, DUCKDB_TYPE } from './column-sql.js';
import { fenceKey, recordIdempotencyKey, requestsToWrite } from './idempotency-keys.js';
import type { KeyedMutex } from './keyed-mutex.js';
import { applyColumnChanges, type EvolutionPlan, planEvolution } from './schema-evolution.js';

/** The rows of one schema in an append (see proto/strata/ingest/v1/ingest.proto SchemaBatch). */
export interface AppendPart {
  schema: string;
  /** Every data field of `rows` with the type all its values share in this batch. */
  columns: { name: string; type: DataType }[];
  /** Newline-delimited JSON objects with "@ts" (µs), "@id" (UUID) and the data fields. */
  rows: Uint8Array;
  rowCount: number;
}

export interface AppendInput {
  accountId: string;
  parts: AppendPart[];
  inflowTimestampUs: number;
  inflowHost: string;
  sourceAddress: string;
  /** __INFLOW_AGENT, or null for uploads that did not come from an agent. */
  agent: string | null;
  idempotencyKey?: string;
  contentHash?: string;
  /** The key-ranking history revision the gateway routed a keyed request by (idempotency-keys.ts). */
  keyViewRevision?: number;
}

export interface AppendResult {
  rowsStored: number;
  duplicate: boolean;
}

interface Pending {
  input: AppendInput;
  rows: number;
  resolve: (r: AppendResult) => void;
  reject: (e: unknown) => void;
}

interface PlannedPart {
  part: AppendPart;
  key: string;
  plan: EvolutionPlan;
  /** Set when this part creates the table. */
  createdTableId?: number;
  /** Position the first added column takes (the table's column count before this part). */
  firstAddPosition: number;
}

/** A part with its request and the batch file holding its rows. */
interface PartWrite {
  input: AppendInput;
  p: PlannedPart;
  file: string;
}

export interface HotWriterOptions {
  conn: DuckDBConnection;
  tables: TableDirectory;
  /** Held (per table id) around schema changes; seals and compactions take the same lock. */
  tableLocks: KeyedMutex<number>;
  /** Group commits that create tables or change columns commit through it (see catalog-changes.ts). */
  catalogChanges: CatalogChanges;
  tmpDir: string;
  log: Logger;
  /** Group commit stops adding requests once a group holds this many rows. */
  maxGroupRows: number;
  /** Called after each commit with rows added per table id. */
  onCommitted: (rowsByTable: Map<number, number>) => void;
  /**
   * Held around each group commit. Seals and checkpoints take it too, so they never run beside a
   * write transaction: overlapping them cost ~1.5 µs more CPU per row on 2 cores, while requests
   * that queue meanwhile simply form a larger group afterwards.
   */
  gate: KeyedMutex<'writes'>;
}

const GUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** DuckDB errors that mean the rows did not match what the batch declared: the caller's fault. */
function isInputError(err: unknown): boolean {
  const m = err instanceof Error ? err.message : '';
  return /^(Conversion Error|Invalid Input Error|Constraint Error|Out of Range Error)/.test(m);
}

/**
 * The single writer of the hot buffer. Requests queue up; whatever is queued when the previous
 * commit finishes is written as one group in one transaction (group commit), so small requests
 * still commit ≥ 1,000 rows at a time under load. A request's promise resolves only after the
 * COMMIT that holds its rows returned, i.e. once DuckDB's write-ahead log has them on disk.
 *
 * A group that fails is rolled back and its requests are retried one by one, so one bad request
 * never fails the others.
 *
 * Rows reach DuckDB through its JSON reader: the request's NDJSON is written to a temporary file
 * and inserted with `INSERT … SELECT … FROM read_json(file, columns = …)`, the fastest load path
 * measured here (the JSON parsing runs in DuckDB's own threads, not on the JS thread).
 */
export class HotWriter {
  private readonly queue: Pending[] = [];
  private draining = false;
  private fileSeq = 0;
  private closed = false;
  private idle: Promise<void> = Promise.resolve();
  private idleResolve: (() => void) | undefined;

  constructor(private readonly o: HotWriterOptions) {}

  submit(input: AppendInput): Promise<AppendResult> {
    if (this.closed)
      return Promise.reject(new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 }));
    validateInput(input);
    const rows = input.parts.reduce((n, p) => n + p.rowCount, 0);
    return new Promise((resolve, reject) => {
      this.queue.push({ input, rows, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /**
   * Fences an idempotency key (idempotency-keys.ts `fenceKey`) between two group commits: a group
   * committing now is seen, any later one meets the fence.
   */
  async fenceKey(request: Parameters<typeof fenceKey>[1]): Promise<{ stored: boolean }> {
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    const release = await this.o.gate.lock('writes');
    try {
      return await fenceKey(this.o.conn, request);
    } finally {
      release();
    }
  }

  /** Stops accepting requests and waits for queued ones to finish. */
  async close(): Promise<void> {
    this.closed = true;
    await this.idle;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    this.idle = new Promise((r) => {
      this.idleResolve = r;
    });
    try {
      while (this.queue.length > 0) {
        const group: Pending[] = [];
        let rows = 0;
        while (this.queue.length > 0 && (group.length === 0 || rows + this.queue[0]!.rows <= this.o.maxGroupRows)) {
          const p = this.queue.shift()!;
          group.push(p);
          rows += p.rows;
        }
        await this.runGroup(group);
      }
    } finally {
      this.draining = false;
      this.idleResolve?.();
    }
  }

  private async runGroup(group: Pending[]): Promise<void> {
    const release = await this.o.gate.lock('writes');
    try {
      await this.commitGroup(group);
    } finally {
      release();
    }
  }

  private async commitGroup(group: Pending[]): Promise<void> {
    try {
      const results = await this.commit(group.map((p) => p.input));
      for (const [i, p] of group.entries()) p.resolve(results[i]!);
      return;
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(this.classify(err));
        return;
      }
      this.o.log.debug({ requests: group.length, ...errorFields(err) }, 'group commit failed; retrying requests one by one');
    }
    for (const p of group) {
      try {
        p.resolve((await this.commit([p.input]))[0]!);
      } catch (err) {
        p.reject(this.classify(err));
      }
    }
  }

  private classify(err: unknown): unknown {
    if (err instanceof StrataError) return err;
    if (isInputError(err))
      return new StrataError('invalid', `Rows do not match their declared columns: ${(err as Error).message.split('\n')[0]}`);
    return err;
  }

  /**
   * Writes requests in one transaction; returns one result per request. Steps: skip duplicates,
   * plan schema changes against a draft of the directory, lock the tables whose columns change,
   * write the batch files, then in one transaction apply the schema changes, insert the rows and
   * record the idempotency keys; the draft is published only after COMMIT.
   */
  private async commit(inputs: AppendInput[]): Promise<AppendResult[]> {
    const results: AppendResult[] = inputs.map(() => ({ rowsStored: 0, duplicate: true }));
    const toWrite = await requestsToWrite(this.o.conn, inputs);
    for (const i of toWrite) results[i] = { rowsStored: 0, duplicate: false };
    const { draft, planned } = this.planParts(inputs, toWrite);
    const release = await this.o.tableLocks.lockAll(changedExistingTables(planned, draft));
    const files: string[] = [];
    let rowsByTable: Map<number, number>;
    try {
      const writes = await this.writeBatchFiles(inputs, toWrite, planned, files);
      rowsByTable = await this.writeTransaction(inputs, toWrite, writes, draft, results);
    } finally {
      release();
      await Promise.all(files.map((f) => unlink(f).catch(() => undefined)));
    }
    for (const table of draft.values()) this.o.tables.put(table);
    this.o.onCommitted(rowsByTable);
    return results;
  }

  /**
   * Plans each part's schema changes against a draft of the directory (so later parts of the group
   * see earlier parts' changes); reserves ids for tables the group creates. `planned[n]` holds the
   * parts of request `toWrite[n]`.
   */
  private planParts(inputs: AppendInput[], toWrite: number[]): { draft: Map<string, TableInfo>; planned: PlannedPart[][] } {
    const draft = new Map<string, TableInfo>();
    const planned: PlannedPart[][] = [];
    for (const i of toWrite) {
      const input = inputs[i]!;
      const parts: PlannedPart[] = [];
      for (const part of input.parts) {
        if (part.rowCount === 0) continue;
        const key = tableKey(input.accountId, part.schema);
        const current = draft.get(key) ?? this.o.tables.get(input.accountId, part.schema);
        const plan = planEvolution(part.schema, current?.columns, part.columns);
        const pp: PlannedPart = { part, key, plan, firstAddPosition: current?.columns.length ?? 0 };
        let info = current;
        if (!info) {
          const tableId = this.o.tables.reserveId();
          pp.createdTableId = tableId;
          info = { tableId, accountId: input.accountId, schema: part.schema, hotTable: hotTableName(tableId), columns: [] };
        }
        draft.set(key, { ...info, columns: plan.columns });
        parts.push(pp);
      }
      planned.push(parts);
    }
    return { draft, planned };
  }

  /** One batch file per part, written outside the transaction; their paths are added to `files`. */
  private async writeBatchFiles(
    inputs: AppendInput[],
    toWrite: number[],
    planned: PlannedPart[][],
    files: string[],
  ): Promise<PartWrite[]> {
    const writes: PartWrite[] = [];
    for (const [n, i] of toWrite.entries()) {
      for (const p of planned[n]!) {
        const file = path.join(this.o.tmpDir, `batch-${process.pid}-${this.fileSeq++}.ndjson`);
        files.push(file);
        writes.push({ input: inputs[i]!, p, file });
      }
    }
    await Promise.all(writes.map((w) => writeFile(w.file, w.p.part.rows)));
    return writes;
  }

  /** The transaction: schema changes, rows, idempotency keys; rolled back on any failure. Rows added per table. */
  private async writeTransaction(
    inputs: AppendInput[],
    toWrite: number[],
    writes: PartWrite[],
    draft: Map<string, TableInfo>,
    results: AppendResult[],
  ): Promise<Map<number, number>> {
    const { conn } = this.o;
    await conn.run('BEGIN TRANSACTION');
    try {
      // All schema changes of the group, in request order, then the rows: each insert converts
      // its batch types to the final column types of the group.
      for (const w of writes) await this.applySchemaChanges(draft.get(w.p.key)!, w.p);
      // Requests retried alone insert part by part, so a refusal names the exact part.
      const rowsByTable = await this.insertAll(inputs.length > 1 ? insertGroups(writes) : writes.map((w) => [w]), draft);
      for (const i of toWrite) {
        const input = inputs[i]!;
        await recordIdempotencyKey(conn, input);
        results[i] = { rowsStored: input.parts.reduce((n, p) => n + p.rowCount, 0), duplicate: false };
      }
      if (writes.some((w) => w.p.createdTableId !== undefined || w.p.plan.changes.length > 0)) {
        await this.o.catalogChanges.commit(conn);
      } else {
        await conn.run('COMMIT');
      }
      return rowsByTable;
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
  }

  /** Inserts each group of parts, checking it holds the rows it declared. Rows added per table. */
  private async insertAll(groups: PartWrite[][], draft: Map<string, TableInfo>): Promise<Map<number, number>> {
    const rowsByTable = new Map<number, number>();
    for (const group of groups) {
      const table = draft.get(group[0]!.p.key)!;
      const declared = group.reduce((n, w) => n + w.p.part.rowCount, 0);
      const inserted = await this.insertRows(table, group);
      if (inserted !== declared) {
        const p = group[0]!.p.part;
        throw new StrataError(
          'invalid',
          group.length === 1
            ? `Schema ${p.schema}: the batch declared ${p.rowCount} rows but holds ${inserted}.`
            : `Schema ${p.schema}: the batches declared ${declared} rows but hold ${inserted}.`,
        );
      }
      rowsByTable.set(table.tableId, (rowsByTable.get(table.tableId) ?? 0) + inserted);
    }
    return rowsByTable;
  }

  private async applySchemaChanges(table: TableInfo, p: PlannedPart): Promise<void> {
    await applyColumnChanges(this.o.conn, table, p.plan, p.createdTableId !== undefined, p.firstAddPosition);
  }

  /**
   * Inserts the rows of parts that go to one table with the same batch columns, in one statement:
   * read_json over all their files (DuckDB parses them in parallel). The request stamps differ per
   * file and are chosen by the reader's file name column ("@file": no field name can start with
   * '@', so it never meets a data column); every value is a bound parameter.
   */
  private async insertRows(table: TableInfo, group: PartWrite[]): Promise<number> {
    const params: (string | bigint | null)[] = [];
    const param = (v: string | bigint | null) => {
      params.push(v);
      return `$${params.length}`;
    };
    const stamp = (of: (w: { input: AppendInput }) => string | bigint | null, cast: string) =>
      group.length === 1
        ? `${param(of(group[0]!))}::${cast}`
        : `CASE "@file" ${group.map((w) => `WHEN ${param(w.file)} THEN ${param(of(w))}::${cast}`).join(' ')} END`;
    const finalTypes = new Map(table.columns.map((c) => [c.name, c.type]));
    const targets = STAMPED_COLUMNS.map((c) => quoteIdentifier(c.name));
    const values = [
      'make_timestamp("@ts")',
      '"@id"',
      `make_timestamp(${stamp((w) => BigInt(w.input.inflowTimestampUs), 'BIGINT')})`,
      stamp((w) => w.input.inflowHost, 'VARCHAR'),
      stamp((w) => w.input.sourceAddress, 'VARCHAR'),
      stamp((w) => w.input.agent, 'VARCHAR'),
    ];
    const readColumns = [`'@ts': 'BIGINT'`, `'@id': 'UUID'`];
    for (const m of group[0]!.p.plan.mappings) {
      const source = quoteIdentifier(m.batchName);
      // DateTime values travel as microseconds since the epoch.
      const value = m.batchType === 'DateTime' ? `make_timestamp(${source})` : source;
      targets.push(quoteIdentifier(m.tableName));
      values.push(convertSql(value, m.batchType, finalTypes.get(m.tableName) ?? m.tableType));
      readColumns.push(`${quoteLiteral(m.batchName)}: '${m.batchType === 'DateTime' ? 'BIGINT' : DUCKDB_TYPE[m.batchType]}'`);
    }
    const files = `[${group.map((w) => param(w.file)).join(', ')}]`;
    const sql =
      `INSERT INTO ${quoteIdentifier(table.hotTable)} (${targets.join(', ')}) ` +
      `SELECT ${values.join(', ')} FROM read_json(${files}, format = 'newline_delimited', columns = {${readColumns.join(', ')}}, ` +
      `maximum_object_size = ${64 * 1024 * 1024}${group.length > 1 ? `, filename = '@file'` : ''})`;
    const result = await this.o.conn.run(sql, params);
    return result.rowsChanged;
  }
}

/** Schema changes of existing tables wait for a seal or compaction of that table to finish: their ids. */
function changedExistingTables(planned: PlannedPart[][], draft: Map<string, TableInfo>): Set<number> {
  const ids = new Set<number>();
  for (const parts of planned)
    for (const p of parts) {
      if (p.createdTableId === undefined && p.plan.changes.length > 0) ids.add(draft.get(p.key)!.tableId);
    }
  return ids;
}

/** Parts grouped by target table and identical batch columns (one INSERT each), in first-seen order. */
function insertGroups<W extends { p: PlannedPart }>(writes: W[]): W[][] {
  const groups = new Map<string, W[]>();
  for (const w of writes) {
    const key = `${w.p.key}\u0000${JSON.stringify(w.p.part.columns)}`;
    const g = groups.get(key);
    if (g) g.push(w);
    else groups.set(key, [w]);
  }
  return [...groups.values()];
}

/** Checks what the gateway already guarantees, because any gRPC client may call the worker. */
function validateInput(input: AppendInput): void {
  if (!GUID_PATTERN.test(input.accountId)) throw new StrataError('invalid', 'Account id must be a lower-case GUID.');
  if (!Number.isSafeInteger(input.inflowTimestampUs)) throw new StrataError('invalid', 'Inflow timestamp is not valid.');
  if (input.idempotencyKey !== undefined && input.idempotencyKey.length > 256)
    throw new StrataError('invalid', 'Idempotency key is longer than 256 characters.');
  for (const part of input.parts) {
    if (!isValidName(part.schema)) throw new StrataError('invalid', `Invalid schema name '${part.schema}'.`);
    if (part.rowCount < 0 || part.rowCount > INFLOW_LIMITS.maxEntriesPerBatch * 10)
      throw new StrataError('invalid', `Schema ${part.schema}: invalid row count ${part.rowCount}.`);
    // The gateway's limit on a field value's nesting (docs/api.md); the row object is one more level.
    if (nestedValuesKept(part) && !ndjsonDepthWithin(part.rows, MAX_JSON_DEPTH + 1))
      throw new StrataError('invalid', `Schema ${part.schema}: a field value nests deeper than ${MAX_JSON_DEPTH} levels.`);
  }
}

/**
 * Whether a part's rows can store a nested value as such: only a Dynamic column keeps JSON, which
 * queries and answers later walk (the reason for the nesting limit). DuckDB's JSON reader is
 * iterative (a value nested 1,000,000 levels reads fine) and stores whatever it is given for a
 * column of another type as that type: a nested value for a String column becomes its JSON text, a
 * string the gateway would accept as sent; for the other types the conversion refuses it; keys
 * the batch does not declare are not read at all. So only parts declaring a Dynamic column are
 * scanned, which spares the worker's JS thread a pass over every byte of flat log rows
 * (~0.2–0.8 µs a row; docs/decisions/0039-ingest-part-3.md).
 */
function nestedValuesKept(part: AppendPart): boolean {
  return part.columns.some((c) => c.type === 'Dynamic');
}
