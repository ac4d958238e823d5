import { mkdir, readdir, rm, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import {
  errorFields,
  type FragmentChecker,
  type FragmentStatement,
  type Logger,
  quoteIdentifier,
  StrataError,
} from '@strata/common';
import { workerMetrics } from '../worker-metrics.js';
import { type AccountInstancePolicy, openAccountInstance } from './account-instance.js';
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
import type { RetentionRules } from './retention-rules.js';
import { openSnapshot, type ScanRange, type ScanSnapshot, type SegmentView } from './scan.js';
import { ScanConnections } from './scan-connections.js';
import { sealTable } from './sealer.js';
import { attachSegmentFiles, detachSegmentFile } from './segment-format.js';
import { SegmentReclaimer } from './segment-reclaimer.js';
import type { StorageContext } from './storage-context.js';
import type { AccountPaths } from './storage-layout.js';

/** The knobs of StorageTuning an account store uses (see storage-engine.ts). */
export interface AccountStoreTuning {
  sealRows: number;
  sealAgeMs: number;
  checkpointIntervalMs: number;
  idempotencyRetentionMs: number;
  idempotencyMaxKeys: number;
  maxGroupRows: number;
  /** An account with no write or query for this long goes back to one DuckDB thread. */
  idleThreadsMs: number;
}

export interface AccountStoreOptions {
  accountId: string;
  paths: AccountPaths;
  policy: AccountInstancePolicy;
  tuning: AccountStoreTuning;
  guard: FreeSpaceGuard;
  retention: RetentionRules;
  checker: FragmentChecker;
  log: Logger;
  /** Called whenever the account's count of unsealed rows changed (the worker's gauge). */
  onHotChanged: () => void;
  /** Called after every seal and compaction that listed a segment (the replicator listens). */
  onSegmentsListed?: () => void;
}

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

/**
 * Whether usage counts a segment here: copies kept for another worker (replicas, incoming
 * handoffs) are counted where queries read them, so a sum over workers counts each row once.
 */
function countedHere(s: SegmentInfo): boolean {
  return s.handoff !== 'replica' && s.handoff !== 'incoming';
}

/**
 * Everything one account has on this worker, on a DuckDB instance of its own: its hot tables,
 * catalog and idempotency keys in `<account>/hot.duckdb`, its segments under `<account>/segments/`
 * (storage-layout.ts). The instance is confined to that directory (account-instance.ts), so a
 * query fragment run on it — checked or not — can reach no other account's rows, files or names.
 *
 * One writer (group commit), seals, checkpoints, retention and compaction work per account exactly
 * as they did on the worker's single instance before; the StorageEngine routes each call to the
 * account's store and runs the maintenance of all of them.
 */
export class AccountStore {
  readonly accountId: string;
  private readonly writer: HotWriter;
  readonly compactionLocks = new KeyedMutex<number>();
  /** Between group commits only: seals and checkpoints (see HotWriterOptions.gate). */
  private readonly writeGate = new KeyedMutex<'writes'>();
  private readonly hot = new Map<number, { rows: number; since: number }>();
  private readonly openSnapshots = new Set<ScanSnapshot>();
  private lastCheckpoint = Date.now();
  private dirtySinceCheckpoint = false;
  private lastPrune = 0;
  private readonly purgeClean = new Map<string, Set<string>>();
  /** DuckDB `threads` in force on the instance (instance-wide; it opens with one). */
  private appliedThreads = 1;
  /** …and what the account gets while active: the budget, or the executor settings' value. */
  private activeThreads: number;
  private lastActive = Date.now();
  /** SET threads statements, one at a time, on a connection of their own. */
  private threadsChain: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    private readonly ctx: StorageContext,
    private readonly writerConn: DuckDBConnection,
    private readonly maintenanceConn: DuckDBConnection,
    private readonly tuning: AccountStoreTuning,
    private readonly checker: FragmentChecker,
    threads: number,
    private readonly onHotChanged: () => void,
    private readonly settingsConn: DuckDBConnection,
    private readonly onSegmentsListed: () => void,
  ) {
    this.accountId = ctx.accountId;
    this.activeThreads = threads;
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

  /** Opens (creating when new) the account's directory and instance, and recovers what a previous run left. */
  static async open(o: AccountStoreOptions): Promise<AccountStore> {
    await mkdir(o.paths.segments, { recursive: true });
    // Whatever is in tmp belongs to a previous run: unfinished batch files and spill files.
    await rm(o.paths.tmp, { recursive: true, force: true });
    await mkdir(path.join(o.paths.tmp, 'spill'), { recursive: true });
    const { instance, writerConn } = await openAccountInstance(o.paths, o.policy);
    try {
      const maintenanceConn = await instance.connect();
      const settingsConn = await instance.connect();
      for (const ddl of CATALOG_DDL) await writerConn.run(ddl);
      const tables = await TableDirectory.load(writerConn);
      const ctx: StorageContext = {
        accountId: o.accountId,
        instance,
        scanConnections: new ScanConnections(instance),
        tables,
        tableLocks: new KeyedMutex<number>(),
        reclaimer: new SegmentReclaimer(
          (file, err) => o.log.warn({ file, ...errorFields(err) }, 'could not delete a replaced segment file'),
          async (file) => {
            const conn = await instance.connect();
            try {
              await detachSegmentFile(conn, file);
            } finally {
              conn.closeSync();
            }
          },
        ),
        catalogChanges: new CatalogChanges(),
        guard: o.guard,
        retention: o.retention,
        paths: o.paths,
        log: o.log,
      };
      const store = new AccountStore(
        ctx,
        writerConn,
        maintenanceConn,
        o.tuning,
        o.checker,
        o.policy.threads,
        o.onHotChanged,
        settingsConn,
        o.onSegmentsListed ?? (() => undefined),
      );
      await store.recover();
      return store;
    } catch (err) {
      instance.closeSync();
      throw err;
    }
  }

  /** Counts hot rows left by the previous run and deletes segment files the catalog does not list. */
  private async recover(): Promise<void> {
    const now = Date.now();
    for (const t of this.ctx.tables.all()) {
      const n = await this.countHot(this.writerConn, t);
      if (n > 0) this.hot.set(t.tableId, { rows: n, since: now });
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
    // Every listed 'duckdb' segment is attached before any scan can list it (segment-format.ts).
    await attachSegmentFiles(this.writerConn, [...listed]);
    this.ctx.log.debug(
      { accountId: this.accountId, tables: this.ctx.tables.all().length, segments: listed.size, orphanFilesRemoved: removed },
      'account storage opened',
    );
  }

  private async countHot(conn: DuckDBConnection, table: TableInfo): Promise<number> {
    const r = (await conn.runAndReadAll(`SELECT count(*) AS n FROM ${quoteIdentifier(table.hotTable)}`)).getRowObjectsJS()[0] as {
      n: bigint;
    };
    return Number(r.n);
  }

  /** Sets the hot-row count of a table from its table (after a seal, a purge, a deletion). */
  private async recount(conn: DuckDBConnection, table: TableInfo): Promise<void> {
    const n = this.ctx.tables.getById(table.tableId) ? await this.countHot(conn, table) : 0;
    const h = this.hot.get(table.tableId);
    if (n === 0) this.hot.delete(table.tableId);
    else if (h) h.rows = n;
    else this.hot.set(table.tableId, { rows: n, since: Date.now() });
    this.onHotChanged();
  }

  get paths(): AccountPaths {
    return this.ctx.paths;
  }

  /** Unsealed rows of all tables of the account (for the worker's gauge). */
  get hotRowTotal(): number {
    let total = 0;
    for (const h of this.hot.values()) total += h.rows;
    return total;
  }

  /** Stores an append durably; resolves once committed (see HotWriter). */
  async append(input: AppendInput): Promise<AppendResult> {
    await this.activate();
    return this.writer.submit(input);
  }

  /** See HotWriter.fenceKey. */
  fenceKey(request: Parameters<HotWriter['fenceKey']>[0]): Promise<{ stored: boolean }> {
    return this.writer.fenceKey(request);
  }

  /**
   * Marks the account active and gives its instance its threads (`threads`: a new value from the
   * executor settings). Cheap when nothing changes: no statement runs.
   */
  private activate(threads?: number): Promise<void> {
    this.lastActive = Date.now();
    if (threads !== undefined) this.activeThreads = threads;
    return this.setThreads(this.activeThreads);
  }

  private setThreads(threads: number): Promise<void> {
    if (threads === this.appliedThreads) return this.threadsChain;
    const next = this.threadsChain.then(async () => {
      if (threads === this.appliedThreads || this.closed) return;
      await this.settingsConn.run(`SET threads = ${Math.trunc(threads)}`);
      this.appliedThreads = threads;
    });
    this.threadsChain = next.catch(() => undefined);
    return next;
  }

  /** DuckDB threads in force on the account's instance (tests, the instance-cost bench). */
  get threads(): number {
    return this.appliedThreads;
  }

  /** `view`: which handed-off segments to read here (scan.ts, `readsSegment`). */
  async openSnapshot(requests: readonly ({ schema: string } & ScanRange)[], view?: SegmentView): Promise<ScanSnapshot> {
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    const snapshot = await openSnapshot(this.ctx, this.accountId, requests, view);
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

  /**
   * Before a query: the account is active, with `threads` (the executor's live value; instance-wide
   * in DuckDB, they bound the row groups read at once: Rowgroup.MaxConcurrentRead).
   */
  applyThreads(threads: number): Promise<void> {
    return this.activate(threads);
  }

  tables(): TableInfo[] {
    return this.ctx.tables.all();
  }

  table(schema: string): TableInfo | undefined {
    return this.ctx.tables.get(this.accountId, schema);
  }

  async listSegments(): Promise<SegmentInfo[]> {
    const conn = await this.ctx.instance.connect();
    try {
      return await selectSegments(conn);
    } finally {
      conn.closeSync();
    }
  }

  async compact(request: CompactRequest): Promise<SegmentInfo> {
    this.dirtySinceCheckpoint = true;
    const merged = await compactSegments(this.ctx, this.compactionLocks, request);
    this.onSegmentsListed();
    return merged;
  }

  // ── Handoffs and replicas (handoff.ts, docs/decisions/0016-drain-and-replication.md) ─────────
  // Each works on this account's catalog and segments directory only: a segment handed to this
  // worker lands in its account's directory, listed in its account's catalog.

  /** Whether the account's catalog lists the segment (in any handoff state). */
  async lists(segmentId: string): Promise<boolean> {
    return (await this.withConnection((conn) => findSegment(conn, this.accountId, segmentId))) !== undefined;
  }

  /** A listed segment, its file and SHA-256, for a copy to another worker. */
  async segmentForCopy(segmentId: string): Promise<{ segment: SegmentInfo; file: string; sha256: string }> {
    const { segment, file } = await this.listedSegment(segmentId);
    return { segment, file, sha256: await sha256OfFile(file) };
  }

  /** A listed segment and its file (to stream it to another worker); not_found when not listed. */
  async listedSegment(segmentId: string): Promise<{ segment: SegmentInfo; file: string }> {
    const segment = await this.withConnection((conn) => findSegment(conn, this.accountId, segmentId));
    if (!segment) throw new StrataError('not_found', `Segment ${segmentId} is not listed on this worker.`);
    return { segment, file: path.join(this.ctx.paths.segments, segment.fileName) };
  }

  async markOutgoing(segmentIds: readonly string[], toWorkerId: string): Promise<void> {
    await this.withConnection((conn) => markOutgoing(this.ctx, conn, segmentIds, toWorkerId));
  }

  async adoptSegment(
    desc: SegmentDescriptor,
    sourceWorkerId: string,
    chunks: AsyncIterable<Uint8Array>,
    as: 'incoming' | 'replica',
  ): Promise<boolean> {
    const adopted = await this.withConnection((conn) =>
      adoptSegment(this.ctx, conn, this.writeGate, desc, sourceWorkerId, chunks, as),
    );
    if (adopted) this.dirtySinceCheckpoint = true;
    return adopted;
  }

  async settleIncoming(segmentId: string): Promise<void> {
    await this.withConnection((conn) => settleIncoming(this.ctx, conn, segmentId));
    this.dirtySinceCheckpoint = true;
  }

  async releaseOutgoing(segmentIds: readonly string[]): Promise<SegmentInfo[]> {
    const gone = await this.withConnection((conn) => releaseOutgoing(this.ctx, conn, segmentIds));
    this.dirtySinceCheckpoint = true;
    return gone;
  }

  async dropReplicas(segmentIds: readonly string[], primary?: string): Promise<SegmentInfo[]> {
    const gone = await this.withConnection((conn) => dropReplicas(this.ctx, conn, segmentIds, primary));
    if (gone.length > 0) this.dirtySinceCheckpoint = true;
    return gone;
  }

  async promoteReplicas(segmentIds: readonly string[]): Promise<string[]> {
    const promoted = await this.withConnection((conn) => promoteReplicas(this.ctx, conn, segmentIds));
    if (promoted.length > 0) this.dirtySinceCheckpoint = true;
    return promoted;
  }

  /** Where copies of this account's own segments are (segment id → worker ids). */
  replicaHolders(): Promise<Map<string, string[]>> {
    return this.withConnection((conn) => selectReplicas(conn));
  }

  async noteReplica(segmentId: string, workerId: string, held: boolean): Promise<void> {
    await this.withConnection((conn) => (held ? insertReplica : deleteReplica)(conn, segmentId, workerId));
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

  setRetention(rules: RetentionRules): void {
    this.ctx.retention = rules;
  }

  /** Deletes rows past retention in every table of the account now; returns what went. */
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
    return total;
  }

  /** Per schema rows and bytes as gauges (from the catalog and the hot-row counts). */
  async refreshUsageGauges(): Promise<void> {
    const m = workerMetrics();
    const segments = (await this.listSegments()).filter(countedHere);
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

  async dropSchema(schema: string): Promise<Deleted> {
    const table = this.table(schema);
    if (!table) return { rows: 0, segments: 0, bytes: 0 };
    const gone = await this.deleting(table, (conn) => dropTable(this.ctx, conn, table));
    this.ctx.log.info({ accountId: this.accountId, schema, ...gone }, 'schema dropped');
    return gone;
  }

  /** See StorageEngine.purgeStep. */
  async purgeStep(jobId: string, schema: string, statement: FragmentStatement, maxSegments: number): Promise<PurgeProgress> {
    const table = this.table(schema);
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
      await this.recount(conn, table);
      this.dirtySinceCheckpoint = true;
      if (progress.finished) this.purgeClean.delete(jobId);
      if (progress.rowsRemoved > 0)
        this.ctx.log.info({ jobId, accountId: this.accountId, schema, ...progress }, 'purge step removed rows');
      return progress;
    } finally {
      conn.closeSync();
      releaseCompaction();
    }
  }

  /** What this worker holds of each schema of the account (usage figures). */
  async describe(): Promise<SchemaUsage[]> {
    const segments = (await this.listSegments()).filter(countedHere);
    const conn = await this.ctx.instance.connect();
    try {
      const out: SchemaUsage[] = [];
      for (const table of this.ctx.tables.all()) {
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
      await this.recount(conn, table);
      this.dirtySinceCheckpoint = true;
      return gone;
    } finally {
      conn.closeSync();
      releaseCompaction();
    }
  }

  hotRows(schema: string): number {
    const t = this.table(schema);
    return t ? (this.hot.get(t.tableId)?.rows ?? 0) : 0;
  }

  get pendingFileDeletions(): number {
    return this.ctx.reclaimer.pendingCount;
  }

  /** Stops the writer and scans, checkpoints and closes the instance. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writer.close();
    for (const s of [...this.openSnapshots]) await s.release();
    // Serialised behind any running compaction or seal of each table.
    for (const t of this.ctx.tables.all()) (await this.compactionLocks.lock(t.tableId))();
    try {
      await this.maintenanceConn.run('CHECKPOINT');
    } catch (err) {
      this.ctx.log.warn(
        { accountId: this.accountId, ...errorFields(err) },
        'final checkpoint failed; the write-ahead log will be replayed at start-up',
      );
    }
    await this.threadsChain;
    this.ctx.scanConnections.close();
    this.writerConn.closeSync();
    this.maintenanceConn.closeSync();
    this.settingsConn.closeSync();
    this.ctx.instance.closeSync();
  }

  private async seal(table: TableInfo): Promise<SegmentInfo | undefined> {
    const segment = await this.writeGate.with('writes', () => sealTable(this.ctx, this.maintenanceConn, table));
    const n = await this.countHot(this.maintenanceConn, table);
    if (n > 0) this.hot.set(table.tableId, { rows: n, since: Date.now() });
    else this.hot.delete(table.tableId);
    this.onHotChanged();
    if (segment) {
      this.onSegmentsListed();
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
    this.onHotChanged();
  }

  /** One maintenance turn of the account: seals what is due, checkpoints, prunes keys (the engine runs expiry). */
  async maintain(isClosing: () => boolean): Promise<void> {
    const now = Date.now();
    let sealed = false;
    for (const [tableId, h] of [...this.hot]) {
      if (this.closed || isClosing()) return;
      if (h.rows < this.tuning.sealRows && now - h.since < this.tuning.sealAgeMs) continue;
      const table = this.ctx.tables.getById(tableId);
      if (table && (await this.seal(table))) sealed = true;
    }
    if (this.dirtySinceCheckpoint && (sealed || Date.now() - this.lastCheckpoint >= this.tuning.checkpointIntervalMs))
      await this.checkpoint();
    // An idle account keeps no background threads (account-instance.ts).
    if (this.appliedThreads > 1 && Date.now() - this.lastActive >= this.tuning.idleThreadsMs) await this.setThreads(1);
    if (Date.now() - this.lastPrune >= Math.min(60_000, this.tuning.idempotencyRetentionMs)) {
      this.lastPrune = Date.now();
      await pruneIdempotencyKeys(this.maintenanceConn, this.tuning.idempotencyRetentionMs, this.tuning.idempotencyMaxKeys);
    }
  }
}
