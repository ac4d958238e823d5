import { randomUUID } from 'node:crypto';
import type { Logger } from '../logging.js';
import { backoffDelay } from './backoff.js';
import type {
  AccountView,
  Candidacy,
  Coordinator,
  DrainRecord,
  LeaderInfo,
  LeadershipHandlers,
  Placement,
  RebalanceProgress,
  RebalanceRequest,
  SegmentHandoff,
  Unsubscribe,
  WorkerLease,
  WorkerRegistration,
} from './coordinator.js';
import { newDrainRecord } from './drains.js';
import type { KeyRanking, KeyRankingHistory } from './key-rankings.js';
import { LeadershipEvents, leadershipLost } from './leadership-events.js';
import { sortPlacements } from './placements.js';
import type { ReplicatedLog } from './replicated-log.js';

interface Candidate {
  value: string;
  events: LeadershipEvents;
  term: number | undefined;
}

interface Election {
  leader: Candidate | undefined;
  /** Candidates waiting for leadership, in campaign order. */
  waiting: Candidate[];
  observers: Set<(leader: LeaderInfo | undefined) => void>;
}

interface Registered {
  registration: WorkerRegistration;
  /** Identifies the lease that wrote it: a revoked older lease must not remove a newer one. */
  owner: symbol;
}

/**
 * The coordinator of a single process (etcd.endpoints empty): elections, worker registrations and
 * their watchers live in memory. There is nothing to lose a lease to, so a leader stays leader
 * until it resigns; registrations last until revoked or until the coordinator closes. Fencing
 * terms come from one counter and strictly increase across successive leaders.
 *
 * Callbacks (handlers, observers, watchers) are delivered asynchronously, never from inside the
 * call that caused them, so callers may hold the returned handle before the first callback.
 */
export class EmbeddedCoordinator implements Coordinator {
  private readonly elections = new Map<string, Election>();
  private readonly workers = new Map<string, Registered>();
  private readonly workerWatchers = new Set<(workers: WorkerRegistration[]) => void>();
  private readonly candidacies = new Set<Candidacy>();
  /** Placements by `<accountId>/<workerId>`. */
  private readonly placements = new Map<string, Placement>();
  /** Handoffs by `<accountId>/<segmentId>`. */
  private readonly handoffs = new Map<string, SegmentHandoff>();
  private readonly drains = new Map<string, DrainRecord>();
  private readonly lost = new Set<string>();
  /** Key rankings by id, with the time each lapses. */
  private readonly keyRankings = new Map<string, { ranking: KeyRanking; expiresAt: number }>();
  private rebalance: RebalanceRequest | undefined;
  private readonly rebalanceProgress = new Map<string, RebalanceProgress>();
  /** Counts changes of placements and handoffs: the revision of an account view. */
  private revision = 0;
  /** Counts directory changes (bumpDirectoryRevision). */
  private directoryRevision = 0;
  private lastTerm = 0;
  private closed = false;

  constructor(private readonly log: Logger) {}

  async campaign(election: string, value: string, handlers: LeadershipHandlers): Promise<Candidacy> {
    this.assertOpen();
    const state = this.election(election);
    const candidate: Candidate = { value, events: new LeadershipEvents(handlers, this.log), term: undefined };
    let active = true;
    let asides = 0;
    let retryTimer: NodeJS.Timeout | undefined;
    const candidacy: Candidacy = {
      get isLeader() {
        return state.leader === candidate;
      },
      get term() {
        return state.leader === candidate ? candidate.term : undefined;
      },
      assertLeadership: async () => {
        if (state.leader !== candidate) throw leadershipLost(election);
      },
      stepAside: (reason) => {
        if (!active || state.leader !== candidate) return;
        state.leader = undefined;
        candidate.term = undefined;
        candidate.events.demoted(reason);
        this.promoteNext(election, state);
        // Back in line after a backoff, as an etcd candidate would campaign again.
        retryTimer = setTimeout(() => {
          if (!active || this.closed) return;
          state.waiting.push(candidate);
          if (!state.leader) this.promoteNext(election, state);
        }, backoffDelay(asides++));
        retryTimer.unref();
      },
      resign: async () => {
        if (!active) return;
        active = false;
        clearTimeout(retryTimer);
        this.candidacies.delete(candidacy);
        if (state.leader === candidate) {
          state.leader = undefined;
          candidate.term = undefined;
          candidate.events.demoted('resigned');
          this.promoteNext(election, state);
        } else {
          state.waiting = state.waiting.filter((c) => c !== candidate);
        }
        await candidate.events.drained();
      },
    };
    this.candidacies.add(candidacy);
    state.waiting.push(candidate);
    if (!state.leader) this.promoteNext(election, state);
    return candidacy;
  }

  async getLeader(election: string): Promise<LeaderInfo | undefined> {
    return leaderInfo(this.elections.get(election));
  }

  observeLeader(election: string, callback: (leader: LeaderInfo | undefined) => void): Unsubscribe {
    const state = this.election(election);
    state.observers.add(callback);
    const current = leaderInfo(state);
    queueMicrotask(() => {
      if (state.observers.has(callback)) callback(current);
    });
    return () => state.observers.delete(callback);
  }

  async registerWorker(registration: Omit<WorkerRegistration, 'updatedAt'>): Promise<WorkerLease> {
    this.assertOpen();
    const owner = Symbol(registration.endpoint);
    const { endpoint } = registration;
    let current: WorkerRegistration = { ...registration, updatedAt: new Date().toISOString() };
    this.workers.set(endpoint, { registration: current, owner });
    this.notifyWorkers();
    const owns = () => this.workers.get(endpoint)?.owner === owner;
    let revoked = false;
    return {
      update: async (change) => {
        if (revoked || this.closed) throw new Error(`worker lease of ${endpoint} is revoked`);
        current = { ...current, ...pick(change), updatedAt: new Date().toISOString() };
        // Like an etcd put under the lease: the registration is written again even if another
        // lease had replaced it in between.
        this.workers.set(endpoint, { registration: current, owner });
        this.notifyWorkers();
      },
      revoke: async () => {
        revoked = true;
        if (owns()) {
          this.workers.delete(endpoint);
          this.notifyWorkers();
        }
      },
    };
  }

  async listWorkers(): Promise<WorkerRegistration[]> {
    return this.workerList();
  }

  watchWorkers(callback: (workers: WorkerRegistration[]) => void): Unsubscribe {
    this.workerWatchers.add(callback);
    const current = this.workerList();
    queueMicrotask(() => {
      if (this.workerWatchers.has(callback)) callback(current);
    });
    return () => this.workerWatchers.delete(callback);
  }

  async recordPlacement(placement: Omit<Placement, 'since'>): Promise<void> {
    this.assertOpen();
    const { accountId, workerId, endpoint } = placement;
    this.placements.set(`${accountId}/${workerId}`, { accountId, workerId, endpoint, since: new Date().toISOString() });
    this.revision++;
  }

  async listPlacements(accountId?: string): Promise<Placement[]> {
    return sortPlacements([...this.placements.values()].filter((p) => accountId === undefined || p.accountId === accountId));
  }

  async removePlacements(workerId: string, accountId?: string): Promise<number> {
    let removed = 0;
    for (const [key, p] of this.placements) {
      if (p.workerId === workerId && (accountId === undefined || p.accountId === accountId)) {
        this.placements.delete(key);
        removed++;
      }
    }
    this.revision++;
    return removed;
  }

  /**
   * None: one process has nothing to replicate to, and its single database instance keeps its
   * store on its own volume (docs/decisions/0017-database-standbys.md).
   */
  replicatedLog(_name: string): ReplicatedLog | undefined {
    return undefined;
  }

  async readAccountView(accountId: string): Promise<AccountView> {
    return {
      workers: this.workerList(),
      placements: await this.listPlacements(accountId),
      handoffs: await this.listHandoffs(accountId),
      revision: this.revision,
    };
  }

  async bumpDirectoryRevision(): Promise<void> {
    this.directoryRevision++;
  }

  async readDirectoryRevision(): Promise<number> {
    return this.directoryRevision;
  }

  async recordHandoff(handoff: SegmentHandoff): Promise<number> {
    this.assertOpen();
    this.handoffs.set(`${handoff.accountId}/${handoff.segmentId}`, { ...handoff });
    return ++this.revision;
  }

  async listHandoffs(accountId?: string): Promise<SegmentHandoff[]> {
    return [...this.handoffs.values()]
      .filter((h) => accountId === undefined || h.accountId === accountId)
      .map((h) => ({ ...h }))
      .sort((a, b) => (a.accountId + a.segmentId).localeCompare(b.accountId + b.segmentId));
  }

  async removeHandoff(accountId: string, segmentId: string): Promise<void> {
    if (this.handoffs.delete(`${accountId}/${segmentId}`)) this.revision++;
  }

  async requestRebalance(): Promise<RebalanceRequest> {
    this.assertOpen();
    this.rebalance = { requestId: randomUUID(), requestedAt: new Date().toISOString() };
    return { ...this.rebalance };
  }

  async getRebalance(): Promise<RebalanceRequest | undefined> {
    return this.rebalance ? { ...this.rebalance } : undefined;
  }

  async putRebalanceProgress(progress: RebalanceProgress): Promise<void> {
    this.assertOpen();
    this.rebalanceProgress.set(progress.workerId, { ...progress });
  }

  async listRebalanceProgress(): Promise<RebalanceProgress[]> {
    return [...this.rebalanceProgress.values()].map((p) => ({ ...p })).sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  async markLost(workerId: string): Promise<void> {
    this.assertOpen();
    this.lost.add(workerId);
  }

  async listLost(): Promise<string[]> {
    return [...this.lost].sort();
  }

  async recordKeyRanking(ranking: Omit<KeyRanking, 'recordedAt'>, ttlSeconds: number): Promise<void> {
    this.assertOpen();
    this.revision++;
    this.keyRankings.set(ranking.id, {
      ranking: { ...ranking, recordedAt: new Date().toISOString() },
      expiresAt: Date.now() + ttlSeconds * 1000,
    });
  }

  async listKeyRankings(): Promise<KeyRankingHistory> {
    const now = Date.now();
    for (const [id, r] of this.keyRankings) if (r.expiresAt <= now) this.keyRankings.delete(id);
    return { rankings: [...this.keyRankings.values()].map((r) => r.ranking), revision: this.revision };
  }

  async requestDrain(workerId: string): Promise<DrainRecord> {
    this.assertOpen();
    let record = this.drains.get(workerId);
    if (!record) {
      const now = new Date().toISOString();
      record = newDrainRecord(workerId, now);
      this.drains.set(workerId, record);
    }
    return { ...record };
  }

  async getDrain(workerId: string): Promise<DrainRecord | undefined> {
    const record = this.drains.get(workerId);
    return record ? { ...record } : undefined;
  }

  async listDrains(): Promise<DrainRecord[]> {
    return [...this.drains.values()].map((d) => ({ ...d })).sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  async putDrain(record: DrainRecord): Promise<void> {
    this.assertOpen();
    this.drains.set(record.workerId, { ...record });
  }

  async removeDrain(workerId: string): Promise<void> {
    this.drains.delete(workerId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await Promise.all([...this.candidacies].map((c) => c.resign()));
    this.closed = true;
    if (this.workers.size > 0) {
      this.workers.clear();
      this.notifyWorkers();
      // Let watchers of this process see the empty list before they are dropped.
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.workerWatchers.clear();
    for (const state of this.elections.values()) state.observers.clear();
  }

  private election(name: string): Election {
    let state = this.elections.get(name);
    if (!state) {
      state = { leader: undefined, waiting: [], observers: new Set() };
      this.elections.set(name, state);
    }
    return state;
  }

  /** Hands leadership to the longest-waiting candidate, if any, and tells everyone. */
  private promoteNext(name: string, state: Election): void {
    const next = state.waiting.shift();
    if (next) {
      next.term = ++this.lastTerm;
      state.leader = next;
      this.log.info({ election: name, term: next.term }, 'elected');
      next.events.elected(next.term);
    }
    const info = leaderInfo(state);
    for (const observer of state.observers) {
      queueMicrotask(() => {
        if (state.observers.has(observer)) observer(info);
      });
    }
  }

  private workerList(): WorkerRegistration[] {
    return [...this.workers.values()].map((w) => ({ ...w.registration })).sort((a, b) => a.endpoint.localeCompare(b.endpoint));
  }

  private notifyWorkers(): void {
    const list = this.workerList();
    for (const watcher of this.workerWatchers) {
      queueMicrotask(() => {
        if (this.workerWatchers.has(watcher)) watcher(list.map((w) => ({ ...w })));
      });
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('coordinator is closed');
  }
}

function leaderInfo(state: Election | undefined): LeaderInfo | undefined {
  const leader = state?.leader;
  return leader?.term === undefined ? undefined : { value: leader.value, term: leader.term };
}

/** Only the fields a worker may change; stray keys of a loosely typed caller are ignored. */
function pick(change: Partial<Pick<WorkerRegistration, 'freeBytes' | 'writable' | 'draining' | 'segmentBytes'>>) {
  const out: Partial<Pick<WorkerRegistration, 'freeBytes' | 'writable' | 'draining' | 'segmentBytes'>> = {};
  if (change.segmentBytes !== undefined) out.segmentBytes = change.segmentBytes;
  if (change.freeBytes !== undefined) out.freeBytes = change.freeBytes;
  if (change.writable !== undefined) out.writable = change.writable;
  if (change.draining !== undefined) out.draining = change.draining;
  return out;
}
