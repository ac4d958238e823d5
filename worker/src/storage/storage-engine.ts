import { mkdir, readdir, rm, unlink } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ColumnTypeName } from '@strata/common';
import {
  confineDuckDB,
  errorFields,
  FragmentChecker,
  type FragmentStatement,
  type Logger,
  quoteIdentifier,
  registerKustoFunctions,
  StrataError,
} from '@strata/common';
import { workerMetrics } from '../worker-metrics.js';
import {
  CATALOG_DDL,
  deleteReplica,
  insertReplica,
  type SegmentInfo,
  selectReplicas,
  selectSegments,
  TableDirectory,
  type TableInfo,
} from './catalog.js';
import { CatalogChanges } from './catalog-changes.js';
import { type CompactRequest, compactSegments } from './compactor.js';
import type { FreeSpaceGuard } from './free-space-guard.js';
import {
  adoptSegment,
  dropReplicas,
  findSegment,
  markOutgoing,
  promoteReplicas,
  releaseOutgoing,
  type SegmentDescriptor,
  settleIncoming,
  sha256OfFile,
} from './handoff.js';
import { type AppendInput, type AppendResult, HotWriter } from './hot-writer.js';
import { pruneIdempotencyKeys } from './idempotency-keys.js';
import { KeyedMutex } from './keyed-mutex.js';
import { type Deleted, dropTable, expireTable } from './lifecycle.js';
import { type PurgeProgress, purgeStep } from './purge.js';
import { RetentionRules } from './retention-rules.js';
import { openSnapshot, type ScanRange, type ScanSnapshot, type SegmentView } from './scan.js';
import { sealTable } from './sealer.js';
import { SegmentReclaimer } from './segment-reclaimer.js';
import type { StorageContext, StoragePaths } from './storage-context.js';

/** Knobs with production defaults; tests shorten the intervals. */
export interface StorageTuning {
  /** A table's hot rows are sealed once they reach this many rows… */
  sealRows: number;
  /** …or once the oldest unsealed commit is this old. */
  sealAgeMs: number;
  /** How often the maintenance loop looks for work (seal, checkpoint, key pruning). */
  maintenanceIntervalMs: number;
  /**
   * CHECKPOINT runs right after each seal (when the sealed rows are gone, so it writes little) and
   * otherwise at most this often while something changed.
   */
  checkpointIntervalMs: number;
  /** Idempotency keys are kept this long… */
  idempotencyRetentionMs: number;
  /** …and at most this many (the oldest go first). */
  idempotencyMaxKeys: number;
  /** Group commit takes queued requests up to this many rows per transaction. */
  maxGroupRows: number;
  /** How often rows past retention are deleted (a changed policy triggers a pass at once). */
  retentionIntervalMs: number;
  /** Extra DuckDB settings of the hot buffer instance. */
  duckdbSettings: Record<string, string>;
}

const DEFAULT_STORAGE_TUNING: StorageTuning = {
  sealRows: 250_000,
  sealAgeMs: 60_000,
  maintenanceIntervalMs: 1_000,
  checkpointIntervalMs: 300_000,
  idempotencyRetentionMs: 24 * 3600 * 1000,
  idempotencyMaxKeys: 1_000_000,
  maxGroupRows: 200_000,
  retentionIntervalMs: 30_000,
  duckdbSettings: {},
};

export interface StorageEngineOptions {
  dataPath: string;
  log: Logger;
  guard: FreeSpaceGuard;
  tuning?: Partial<StorageTuning>;
  /** The worker's CPU budget (cpu-budget.ts; default every core): DuckDB runs on one fewer. */
  cores?: number;
}

/** Result of openScan: one relation over the hot rows and segments of one schema. */
/** What a worker holds of one schema of an account (DescribeStorage). */
export interface SchemaUsage {
  schema: string;
  hotRows: number;
  segmentRows: number;
  segments: number;
  segmentBytes: number;
  /** µs since the epoch; 0 without rows. */
  minTimestampUs: number;
  maxTimestampUs: number;
}

export interface ScanHandle {
  connection: DuckDBConnection;
  relation: string;
  columns: { name: string; type: ColumnTypeName }[];
  release(): Promise<void>;
}

export interface SchemaDescription {
  schema: string;
  columns: { name: string; type: ColumnTypeName }[];
}

/** DuckDB files open in this process: one instance per file per process. */
const openDatabases = new Set<string>();

/**
 * A worker's storage: the durable DuckDB hot buffer, sealed Parquet segments and the catalog,
 * all under `backend.dataPath`:
 *
 *   <dataPath>/hot.duckdb          hot tables (one per account and schema) + catalog tables
 *   <dataPath>/segments/<table>/   Parquet segments (ZSTD, sorted by timestamp)
 *   <dataPath>/tmp/                batch files in flight, DuckDB spill files
 *
 * ── API for the query engine ───────────────────────────────────────────────────────────────
 *
 * `openScan(accountId, schema, { fromMs?, toMs? })` → `ScanHandle | undefined`
 *   undefined when the schema has never been written on this worker. Otherwise:
 *   - `connection`: a DuckDB connection used by this scan only. It holds an open read
 *     transaction: every query run on it sees one consistent snapshot (hot rows and segments of
 *     the same instant; no row twice, none missing, even while seals and compactions commit).
 *   - `relation`: a parenthesised SELECT, e.g. `(SELECT … UNION ALL …)`: use it in SQL as a
 *     table (`SELECT … FROM ${relation} WHERE …`). It is the UNION ALL of the hot rows and the
 *     Parquet segments whose time range overlaps [fromMs, toMs) (from inclusive, to exclusive,
 *     both optional, milliseconds since the epoch), filtered to that range on `timestamp`;
 *     Parquet row-group statistics prune by the range and by your own filters.
 *   - `columns`: `[{ name, type }]` in table order: `timestamp` (DateTime), `__INFLOW_ID` (Guid),
 *     `__INFLOW_TIMESTAMP` (DateTime), `__INFLOW_HOST`, `__INFLOW_SOURCE_ADDRESS`,
 *     `__INFLOW_AGENT` (String), then data fields. Types are Int64, Float64, Boolean, DateTime,
 *     String, Dynamic (DuckDB JSON) and Guid (DuckDB UUID); DuckDB types are BIGINT, DOUBLE,
 *     BOOLEAN, TIMESTAMP (UTC, µs), VARCHAR, JSON, UUID.
 *   - `release()`: must be called when done (also on error): ends the transaction, closes the
 *     connection and lets compaction delete segment files this scan could read.
 *   Do not run statements that write on the connection. Column names are case-insensitive in
 *   DuckDB and unique case-insensitively within a schema.
 *
 * `openSnapshot(accountId, [{ schema, fromMs?, toMs? }, …])` → `{ connection, relations, release }`
 *   the same for several schemas in one snapshot (joins, unions); `relations` lists the schemas
 *   that exist, each `{ schema, relation, columns }`.
 *
 * `listSchemas(accountId)` → `[{ schema, columns: [{ name, type }] }]` sorted by schema name:
 *   every schema of the account on this worker with its current columns.
 */
export class StorageEngine {
  private readonly tuning: StorageTuning;
  private readonly writer: HotWriter;
  private readonly compactionLocks = new KeyedMutex<number>();
  /** Between group commits only: seals and checkpoints (see HotWriterOptions.gate). */
  private readonly writeGate = new KeyedMutex<'writes'>();
  private readonly hot = new Map<number, { rows: number; since: number }>();
  private readonly openSnapshots = new Set<ScanSnapshot>();
  private maintenanceTimer: NodeJS.Timeout | undefined;
  private maintenanceRun: Promise<void> = Promise.resolve();
  private lastCheckpoint = Date.now();
  private dirtySinceCheckpoint = false;
  private lastPrune = 0;
  private lastExpiry = 0;
  private readonly purgeClean = new Map<string, Set<string>>();
  private readonly checker = new FragmentChecker();
  private maxTermSeen = 0;
  private closed = false;
  /** Why appends are refused (a drain), or undefined. */
  private writesStopped: string | undefined;
  /**
   * The highest coordinator revision at which a segment released here had been handed off: a
   * query whose view is older would expect it here (handoff.ts), so its fragments are refused.
   */
  private handoffFloor = 0;
  private readonly segmentListeners: (() => void)[] = [];

  private constructor(
    private readonly ctx: StorageContext,
    private readonly writerConn: DuckDBConnection,
    private readonly maintenanceConn: DuckDBConnection,
    tuning: StorageTuning,
  ) {
    this.tuning = tuning;
    this.writer = new HotWriter({
      conn: writerConn,
      tables: ctx.tables,
      tableLocks: ctx.tableLocks,
      catalogChanges: ctx.catalogChanges,
      tmpDir: ctx.paths.tmp,
      log: ctx.log,
      maxGroupRows: tuning.maxGroupRows,
      onCommitted: (rowsByTable) => this.noteCommitted(rowsByTable),
      gate: this.writeGate,
    });
  }

  static async open(options: StorageEngineOptions): Promise<StorageEngine> {
    const tuning = { ...DEFAULT_STORAGE_TUNING, ...options.tuning };
    const data = path.resolve(options.dataPath);
    const paths: StoragePaths = {
      data,
      database: path.join(data, 'hot.duckdb'),
      segments: path.join(data, 'segments'),
      tmp: path.join(data, 'tmp'),
    };
    if (openDatabases.has(paths.database))
      throw new Error(`storage at ${data} is already open in this process (one DuckDB instance per file)`);
    await mkdir(paths.segments, { recursive: true });
    // Whatever is in tmp belongs to a previous run: unfinished batch files and spill files.
    await rm(paths.tmp, { recursive: true, force: true });
    await mkdir(path.join(paths.tmp, 'spill'), { recursive: true });

    openDatabases.add(paths.database);
    try {
      const instance = await DuckDBInstance.create(paths.database, {
        temp_directory: path.join(paths.tmp, 'spill'),
        // Hot rows live in the write-ahead log until they are sealed, and are checkpointed only
        // after the seal deleted them: compressing them into the database file first cost ~2 µs
        // a row for data that leaves for Parquet within a minute (bench/ingest). The WAL stays
        // bounded by the seal thresholds; DuckDB checkpoints by itself beyond this size.
        checkpoint_threshold: '256MB',
        // All cores of the budget but one: the JS thread (gRPC, batch files) and co-located roles keep a core.
        // On 2 cores a second DuckDB thread cost ~35 % more CPU per ingested row (coordination
        // and spinning) for no more throughput (bench/ingest, docs/decisions/0004-worker-storage.md).
        threads: String(Math.max(1, (options.cores ?? availableParallelism()) - 1)),
        ...tuning.duckdbSettings,
      });
      const writerConn = await instance.connect();
      // Naive TIMESTAMP columns hold UTC: conversions from TIMESTAMPTZ (now(), query functions)
      // must use UTC, not the host's zone. ICU is built in but loads lazily.
      await writerConn.run('LOAD icu');
      await writerConn.run("SET GLOBAL TimeZone = 'UTC'");
      // Segment files never change once written (a compaction writes new ones), so their footers
      // can be parsed once instead of on every query: ~1.5 ms less on a small query over 10
      // segments (bench/query). DuckDB bounds this cache (LRU by estimated memory) and checks a
      // file's modification time before using its entry. The setting belongs to the parquet
      // extension, which must be loaded first.
      await writerConn.run('LOAD parquet');
      await writerConn.run('SET GLOBAL parquet_metadata_cache = true');
      // The engine's JS functions (kusto-udfs.ts), for every fragment connection of this instance:
      // registered once here, before the configuration is locked — a registration is a catalog
      // write, and one per fragment connection inside its snapshot transaction conflicted with
      // the other open snapshots ("Failed to register scalar function").
      registerKustoFunctions(writerConn);
      // Last: from here on this instance reaches only its segments and batch/spill files, and no
      // statement (query fragments included) can change that. `threads` follows the executor
      // settings live (query-service.ts).
      await confineDuckDB(writerConn, { allowedDirectories: [paths.segments, paths.tmp], allowedConfigs: ['threads'] });
      const maintenanceConn = await instance.connect();
      for (const ddl of CATALOG_DDL) await writerConn.run(ddl);
      const tables = await TableDirectory.load(writerConn);
      const ctx: StorageContext = {
        instance,
        tables,
        tableLocks: new KeyedMutex<number>(),
        reclaimer: new SegmentReclaimer((file, err) =>
          options.log.warn({ file, ...errorFields(err) }, 'could not delete a replaced segment file'),
        ),
        catalogChanges: new CatalogChanges(),
        guard: options.guard,
        retention: new RetentionRules(),
        paths,
        log: options.log,
      };
      const engine = new StorageEngine(ctx, writerConn, maintenanceConn, tuning);
      await engine.recover();
      engine.scheduleMaintenance();
      return engine;
    } catch (err) {
      openDatabases.delete(paths.database);
      throw err;
    }
  }

  /** Counts hot rows left by the previous run and deletes segment files the catalog does not list. */
  private async recover(): Promise<void> {
    const now = Date.now();
    for (const t of this.ctx.tables.all()) {
      const r = (
        await this.writerConn.runAndReadAll(`SELECT count(*) AS n FROM ${quoteIdentifier(t.hotTable)}`)
      ).getRowObjectsJS()[0] as {
        n: bigint;
      };
      if (r.n > 0n) this.hot.set(t.tableId, { rows: Number(r.n), since: now });
    }
    const listed = new Set((await selectSegments(this.writerConn)).map((s) => path.join(this.ctx.paths.segments, s.fileName)));
    let removed = 0;
    for (const dir of await readdir(this.ctx.paths.segments)) {
      const full = path.join(this.ctx.paths.segments, dir);
      let files: string[];
      try {
        files = await readdir(full);
      } catch {
        continue;
      }
      for (const f of files) {
        const file = path.join(full, f);
        if (!listed.has(file)) {
          await unlink(file).catch(() => undefined);
          removed++;
        }
      }
    }
    this.updateHotGauge();
    this.ctx.log.info(
      { tables: this.ctx.tables.all().length, segments: listed.size, orphanFilesRemoved: removed },
      'storage opened',
    );
  }

  get paths(): StoragePaths {
    return this.ctx.paths;
  }

  /** Free bytes on the data path at the free-space guard's last check. */
  get freeBytes(): number {
    return this.ctx.guard.freeBytes;
  }

  /** Stores an append durably; resolves once committed (see HotWriter). */
  async append(input: AppendInput): Promise<AppendResult> {
    const m = workerMetrics();
    if (this.writesStopped !== undefined) {
      m.refusedAppends.inc({ reason: 'draining' });
      throw new StrataError('unavailable', this.writesStopped, { retryAfterSeconds: 1 });
    }
    try {
      this.ctx.guard.assertWritable();
    } catch (err) {
      m.refusedAppends.inc({ reason: 'insufficient_storage' });
      throw err;
    }
    const started = process.hrtime.bigint();
    this.ctx.guard.noteWritten(input.parts.reduce((n, p) => n + p.rows.byteLength, 0));
    const result = await this.writer.submit(input);
    m.appendSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (result.duplicate) m.duplicateAppends.inc();
    else m.appendedRows.inc(result.rowsStored);
    return result;
  }

  /** See the class comment. */
  async openScan(
    accountId: string,
    schema: string,
    range: ScanRange = {},
    view?: SegmentView & { revision: number },
  ): Promise<ScanHandle | undefined> {
    const snapshot = await this.openSnapshot(accountId, [{ schema, ...range }], view);
    const relation = snapshot.relations[0];
    if (!relation) {
      await snapshot.release();
      return undefined;
    }
    return { connection: snapshot.connection, relation: relation.relation, columns: relation.columns, release: snapshot.release };
  }

  /**
   * See the class comment. `view` and `viewRevision` come from the query's account view: which
   * handed-off segments to read here (scan.ts, `readsSegment`), and the coordinator revision it
   * was read at (a view older than a handoff whose segment this worker already released is
   * refused: answering would leave the segment out).
   */
  async openSnapshot(
    accountId: string,
    requests: readonly ({ schema: string } & ScanRange)[],
    view?: SegmentView & { revision: number },
  ): Promise<ScanSnapshot> {
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    if (view && view.revision > 0 && view.revision < this.handoffFloor)
      throw new StrataError('unavailable', 'Data moved between workers while the query ran; retry the query.', {
        retryAfterSeconds: 1,
      });
    const snapshot = await openSnapshot(this.ctx, accountId, requests, view);
    const release = snapshot.release;
    // One release however often it is called: a caller may let it finish in the background (the
    // query service answers before its snapshot is closed), and close() then waits for it here.
    let releasing: Promise<void> | undefined;
    const tracked: ScanSnapshot = {
      connection: snapshot.connection,
      relations: snapshot.relations,
      release: () => {
        releasing ??= release().finally(() => this.openSnapshots.delete(tracked));
        return releasing;
      },
    };
    this.openSnapshots.add(tracked);
    return tracked;
  }

  /** Every account this worker holds a table of (hot rows or segments). */
  listAccounts(): string[] {
    return [...new Set(this.ctx.tables.all().map((t) => t.accountId))].sort();
  }

  /** See the class comment. */
  listSchemas(accountId: string): SchemaDescription[] {
    return this.ctx.tables
      .ofAccount(accountId)
      .map((t) => ({ schema: t.schema, columns: t.columns.map((c) => ({ ...c })) }))
      .sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0));
  }

  async listSegments(accountId?: string): Promise<SegmentInfo[]> {
    const conn = await this.ctx.instance.connect();
    try {
      return await selectSegments(conn, accountId);
    } finally {
      conn.closeSync();
    }
  }

  /**
   * Runs a compaction job planned by the master. `term` is the planner's fencing term: a job from
   * an older term than one already seen is refused (a deposed leader's plan).
   */
  async compact(request: CompactRequest, term = 0): Promise<SegmentInfo> {
    if (term < this.maxTermSeen)
      throw new StrataError('precondition_failed', `Compaction term ${term} is older than term ${this.maxTermSeen}.`);
    this.maxTermSeen = term;
    const merged = await compactSegments(this.ctx, this.compactionLocks, request);
    workerMetrics().compactions.inc();
    this.dirtySinceCheckpoint = true;
    for (const l of this.segmentListeners) l();
    return merged;
  }

  /**
   * Refuses every append from now on with `reason` (503: a drain) and resolves once the appends
   * already accepted have committed or failed, so a seal after this leaves no hot row behind.
   */
  async stopWrites(reason: string): Promise<void> {
    this.writesStopped = reason;
    await this.writer.whenIdle();
  }

  /** Whether appends are refused by stopWrites. */
  get writesStoppedReason(): string | undefined {
    return this.writesStopped;
  }

  /** A listed segment's file and SHA-256, for a copy to another worker. */
  async segmentForCopy(accountId: string, segmentId: string): Promise<{ segment: SegmentInfo; file: string; sha256: string }> {
    const segment = await this.withConnection((conn) => findSegment(conn, accountId, segmentId));
    if (!segment) throw new StrataError('not_found', `Segment ${segmentId} is not listed on this worker.`);
    const file = path.join(this.ctx.paths.segments, segment.fileName);
    return { segment, file, sha256: await sha256OfFile(file) };
  }

  /** The file of a listed segment (to stream it to another worker). */
  async segmentFile(accountId: string, segmentId: string): Promise<string> {
    const segment = await this.withConnection((conn) => findSegment(conn, accountId, segmentId));
    if (!segment) throw new StrataError('not_found', `Segment ${segmentId} is not listed on this worker.`);
    return path.join(this.ctx.paths.segments, segment.fileName);
  }

  /** Marks segments as being handed to `toWorkerId` (handoff.ts): no rewrite touches them now. */
  async markOutgoing(segmentIds: readonly string[], toWorkerId: string): Promise<void> {
    await this.withConnection((conn) => markOutgoing(this.ctx, conn, segmentIds, toWorkerId));
  }

  /**
   * Lists a segment copied from another worker as incoming (a drain) or as a replica
   * (handoff.ts). False: it was here already.
   */
  async adoptSegment(
    desc: SegmentDescriptor,
    sourceWorkerId: string,
    chunks: AsyncIterable<Uint8Array>,
    as: 'incoming' | 'replica' = 'incoming',
  ): Promise<boolean> {
    const adopted = await this.withConnection((conn) =>
      adoptSegment(this.ctx, conn, this.writeGate, desc, sourceWorkerId, chunks, as),
    );
    if (adopted) this.dirtySinceCheckpoint = true;
    return adopted;
  }

  /**
   * Ends an incoming handoff made at coordinator revision `revision` (handoff.ts) and refuses,
   * from now on, fragments of queries whose view is older: such a query may have read the
   * segment from the giving worker already.
   */
  async settleIncoming(segmentId: string, revision: number): Promise<void> {
    this.handoffFloor = Math.max(this.handoffFloor, revision);
    await this.withConnection((conn) => settleIncoming(this.ctx, conn, segmentId));
    this.dirtySinceCheckpoint = true;
  }

  /**
   * Unlists segments handed off at coordinator revision `revision` or earlier (handoff.ts) and
   * refuses, from now on, fragments of queries whose view is older than that.
   */
  async releaseOutgoing(segmentIds: readonly string[], revision: number): Promise<SegmentInfo[]> {
    this.handoffFloor = Math.max(this.handoffFloor, revision);
    const gone = await this.withConnection((conn) => releaseOutgoing(this.ctx, conn, segmentIds));
    this.dirtySinceCheckpoint = true;
    return gone;
  }

  /** Unlists replicas of other workers' segments (handoff.ts), only `primary`'s when given. */
  async dropReplicas(segmentIds: readonly string[], primary?: string): Promise<SegmentInfo[]> {
    const gone = await this.withConnection((conn) => dropReplicas(this.ctx, conn, segmentIds, primary));
    if (gone.length > 0) this.dirtySinceCheckpoint = true;
    return gone;
  }

  /**
   * Makes replicas ordinary segments of this worker (handoff.ts). `term` is the master leader's
   * fencing term: an older one than already seen is refused (a deposed leader's command).
   */
  async promoteReplicas(segmentIds: readonly string[], term: number): Promise<string[]> {
    if (term < this.maxTermSeen)
      throw new StrataError('precondition_failed', `Promotion term ${term} is older than term ${this.maxTermSeen}.`);
    this.maxTermSeen = term;
    const promoted = await this.withConnection((conn) => promoteReplicas(this.ctx, conn, segmentIds));
    if (promoted.length > 0) this.dirtySinceCheckpoint = true;
    return promoted;
  }

  /** Where copies of this worker's own segments are (segment id → worker ids). */
  async replicaHolders(): Promise<Map<string, string[]>> {
    return this.withConnection((conn) => selectReplicas(conn));
  }

  /** Records (`held`) or forgets that `workerId` keeps a copy of one of this worker's segments. */
  async noteReplica(segmentId: string, workerId: string, held: boolean): Promise<void> {
    await this.withConnection((conn) => (held ? insertReplica : deleteReplica)(conn, segmentId, workerId));
  }

  /** Called after every seal and compaction with the segments it listed (the replicator listens). */
  onSegmentsListed(listener: () => void): void {
    this.segmentListeners.push(listener);
  }

  private async withConnection<T>(work: (conn: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    const conn = await this.ctx.instance.connect();
    try {
      return await work(conn);
    } finally {
      conn.closeSync();
    }
  }

  /** Seals every table with hot rows now (tests, and before a planned shutdown if wanted). */
  async sealAll(): Promise<SegmentInfo[]> {
    const out: SegmentInfo[] = [];
    for (const t of this.ctx.tables.all()) {
      const s = await this.seal(t);
      if (s) out.push(s);
    }
    return out;
  }

  async checkpoint(): Promise<void> {
    await this.writeGate.with('writes', () => this.maintenanceConn.run('CHECKPOINT'));
    this.lastCheckpoint = Date.now();
    this.dirtySinceCheckpoint = false;
  }

  /**
   * Puts a retention policy in force: scans stop returning older rows at once; maintenance deletes
   * them (a pass runs at its next turn when the policy changed).
   */
  setRetention(rules: RetentionRules): void {
    if (this.ctx.retention.sameAs(rules)) return;
    this.ctx.retention = rules;
    this.lastExpiry = 0;
  }

  /** Deletes rows past retention in every table now; returns what went. */
  async expireNow(nowMs = Date.now()): Promise<Deleted> {
    const total: Deleted = { rows: 0, segments: 0, bytes: 0 };
    for (const table of this.ctx.tables.all()) {
      if (this.closed) break;
      const cutoffUs = this.ctx.retention.cutoffUs(table.accountId, table.schema, nowMs);
      if (cutoffUs === undefined) continue;
      const gone = await this.deleting(table, (conn) => expireTable(this.ctx, conn, table, cutoffUs));
      if (gone.rows > 0 || gone.segments > 0) {
        this.ctx.log.info({ accountId: table.accountId, schema: table.schema, ...gone }, 'rows past retention deleted');
        workerMetrics().expiredRows.inc(gone.rows);
      }
      total.rows += gone.rows;
      total.segments += gone.segments;
      total.bytes += gone.bytes;
    }
    this.lastExpiry = Date.now();
    await this.refreshUsageGauges();
    return total;
  }

  /** Per account and schema rows and bytes as gauges (from the catalog and the hot-row counts). */
  private async refreshUsageGauges(): Promise<void> {
    const m = workerMetrics();
    m.storedRows.reset();
    m.storedBytes.reset();
    const segments = (await this.listSegments()).filter((s) => s.handoff !== 'replica' && s.handoff !== 'incoming');
    for (const table of this.ctx.tables.all()) {
      const own = segments.filter((s) => s.tableId === table.tableId);
      const labels = { account: table.accountId, schema: table.schema };
      m.storedRows.set(labels, own.reduce((n, s) => n + s.rowCount, 0) + (this.hot.get(table.tableId)?.rows ?? 0));
      m.storedBytes.set(
        labels,
        own.reduce((n, s) => n + s.byteSize, 0),
      );
    }
  }

  /** Deletes a schema of an account (every row and segment); a later append creates it afresh. */
  async dropSchema(accountId: string, schema: string): Promise<Deleted> {
    const table = this.ctx.tables.get(accountId, schema);
    if (!table) return { rows: 0, segments: 0, bytes: 0 };
    const gone = await this.deleting(table, (conn) => dropTable(this.ctx, conn, table));
    this.ctx.log.info({ accountId, schema, ...gone }, 'schema dropped');
    return gone;
  }

  /**
   * One step of a purge job (purge.ts): matching hot rows, then up to `maxSegments` segments.
   * Segments found clean are remembered per job in memory (bounded), so a job's steps move on.
   */
  async purgeStep(
    jobId: string,
    accountId: string,
    schema: string,
    statement: FragmentStatement,
    maxSegments: number,
  ): Promise<PurgeProgress> {
    const table = this.ctx.tables.get(accountId, schema);
    if (!table) return { rowsExamined: 0, rowsRemoved: 0, segmentsDone: 0, segmentsTotal: 0, finished: true };
    let clean = this.purgeClean.get(jobId);
    if (!clean) {
      clean = new Set();
      this.purgeClean.set(jobId, clean);
      if (this.purgeClean.size > 100) this.purgeClean.delete(this.purgeClean.keys().next().value as string);
    }
    const releaseCompaction = await this.compactionLocks.lock(table.tableId);
    const conn = await this.ctx.instance.connect();
    try {
      const progress = await purgeStep(this.ctx, conn, table, statement, this.checker, clean, Math.max(1, maxSegments), (work) =>
        this.writeGate.with('writes', work),
      );
      const r = (
        await conn.runAndReadAll(`SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`)
      ).getRowObjectsJS()[0] as { n: bigint };
      const h = this.hot.get(table.tableId);
      if (r.n === 0n) this.hot.delete(table.tableId);
      else if (h) h.rows = Number(r.n);
      this.updateHotGauge();
      this.dirtySinceCheckpoint = true;
      if (progress.finished) this.purgeClean.delete(jobId);
      if (progress.rowsRemoved > 0) this.ctx.log.info({ jobId, accountId, schema, ...progress }, 'purge step removed rows');
      return progress;
    } finally {
      conn.closeSync();
      releaseCompaction();
    }
  }

  /** What this worker holds of each schema of an account (usage figures). */
  async describe(accountId: string): Promise<SchemaUsage[]> {
    // What queries read here: copies kept for another worker (replicas, incoming handoffs) are
    // counted where they are read, so a sum over workers counts each row once.
    const segments = (await this.listSegments(accountId)).filter((s) => s.handoff !== 'replica' && s.handoff !== 'incoming');
    const conn = await this.ctx.instance.connect();
    try {
      const out: SchemaUsage[] = [];
      for (const table of this.ctx.tables.ofAccount(accountId)) {
        const hot = (
          await conn.runAndReadAll(
            `SELECT count(*) AS n, epoch_us(min("timestamp")) AS lo, epoch_us(max("timestamp")) AS hi FROM ${quoteIdentifier(table.hotTable)}`,
          )
        ).getRowObjectsJS()[0] as { n: bigint; lo: bigint | null; hi: bigint | null };
        const own = segments.filter((s) => s.tableId === table.tableId);
        const los = [...own.map((s) => s.minTsUs), hot.lo === null ? null : Number(hot.lo)].filter(
          (v): v is number => v !== null,
        );
        const his = [...own.map((s) => s.maxTsUs), hot.hi === null ? null : Number(hot.hi)].filter(
          (v): v is number => v !== null,
        );
        out.push({
          schema: table.schema,
          hotRows: Number(hot.n),
          segmentRows: own.reduce((n, s) => n + s.rowCount, 0),
          segments: own.length,
          segmentBytes: own.reduce((n, s) => n + s.byteSize, 0),
          minTimestampUs: los.length ? Math.min(...los) : 0,
          maxTimestampUs: his.length ? Math.max(...his) : 0,
        });
      }
      return out.sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0));
    } finally {
      conn.closeSync();
    }
  }

  /**
   * Runs a deletion of one table with no seal, compaction or group commit of it in between, on a
   * connection of its own, then recounts the table's hot rows.
   */
  private async deleting(table: TableInfo, work: (conn: DuckDBConnection) => Promise<Deleted>): Promise<Deleted> {
    const releaseCompaction = await this.compactionLocks.lock(table.tableId);
    const conn = await this.ctx.instance.connect();
    try {
      const gone = await this.writeGate.with('writes', () => work(conn));
      if (this.ctx.tables.getById(table.tableId)) {
        const r = (
          await conn.runAndReadAll(`SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`)
        ).getRowObjectsJS()[0] as { n: bigint };
        const h = this.hot.get(table.tableId);
        if (r.n === 0n) this.hot.delete(table.tableId);
        else if (h) h.rows = Number(r.n);
      } else {
        this.hot.delete(table.tableId);
      }
      this.updateHotGauge();
      this.dirtySinceCheckpoint = true;
      return gone;
    } finally {
      conn.closeSync();
      releaseCompaction();
    }
  }

  /** Approximate count of unsealed rows per schema of an account (for tests and metrics). */
  hotRows(accountId: string, schema: string): number {
    const t = this.ctx.tables.get(accountId, schema);
    return t ? (this.hot.get(t.tableId)?.rows ?? 0) : 0;
  }

  /** Files replaced by compaction still waiting for scans to finish. */
  get pendingFileDeletions(): number {
    return this.ctx.reclaimer.pendingCount;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.maintenanceTimer) clearTimeout(this.maintenanceTimer);
    await this.maintenanceRun;
    await this.writer.close();
    for (const s of [...this.openSnapshots]) await s.release();
    // Serialised behind any running compaction or seal of each table.
    for (const t of this.ctx.tables.all()) (await this.compactionLocks.lock(t.tableId))();
    try {
      await this.maintenanceConn.run('CHECKPOINT');
    } catch (err) {
      this.ctx.log.warn(errorFields(err), 'final checkpoint failed; the write-ahead log will be replayed at start-up');
    }
    this.writerConn.closeSync();
    this.maintenanceConn.closeSync();
    this.ctx.instance.closeSync();
    openDatabases.delete(this.ctx.paths.database);
  }

  private async seal(table: TableInfo): Promise<SegmentInfo | undefined> {
    const segment = await this.writeGate.with('writes', () => sealTable(this.ctx, this.maintenanceConn, table));
    const r = (
      await this.maintenanceConn.runAndReadAll(`SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`)
    ).getRowObjectsJS()[0] as {
      n: bigint;
    };
    if (r.n > 0n) this.hot.set(table.tableId, { rows: Number(r.n), since: Date.now() });
    else this.hot.delete(table.tableId);
    this.updateHotGauge();
    if (segment) {
      for (const l of this.segmentListeners) l();
      workerMetrics().sealedSegments.inc();
      this.dirtySinceCheckpoint = true;
      this.ctx.log.debug({ accountId: table.accountId, schema: table.schema, rows: segment.rowCount }, 'hot rows sealed');
    }
    return segment;
  }

  private noteCommitted(rowsByTable: Map<number, number>): void {
    const now = Date.now();
    for (const [tableId, rows] of rowsByTable) {
      const h = this.hot.get(tableId);
      if (h) h.rows += rows;
      else this.hot.set(tableId, { rows, since: now });
    }
    this.dirtySinceCheckpoint = true;
    this.updateHotGauge();
  }

  private updateHotGauge(): void {
    let total = 0;
    for (const h of this.hot.values()) total += h.rows;
    workerMetrics().hotRows.set(total);
  }

  private scheduleMaintenance(): void {
    if (this.closed) return;
    this.maintenanceTimer = setTimeout(() => {
      this.maintenanceRun = this.maintain()
        .catch((err) => this.ctx.log.error(errorFields(err), 'storage maintenance failed'))
        .finally(() => this.scheduleMaintenance());
    }, this.tuning.maintenanceIntervalMs);
    this.maintenanceTimer.unref();
  }

  /** Seals what is due, checkpoints, prunes idempotency keys. */
  private async maintain(): Promise<void> {
    const now = Date.now();
    let sealed = false;
    for (const [tableId, h] of [...this.hot]) {
      if (this.closed) return;
      if (h.rows < this.tuning.sealRows && now - h.since < this.tuning.sealAgeMs) continue;
      const table = this.ctx.tables.getById(tableId);
      if (table && (await this.seal(table))) sealed = true;
    }
    if (this.dirtySinceCheckpoint && (sealed || Date.now() - this.lastCheckpoint >= this.tuning.checkpointIntervalMs))
      await this.checkpoint();
    if (Date.now() - this.lastExpiry >= this.tuning.retentionIntervalMs) await this.expireNow();
    if (Date.now() - this.lastPrune >= Math.min(60_000, this.tuning.idempotencyRetentionMs)) {
      this.lastPrune = Date.now();
      await pruneIdempotencyKeys(this.maintenanceConn, this.tuning.idempotencyRetentionMs, this.tuning.idempotencyMaxKeys);
    }
  }
}
