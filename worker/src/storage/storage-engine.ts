import { readdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { ColumnTypeName } from '@strata/common';
import { confineDuckDB, errorFields, FragmentChecker, type FragmentStatement, type Logger, StrataError } from '@strata/common';
import { workerMetrics } from '../worker-metrics.js';
import { type AccountInstancePolicy, defaultAccountMemoryLimit } from './account-instance.js';
import { AccountStore, type SchemaUsage } from './account-store.js';
import type { SegmentInfo } from './catalog.js';
import type { CompactRequest } from './compactor.js';
import type { FreeSpaceGuard } from './free-space-guard.js';
import type { SegmentDescriptor } from './handoff.js';
import type { AppendInput, AppendResult } from './hot-writer.js';
import { migrateLegacyLayout } from './legacy-migration.js';
import type { Deleted } from './lifecycle.js';
import type { PurgeProgress } from './purge.js';
import { RetentionRules } from './retention-rules.js';
import type { CountedRelation, ScanRange, ScanSnapshot, SegmentView } from './scan.js';
import { isAccountId, StorageLayout } from './storage-layout.js';

export type { SchemaUsage } from './account-store.js';

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
  /** An account with no write or query for this long goes back to one DuckDB thread (account-instance.ts). */
  idleThreadsMs: number;
  /** Extra DuckDB settings of every account's instance. */
  duckdbSettings: Record<string, string>;
  /** DuckDB `memory_limit` of each account's instance (default: account-instance.ts). */
  accountMemoryLimit?: string;
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
  idleThreadsMs: 300_000,
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

export interface ScanHandle {
  connection: DuckDBConnection;
  relation: string;
  columns: { name: string; type: ColumnTypeName }[];
  /** The parts whose UNION ALL is `relation` (ScanRelation.branches). */
  branches: string[];
  /** The branches that are whole DuckDB segment files (ScanRelation.whole). */
  whole: string[];
  /** For a count of the rows: catalog row counts and the parts left to count (ScanRelation.counted). */
  counted: CountedRelation;
  release(): Promise<void>;
  /** Before running SQL on the scan: the account is active, with `threads` DuckDB threads (instance-wide). */
  applyThreads(threads: number): Promise<void>;
}

export interface SchemaDescription {
  schema: string;
  columns: { name: string; type: ColumnTypeName }[];
}

/** Data paths open in this process: one engine per data directory (DuckDB: one instance per file). */
const openDataPaths = new Set<string>();

/**
 * A worker's storage: per account, a durable DuckDB hot buffer, sealed segments (DuckDB files;
 * Parquet ones of earlier versions, segment-format.ts) and the
 * catalog, each account in a directory of its own under `backend.dataPath` and on a DuckDB
 * instance of its own, confined to that directory (storage-layout.ts, account-store.ts,
 * docs/decisions/0015-account-isolation-in-workers.md). This class routes each call to the
 * account's store, opens stores (all existing ones at start-up, new ones on an account's first
 * write), and runs the maintenance of all of them. A data directory in the older shared layout is
 * migrated before anything opens (legacy-migration.ts).
 *
 * ── API for the query engine ───────────────────────────────────────────────────────────────
 *
 * `openScan(accountId, schema, { fromMs?, toMs? })` → `ScanHandle | undefined`
 *   undefined when the schema has never been written on this worker. Otherwise:
 *   - `connection`: a DuckDB connection used by this scan only, on the account's instance (which
 *     holds nothing of other accounts). It holds an open read
 *     transaction: every query run on it sees one consistent snapshot (hot rows and segments of
 *     the same instant; no row twice, none missing, even while seals and compactions commit).
 *   - `relation`: a parenthesised SELECT, e.g. `(SELECT … UNION ALL …)`: use it in SQL as a
 *     table (`SELECT … FROM ${relation} WHERE …`). It is the UNION ALL of the hot rows and the
 *     Parquet segments whose time range overlaps [fromMs, toMs) (from inclusive, to exclusive,
 *     both optional, milliseconds since the epoch), filtered to that range on `timestamp`;
 *     Parquet row-group statistics prune by the range and by your own filters. Exact µs bounds
 *     `fromUs`/`toUs` (both inclusive) narrow the range further; segments wholly inside it are
 *     read without a time filter (scan.ts, splitByRange).
 *   - `branches`: the parts of that union (hot rows, segment groups), for a top-N run per part.
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
  private readonly stores = new Map<string, AccountStore>();
  /** Stores being opened (first write of an account): concurrent writes share the open. */
  private readonly opening = new Map<string, Promise<AccountStore>>();
  private readonly checker = new FragmentChecker();
  private retention = new RetentionRules();
  private maintenanceTimer: NodeJS.Timeout | undefined;
  private maintenanceRun: Promise<void> = Promise.resolve();
  private lastExpiry = 0;
  private maxTermSeen = 0;
  /** An empty, confined in-memory instance for snapshots of accounts with nothing here. */
  private empty: Promise<DuckDBInstance> | undefined;
  private closed = false;
  /** Why appends are refused (a drain), or undefined. */
  private writesStopped: string | undefined;
  /** Appends accepted and not yet committed or failed (what stopWrites waits for). */
  private readonly appending = new Set<Promise<AppendResult>>();
  /**
   * The highest coordinator revision at which a segment released or settled here had been handed
   * off: a query whose view is older would expect it elsewhere (handoff.ts), so its fragments are
   * refused. Worker-wide rather than per account: coarser, and a drain moves every account anyway.
   */
  private handoffFloor = 0;
  private readonly segmentListeners: (() => void)[] = [];

  private constructor(
    /** Every path of the worker's storage (storage-layout.ts). */
    readonly layout: StorageLayout,
    private readonly options: StorageEngineOptions,
    tuning: StorageTuning,
    private readonly policy: AccountInstancePolicy,
  ) {
    this.tuning = tuning;
  }

  static async open(options: StorageEngineOptions): Promise<StorageEngine> {
    const tuning = { ...DEFAULT_STORAGE_TUNING, ...options.tuning };
    const layout = new StorageLayout(options.dataPath);
    if (openDataPaths.has(layout.data))
      throw new Error(`storage at ${layout.data} is already open in this process (one DuckDB instance per file)`);
    openDataPaths.add(layout.data);
    const policy: AccountInstancePolicy = {
      threads: Math.max(1, (options.cores ?? availableParallelism()) - 1),
      memoryLimit: tuning.accountMemoryLimit ?? defaultAccountMemoryLimit(),
      settings: tuning.duckdbSettings,
    };
    const engine = new StorageEngine(layout, options, tuning, policy);
    try {
      await migrateLegacyLayout(layout, options.log);
      for (const name of (await readdir(layout.accounts)).sort()) {
        if (isAccountId(name)) await engine.storeFor(name, true);
      }
      engine.updateHotGauge();
      options.log.info({ accounts: engine.stores.size, memoryLimitPerAccount: policy.memoryLimit }, 'storage opened');
      engine.scheduleMaintenance();
      return engine;
    } catch (err) {
      await engine.close().catch(() => undefined);
      throw err;
    }
  }

  /**
   * The account's store; with `create`, opened (and its directory made) when it is not open yet.
   * Without, undefined for an account that has nothing here: reads never create directories.
   */
  private async storeFor(accountId: string, create: true): Promise<AccountStore>;
  private async storeFor(accountId: string, create: false): Promise<AccountStore | undefined>;
  private async storeFor(accountId: string, create: boolean): Promise<AccountStore | undefined> {
    const open = this.stores.get(accountId);
    if (open || !create) return open;
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    let pending = this.opening.get(accountId);
    if (!pending) {
      pending = AccountStore.open({
        accountId,
        paths: this.layout.account(accountId),
        policy: this.policy,
        tuning: this.tuning,
        guard: this.options.guard,
        retention: this.retention,
        checker: this.checker,
        log: this.options.log,
        onHotChanged: () => this.updateHotGauge(),
        onSegmentsListed: () => {
          for (const l of this.segmentListeners) l();
        },
      })
        .then((store) => {
          this.stores.set(accountId, store);
          return store;
        })
        .finally(() => this.opening.delete(accountId));
      this.opening.set(accountId, pending);
    }
    return pending;
  }

  /** The file of a listed segment. */
  segmentPath(segment: Pick<SegmentInfo, 'accountId' | 'fileName'>): string {
    return this.layout.segmentFile(segment.accountId, segment.fileName);
  }

  /** Free bytes on the data path at the free-space guard's last check. */
  get freeBytes(): number {
    return this.options.guard.freeBytes;
  }

  /** Stores an append durably; resolves once committed (see HotWriter). */
  async append(input: AppendInput): Promise<AppendResult> {
    const m = workerMetrics();
    if (this.writesStopped !== undefined) {
      m.refusedAppends.inc({ reason: 'draining' });
      throw new StrataError('unavailable', this.writesStopped, { retryAfterSeconds: 1 });
    }
    try {
      this.options.guard.assertWritable();
    } catch (err) {
      m.refusedAppends.inc({ reason: 'insufficient_storage' });
      throw err;
    }
    if (!isAccountId(input.accountId)) throw new StrataError('invalid', 'Account id must be a lower-case GUID.');
    const started = process.hrtime.bigint();
    // Tracked from here, past the awaits before the account's writer queues it: stopWrites waits
    // for every append that got by its check, whichever account store it is on its way to.
    const work = (async () => {
      const store = await this.storeFor(input.accountId, true);
      this.options.guard.noteWritten(input.parts.reduce((n, p) => n + p.rows.byteLength, 0));
      return store.append(input);
    })();
    this.appending.add(work);
    const result = await work.finally(() => this.appending.delete(work));
    m.appendSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    if (result.duplicate) m.duplicateAppends.inc();
    else m.appendedRows.inc(result.rowsStored);
    return result;
  }

  /**
   * Whether an idempotency key is stored for the account here, fencing it when it is not
   * (idempotency-keys.ts `fenceKey`). An account with nothing here has stored no key: the answer is
   * `false` and no directory is made (a fence is only needed where appends of the account run).
   * Answered also while writes are stopped (drain) or space is short: a worker that takes no writes
   * may still hold the key.
   */
  async fenceKey(request: Parameters<AccountStore['fenceKey']>[0]): Promise<{ stored: boolean }> {
    if (!isAccountId(request.accountId)) throw new StrataError('invalid', 'Account id must be a lower-case GUID.');
    const store = this.stores.get(request.accountId) ?? (await this.opening.get(request.accountId));
    if (!store) {
      if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
      return { stored: false };
    }
    return store.fenceKey(request);
  }

  /** See the class comment; `view` as in openSnapshot. */
  async openScan(
    accountId: string,
    schema: string,
    range: ScanRange = {},
    view?: SegmentView & { revision: number },
  ): Promise<ScanHandle | undefined> {
    const store = await this.storeFor(accountId, false);
    if (!store) {
      if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
      return undefined;
    }
    this.checkView(view);
    const snapshot = await store.openSnapshot([{ schema, ...range }], view);
    const relation = snapshot.relations[0];
    if (!relation) {
      await snapshot.release();
      return undefined;
    }
    return {
      connection: snapshot.connection,
      relation: relation.relation,
      columns: relation.columns,
      branches: relation.branches,
      whole: relation.whole,
      counted: relation.counted,
      release: snapshot.release,
      applyThreads: (threads) => store.applyThreads(threads),
    };
  }

  /**
   * See the class comment. `view` comes from the query's account view: which handed-off segments
   * to read here (scan.ts, `readsSegment`), and the coordinator revision it was read at (a view
   * older than a handoff whose segment this worker already released is refused: answering would
   * leave the segment out).
   */
  async openSnapshot(
    accountId: string,
    requests: readonly ({ schema: string } & ScanRange)[],
    view?: SegmentView & { revision: number },
  ): Promise<ScanSnapshot> {
    if (this.closed) throw new StrataError('unavailable', 'The worker is shutting down.', { retryAfterSeconds: 1 });
    this.checkView(view);
    const store = await this.storeFor(accountId, false);
    if (store) return store.openSnapshot(requests, view);
    // Nothing of this account here: an empty snapshot, on an instance that holds nothing either.
    const connection = await (await this.emptyInstance()).connect();
    return { connection, relations: [], release: async () => connection.closeSync() };
  }

  private checkView(view: { revision: number } | undefined): void {
    if (view && view.revision > 0 && view.revision < this.handoffFloor)
      throw new StrataError('unavailable', 'Data moved between workers while the query ran; retry the query.', {
        retryAfterSeconds: 1,
      });
  }

  private emptyInstance(): Promise<DuckDBInstance> {
    this.empty ??= (async () => {
      const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
      const conn = await instance.connect();
      await confineDuckDB(conn, { allowedDirectories: [] });
      conn.closeSync();
      return instance;
    })();
    return this.empty;
  }

  /** Every account this worker holds a table of (hot rows or segments). */
  listAccounts(): string[] {
    return [...this.stores.values()]
      .filter((s) => s.tables().length > 0)
      .map((s) => s.accountId)
      .sort();
  }

  /** See the class comment. */
  listSchemas(accountId: string): SchemaDescription[] {
    const store = this.stores.get(accountId);
    if (!store) return [];
    return store
      .tables()
      .map((t) => ({ schema: t.schema, columns: t.columns.map((c) => ({ ...c })) }))
      .sort((a, b) => (a.schema < b.schema ? -1 : a.schema > b.schema ? 1 : 0));
  }

  /** Listed segments of one account, or of every account (by time, then id). */
  async listSegments(accountId?: string): Promise<SegmentInfo[]> {
    if (accountId !== undefined) return (await this.stores.get(accountId)?.listSegments()) ?? [];
    const all: SegmentInfo[] = [];
    for (const store of [...this.stores.values()]) all.push(...(await store.listSegments()));
    return all.sort(
      (a, b) =>
        (a.minTsUs ?? Number.NEGATIVE_INFINITY) - (b.minTsUs ?? Number.NEGATIVE_INFINITY) ||
        (a.segmentId < b.segmentId ? -1 : a.segmentId > b.segmentId ? 1 : 0),
    );
  }

  /**
   * The fencing term of the newest compaction job accepted here (0 before any): a job run by
   * other tooling than the leader's scheduler (the query bench's settling, bench/query/settle.mjs)
   * carries it so that it is neither refused nor refuses the leader's next job.
   */
  get compactionTerm(): number {
    return this.maxTermSeen;
  }

  /**
   * Runs a compaction job planned by the master. `term` is the planner's fencing term: a job from
   * an older term than one already seen is refused (a deposed leader's plan).
   */
  async compact(request: CompactRequest, term = 0): Promise<SegmentInfo> {
    if (term < this.maxTermSeen)
      throw new StrataError('precondition_failed', `Compaction term ${term} is older than term ${this.maxTermSeen}.`);
    this.maxTermSeen = term;
    const store = this.stores.get(request.accountId);
    if (!store) throw new StrataError('not_found', `Schema ${request.schema} does not exist on this worker.`);
    const merged = await store.compact(request);
    workerMetrics().compactions.inc();
    return merged;
  }

  // ── Drain and replication (handoff.ts, docs/decisions/0016-drain-and-replication.md) ─────────
  // Each call goes to the store of the segment's account: a segment handed to this worker lands in
  // its account's directory and catalog, and a fragment's instance still sees only its account.

  /**
   * Refuses every append from now on with `reason` (503: a drain) and resolves once the appends
   * already accepted have committed or failed, so a seal after this leaves no hot row behind.
   */
  async stopWrites(reason: string): Promise<void> {
    this.writesStopped = reason;
    await Promise.allSettled([...this.appending]);
  }

  /** Whether appends are refused by stopWrites. */
  get writesStoppedReason(): string | undefined {
    return this.writesStopped;
  }

  /** The open store of an account that lists `segmentId`; not_found otherwise. */
  private storeListing(accountId: string, segmentId: string): AccountStore {
    const store = isAccountId(accountId) ? this.stores.get(accountId) : undefined;
    if (!store) throw new StrataError('not_found', `Segment ${segmentId} is not listed on this worker.`);
    return store;
  }

  /** A listed segment's file and SHA-256, for a copy to another worker. */
  async segmentForCopy(accountId: string, segmentId: string): Promise<{ segment: SegmentInfo; file: string; sha256: string }> {
    return this.storeListing(accountId, segmentId).segmentForCopy(segmentId);
  }

  /** The file of a listed segment (to stream it to another worker). */
  async segmentFile(accountId: string, segmentId: string): Promise<string> {
    return (await this.storeListing(accountId, segmentId).listedSegment(segmentId)).file;
  }

  /** Marks segments of an account as being handed to `toWorkerId` (handoff.ts): no rewrite touches them now. */
  async markOutgoing(accountId: string, segmentIds: readonly string[], toWorkerId: string): Promise<void> {
    const store = this.storeListing(accountId, segmentIds[0] ?? '');
    for (const id of segmentIds) await store.listedSegment(id);
    await store.markOutgoing(segmentIds, toWorkerId);
  }

  /**
   * Lists a segment copied from another worker as incoming (a drain) or as a replica, in the
   * directory and catalog of its account (opened, and made, on its first segment here).
   * False: it was here already.
   */
  async adoptSegment(
    desc: SegmentDescriptor,
    sourceWorkerId: string,
    chunks: AsyncIterable<Uint8Array>,
    as: 'incoming' | 'replica' = 'incoming',
  ): Promise<boolean> {
    if (!isAccountId(desc.accountId)) throw new StrataError('invalid', 'Account id must be a lower-case GUID.');
    const store = await this.storeFor(desc.accountId, true);
    return store.adoptSegment(desc, sourceWorkerId, chunks, as);
  }

  /**
   * Ends an incoming handoff made at coordinator revision `revision` (handoff.ts) and refuses,
   * from now on, fragments of queries whose view is older: such a query may have read the
   * segment from the giving worker already.
   */
  async settleIncoming(accountId: string, segmentId: string, revision: number): Promise<void> {
    this.handoffFloor = Math.max(this.handoffFloor, revision);
    await this.storeListing(accountId, segmentId).settleIncoming(segmentId);
  }

  /**
   * Unlists segments handed off at coordinator revision `revision` or earlier (handoff.ts; of any
   * account: each catalog unlists those of its own marked outgoing) and refuses, from now on,
   * fragments of queries whose view is older than that.
   */
  async releaseOutgoing(segmentIds: readonly string[], revision: number): Promise<SegmentInfo[]> {
    this.handoffFloor = Math.max(this.handoffFloor, revision);
    const gone: SegmentInfo[] = [];
    for (const store of [...this.stores.values()]) gone.push(...(await store.releaseOutgoing(segmentIds)));
    return gone;
  }

  /**
   * Unlists replicas of other workers' segments (handoff.ts), only `primary`'s when given. The
   * request names no account (segment ids are unique), so every account's catalog is asked.
   */
  async dropReplicas(segmentIds: readonly string[], primary?: string): Promise<SegmentInfo[]> {
    const gone: SegmentInfo[] = [];
    for (const store of [...this.stores.values()]) gone.push(...(await store.dropReplicas(segmentIds, primary)));
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
    const promoted: string[] = [];
    for (const store of [...this.stores.values()]) promoted.push(...(await store.promoteReplicas(segmentIds)));
    return promoted;
  }

  /** Where copies of this worker's own segments are (segment id → worker ids), over every account. */
  async replicaHolders(): Promise<Map<string, string[]>> {
    const all = new Map<string, string[]>();
    for (const store of [...this.stores.values()]) for (const [id, at] of await store.replicaHolders()) all.set(id, at);
    return all;
  }

  /**
   * Records (`held`) or forgets that `workerId` keeps a copy of one of this worker's segments, in
   * the catalog of the account that lists the segment (forgetting: wherever it is recorded).
   */
  async noteReplica(segmentId: string, workerId: string, held: boolean): Promise<void> {
    for (const store of [...this.stores.values()]) {
      if (!held) await store.noteReplica(segmentId, workerId, false);
      else if (await store.lists(segmentId)) return store.noteReplica(segmentId, workerId, true);
    }
  }

  /** Called after every seal and compaction with the segments it listed (the replicator listens). */
  onSegmentsListed(listener: () => void): void {
    this.segmentListeners.push(listener);
  }

  /** Seals every table with hot rows now (tests, and before a planned shutdown if wanted). */
  async sealAll(): Promise<SegmentInfo[]> {
    const out: SegmentInfo[] = [];
    for (const store of [...this.stores.values()]) out.push(...(await store.sealAll()));
    return out;
  }

  async checkpoint(): Promise<void> {
    for (const store of [...this.stores.values()]) await store.checkpoint();
  }

  /**
   * Puts a retention policy in force: scans stop returning older rows at once; maintenance deletes
   * them (a pass runs at its next turn when the policy changed).
   */
  setRetention(rules: RetentionRules): void {
    if (this.retention.sameAs(rules)) return;
    this.retention = rules;
    for (const store of this.stores.values()) store.setRetention(rules);
    this.lastExpiry = 0;
  }

  /** Deletes rows past retention in every table now; returns what went. */
  async expireNow(nowMs = Date.now()): Promise<Deleted> {
    const total: Deleted = { rows: 0, segments: 0, bytes: 0 };
    for (const store of [...this.stores.values()]) {
      if (this.closed) break;
      const gone = await store.expireNow(nowMs);
      total.rows += gone.rows;
      total.segments += gone.segments;
      total.bytes += gone.bytes;
    }
    this.lastExpiry = Date.now();
    await this.refreshUsageGauges();
    return total;
  }

  /** Per account and schema rows and bytes as gauges (from the catalogs and the hot-row counts). */
  private async refreshUsageGauges(): Promise<void> {
    const m = workerMetrics();
    m.storedRows.reset();
    m.storedBytes.reset();
    for (const store of [...this.stores.values()]) await store.refreshUsageGauges();
  }

  /** Deletes a schema of an account (every row and segment); a later append creates it afresh. */
  async dropSchema(accountId: string, schema: string): Promise<Deleted> {
    return (await this.stores.get(accountId)?.dropSchema(schema)) ?? { rows: 0, segments: 0, bytes: 0 };
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
    const store = this.stores.get(accountId);
    if (!store) return { rowsExamined: 0, rowsRemoved: 0, segmentsDone: 0, segmentsTotal: 0, finished: true };
    return store.purgeStep(jobId, schema, statement, maxSegments);
  }

  /** What this worker holds of each schema of an account (usage figures). */
  async describe(accountId: string): Promise<SchemaUsage[]> {
    return (await this.stores.get(accountId)?.describe()) ?? [];
  }

  /** Approximate count of unsealed rows per schema of an account (for tests and metrics). */
  hotRows(accountId: string, schema: string): number {
    return this.stores.get(accountId)?.hotRows(schema) ?? 0;
  }

  /** DuckDB threads in force on an account's instance (undefined: no instance for it). */
  accountThreads(accountId: string): number | undefined {
    return this.stores.get(accountId)?.threads;
  }

  /** Files replaced by compaction still waiting for scans to finish. */
  get pendingFileDeletions(): number {
    let n = 0;
    for (const store of this.stores.values()) n += store.pendingFileDeletions;
    return n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.maintenanceTimer) clearTimeout(this.maintenanceTimer);
    await this.maintenanceRun;
    await Promise.allSettled([...this.opening.values()]);
    for (const store of [...this.stores.values()]) await store.close();
    if (this.empty) (await this.empty.catch(() => undefined))?.closeSync();
    openDataPaths.delete(this.layout.data);
  }

  private updateHotGauge(): void {
    let total = 0;
    for (const store of this.stores.values()) total += store.hotRowTotal;
    workerMetrics().hotRows.set(total);
  }

  private scheduleMaintenance(): void {
    if (this.closed) return;
    this.maintenanceTimer = setTimeout(() => {
      this.maintenanceRun = this.maintain()
        .catch((err) => this.options.log.error(errorFields(err), 'storage maintenance failed'))
        .finally(() => this.scheduleMaintenance());
    }, this.tuning.maintenanceIntervalMs);
    this.maintenanceTimer.unref();
  }

  /** Seals what is due, checkpoints, prunes idempotency keys (each account), expires rows. */
  private async maintain(): Promise<void> {
    for (const store of [...this.stores.values()]) {
      if (this.closed) return;
      try {
        await store.maintain(() => this.closed);
      } catch (err) {
        // One account's failure does not stop the others' seals.
        this.options.log.error({ accountId: store.accountId, ...errorFields(err) }, 'storage maintenance of an account failed');
      }
    }
    if (!this.closed && Date.now() - this.lastExpiry >= this.tuning.retentionIntervalMs) await this.expireNow();
  }
}
