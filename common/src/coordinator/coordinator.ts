/**
 * The coordinator: leader election of the database role, worker registration with leases, and
 * watching both. Two implementations share this interface: `EmbeddedCoordinator` (one process, no
 * dependencies; used when etcd.endpoints is empty) and `EtcdCoordinator` (real etcd via etcd3).
 */

import type { KeyRanking, KeyRankingHistory } from './key-rankings.js';
import type { ReplicatedLog } from './replicated-log.js';

/** A worker as registered under its lease. Disappears when the worker stops renewing. */
export interface WorkerRegistration {
  /** Unique gRPC endpoint (host:port) of the worker. */
  endpoint: string;
  freeBytes: number;
  /** False while the worker refuses writes (free space under minimumFreeSpaceBytes). */
  writable: boolean;
  /** ISO time of the last update. */
  updatedAt: string;
  /**
   * The worker's identity: an id kept in its data directory, so it survives restarts and endpoint
   * changes and changes when the data directory is replaced. Placements name it.
   */
  workerId?: string;
  /**
   * True while the worker is being drained (docs/decisions/0016-drain-and-replication.md): it
   * takes no writes and is moving its segments to the other workers, but still answers queries.
   */
  draining?: boolean;
  /**
   * Bytes of the sealed segments this worker is the primary of (replicas not counted), as of its
   * last replication round: what a rebalance evens out.
   */
  segmentBytes?: number;
  /**
   * The worker's scans apply a fragment's exact time bounds (ExecuteFragmentRequest from_us/to_us).
   * A gateway leaves time conjuncts out of its statements only when every worker it asks says so:
   * an older worker would ignore the bounds (decision 0018).
   */
  scanTimeBounds?: boolean;
}

/**
 * A record that a worker holds data of an account. Written (by the worker) before it acknowledges
 * its first write for the account and kept when the worker is down, so a query knows whose data it
 * is missing; removed only when that worker's data is moved away or explicitly written off.
 * See docs/decisions/0009-leadership-and-placement.md.
 */
export interface Placement {
  accountId: string;
  /** The holder's `WorkerRegistration.workerId`. */
  workerId: string;
  /** The holder's endpoint when it last recorded the placement (for messages and operators). */
  endpoint: string;
  /** ISO time of the recording. */
  since: string;
}

/**
 * A sealed segment whose ownership passed from one worker to another while the giving worker may
 * still list it (a drain). A query that read this record reads the segment only from `toWorkerId`;
 * a query that started before the record existed reads it only from `fromWorkerId`, which keeps it
 * until no such query can be running. See docs/decisions/0016-drain-and-replication.md.
 */
export interface SegmentHandoff {
  accountId: string;
  segmentId: string;
  fromWorkerId: string;
  toWorkerId: string;
}

/**
 * What a query over one account reads at its start, at one revision of the coordinator's store:
 * the registered workers, the account's placements and its segment handoffs.
 */
export interface AccountView {
  workers: WorkerRegistration[];
  placements: Placement[];
  handoffs: SegmentHandoff[];
  /** The store revision of the read (etcd: the header revision; embedded: a counter). */
  revision: number;
}

/** The phases of a drain, in order. */
export const DRAIN_PHASES = ['requested', 'sealing', 'moving', 'settling', 'done'] as const;
export type DrainPhase = (typeof DRAIN_PHASES)[number];

/**
 * A worker's drain: requested by an operator (HTTP or CLI), carried out by the worker itself,
 * which keeps this record up to date. Durable (no lease): a worker restarted mid-drain resumes.
 */
export interface DrainRecord {
  workerId: string;
  phase: DrainPhase;
  /** ISO time of the request. */
  requestedAt: string;
  /** ISO time of the last change. */
  updatedAt: string;
  segmentsTotal: number;
  segmentsMoved: number;
  bytesTotal: number;
  bytesMoved: number;
  /** The last error the worker met (it retries), if any. */
  lastError?: string;
}

/** A request to even out existing segments over the workers (`POST /cluster/rebalance`). */
export interface RebalanceRequest {
  requestId: string;
  requestedAt: string;
}

/** One worker's part of a rebalance, reported by the worker. */
export interface RebalanceProgress {
  requestId: string;
  workerId: string;
  /** `done` also when the worker had nothing to give. */
  phase: 'moving' | 'settling' | 'done';
  segmentsTotal: number;
  segmentsMoved: number;
  bytesTotal: number;
  bytesMoved: number;
  updatedAt: string;
  lastError?: string;
}

export interface LeaderInfo {
  /** What the leader published when elected: the master's gRPC endpoint. */
  value: string;
  /**
   * Fencing term: strictly increasing across successive leaders (etcd: the create revision of the
   * leader's election key). Leader commands and writes carry it so a deposed leader's are refused.
   */
  term: number;
}

export interface LeadershipHandlers {
  /** Called when this candidate becomes leader, with its fencing term. */
  onElected(term: number): void | Promise<void>;
  /**
   * Called the moment leadership is lost or can no longer be guaranteed (lease lost, campaign
   * error). Leader duties must stop at once; the coordinator re-campaigns by itself.
   */
  onDemoted(reason: string): void | Promise<void>;
}

export interface Candidacy {
  /** True while this candidate holds leadership. */
  readonly isLeader: boolean;
  /** The current fencing term, or undefined while not leader. */
  readonly term: number | undefined;
  /**
   * Fencing check against the coordinator's store: resolves only if this candidate still holds
   * leadership with the same term at the moment of the check (etcd: a Txn comparing the election
   * key's create revision with the term). Throws StrataError `unavailable` ("leadership lost")
   * otherwise. Leases alone allow a paused old leader to act next to the new one for a moment, so
   * the leader calls this right before committing a write or sending a command whose effect must
   * not come from a deposed leader, and passes `term` along with every command it sends.
   */
  assertLeadership(): Promise<void>;
  /**
   * Gives up leadership (or the campaign) and stops re-campaigning. If this candidate was leader,
   * `onDemoted('resigned')` is called first so leader duties stop the same way as on a loss.
   */
  resign(): Promise<void>;
  /**
   * Gives up leadership now but stays in the election: `onDemoted(reason)` follows (if leading)
   * and the candidate campaigns again after a backoff. For a leader that cannot take up its duties
   * (e.g. its store is still locked by a deposed leader that has not let go yet): resigning
   * instead would leave this instance reporting "standby" while it never campaigns again.
   * Does nothing while not leading.
   */
  stepAside(reason: string): void;
}

export interface WorkerLease {
  /** Updates the published registration (free bytes, writable flag). */
  update(change: Partial<Pick<WorkerRegistration, 'freeBytes' | 'writable' | 'draining' | 'segmentBytes'>>): Promise<void>;
  /** Removes the registration at once (clean shutdown). */
  revoke(): Promise<void>;
}

export type Unsubscribe = () => void;

export interface Coordinator {
  /** Campaigns for leadership of `election` (e.g. "database"), publishing `value` when elected. */
  campaign(election: string, value: string, handlers: LeadershipHandlers): Promise<Candidacy>;
  /** The current leader, or undefined when there is none. */
  getLeader(election: string): Promise<LeaderInfo | undefined>;
  /** Calls back with the leader now and on every change (undefined: no leader). */
  observeLeader(election: string, callback: (leader: LeaderInfo | undefined) => void): Unsubscribe;

  /** Registers a worker under a lease that ends when the process stops renewing it. */
  registerWorker(registration: Omit<WorkerRegistration, 'updatedAt'>): Promise<WorkerLease>;
  listWorkers(): Promise<WorkerRegistration[]>;
  /** Calls back with the full worker list now and on every change. */
  watchWorkers(callback: (workers: WorkerRegistration[]) => void): Unsubscribe;

  /** Records (or refreshes) that a worker holds data of an account. Durable: not under a lease. */
  recordPlacement(placement: Omit<Placement, 'since'>): Promise<void>;
  /** The placements of one account, or of every account. */
  listPlacements(accountId?: string): Promise<Placement[]>;
  /** Removes a worker's placements (of one account, or all); answers how many were removed. */
  removePlacements(workerId: string, accountId?: string): Promise<number>;

  /**
   * The replicated log `name` (the database role's: `database`), or undefined when the coordinator
   * has no replicated store to keep it in (embedded: one process). See replicated-log.ts.
   */
  replicatedLog(name: string): ReplicatedLog | undefined;
  /** Reads the registered workers, an account's placements and its handoffs at one revision. */
  readAccountView(accountId: string): Promise<AccountView>;
  /** Records a segment handoff; resolves with the store revision at which it took effect. */
  recordHandoff(handoff: SegmentHandoff): Promise<number>;
  /** The handoffs of one account, or of every account. */
  listHandoffs(accountId?: string): Promise<SegmentHandoff[]>;
  removeHandoff(accountId: string, segmentId: string): Promise<void>;

  /**
   * Asks a worker to drain: creates its drain record (phase `requested`) unless one exists;
   * answers the record.
   */
  requestDrain(workerId: string): Promise<DrainRecord>;
  getDrain(workerId: string): Promise<DrainRecord | undefined>;
  listDrains(): Promise<DrainRecord[]>;
  /** Writes a drain record (the draining worker reports its progress). */
  putDrain(record: DrainRecord): Promise<void>;
  /** Removes a drain record (cancelled before it moved anything, or a finished drain forgotten). */
  removeDrain(workerId: string): Promise<void>;

  /** Asks every worker to even out existing segments (a new request replaces an older one). */
  requestRebalance(): Promise<RebalanceRequest>;
  getRebalance(): Promise<RebalanceRequest | undefined>;
  putRebalanceProgress(progress: RebalanceProgress): Promise<void>;
  listRebalanceProgress(): Promise<RebalanceProgress[]>;

  /**
   * Records that a worker's data directory is lost for good (`strata placements write-off`).
   * Durable and never removed: the master leader restores the worker's replicated segments from
   * the survivors and then removes its placements; the worker id never rejoins.
   */
  markLost(workerId: string): Promise<void>;
  /** Worker ids marked lost. */
  listLost(): Promise<string[]>;

  /**
   * Records a set of workers keyed inflow is routed over (key-rankings.ts), replacing the record of
   * the same set, kept for `ttlSeconds` (etcd: under a lease of that TTL).
   */
  recordKeyRanking(ranking: Omit<KeyRanking, 'recordedAt'>, ttlSeconds: number): Promise<void>;
  /** Every recorded key ranking, read at one revision. */
  listKeyRankings(): Promise<KeyRankingHistory>;

  /**
   * Marks that users, permissions or memberships changed: the master calls it after every committed
   * directory change, so a gateway holding permissions read at an older directory revision reads
   * them again (docs/decisions/0049-directory-revision.md).
   */
  bumpDirectoryRevision(): Promise<void>;
  /**
   * The directory revision: changes with every bump and never goes back; 0 before the first bump.
   * Linearizable (etcd): a bump that returned before this read began is seen.
   */
  readDirectoryRevision(): Promise<number>;

  /** Releases leases and connections. */
  close(): Promise<void>;
}
