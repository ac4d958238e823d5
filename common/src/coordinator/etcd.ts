import { randomUUID } from 'node:crypto';
import { Etcd3, type IKeyValue, type Namespace } from 'etcd3';
import type { Logger } from '../logging.js';
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
import { EtcdCandidacy } from './etcd-candidacy.js';
import { PrefixWatch } from './etcd-prefix-watch.js';
import { EtcdReplicatedLog } from './etcd-replicated-log.js';
import { EtcdWorkerLease } from './etcd-worker-lease.js';
import type { KeyRanking, KeyRankingHistory } from './key-rankings.js';
import { sortPlacements } from './placements.js';
import type { ReplicatedLog } from './replicated-log.js';

export interface EtcdCoordinatorOptions {
  /** etcd client URLs (`etcd.endpoints`). */
  endpoints: string[];
  /** Key prefix of everything Strata writes (`etcd.prefix`, e.g. `/strata`). */
  prefix: string;
  /** TTL of election and worker leases (`etcd.leaseTtlSeconds`). */
  leaseTtlSeconds: number;
  /** Deadline of each unary etcd request; streams (watches, keep-alives) have none. */
  requestTimeoutMs?: number;
  /** PEM contents for TLS to etcd (`etcd.tls.*File`): the CA, and a client certificate and key. */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** etcd user and password (`etcd.auth`), when etcd's own authentication is enabled. */
  auth?: { username: string; password: string };
}

/**
 * The coordinator of a cluster, on real etcd. Keys (all under `prefix`):
 *  - `election/<name>/<lease id>`: one key per candidate, attached to its lease; the key with the
 *    lowest create revision leads and that revision is the fencing term;
 *  - `workers/<endpoint>`: a worker's registration (JSON), attached to the worker's lease;
 *  - `placement/<accountId>/<workerId>`: a Placement (JSON), under no lease: it must outlive the
 *    worker's process and registration;
 *  - `log/<name>/…`: a replicated log (entries, snapshot record and chunks; etcd-replicated-log.ts).
 *  - `handoff/<accountId>/<segmentId>`: a SegmentHandoff (JSON) while a moved segment may still
 *    be listed by the worker that gave it away;
 *  - `drain/<workerId>`: a DrainRecord (JSON), from the request until an operator forgets it;
 *  - `lost/<workerId>`: a worker written off (its volume lost for good), for ever;
 *  - `rebalance/request`, `rebalance/progress/<workerId>`: the latest rebalance and each worker's part.
 *  - `keyrank/<id>`: a set of workers keyed inflow was routed over (KeyRanking, JSON), under a lease
 *    as long as workers keep idempotency keys (decision 0029).
 *  - `directory/revision`: put by the master after every directory change; its mod revision is the
 *    directory revision gateways validate cached permissions against (decision 0049).
 */
export class EtcdCoordinator implements Coordinator {
  private readonly client: Etcd3;
  private readonly root: Namespace;
  private readonly prefix: string;
  private readonly candidacies = new Set<EtcdCandidacy>();
  private readonly workerLeases = new Set<EtcdWorkerLease>();
  private readonly watches = new Set<PrefixWatch<unknown>>();
  private closed = false;

  constructor(
    private readonly options: EtcdCoordinatorOptions,
    private readonly log: Logger,
  ) {
    const timeoutMs = options.requestTimeoutMs ?? 5_000;
    this.client = new Etcd3({
      hosts: options.endpoints,
      dialTimeout: timeoutMs,
      ...(options.tls
        ? { credentials: { rootCertificate: options.tls.ca, certChain: options.tls.cert, privateKey: options.tls.key } }
        : {}),
      ...(options.auth ? { auth: options.auth } : {}),
      // Reads of the database log return many entries at once (each up to 1 MiB): grpc-js' default
      // 4 MB limit on an answer would refuse a batch of large ones.
      grpcOptions: { 'grpc.max_receive_message_length': 64 * 1024 * 1024 },
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: new Date(Date.now() + timeoutMs) }),
    });
    this.prefix = `${options.prefix.replace(/\/+$/, '')}/`;
    this.root = this.client.namespace(this.prefix);
  }

  async campaign(election: string, value: string, handlers: LeadershipHandlers): Promise<Candidacy> {
    this.assertOpen();
    const candidacy = new EtcdCandidacy({
      client: this.client,
      election: this.root.election(election, this.options.leaseTtlSeconds),
      electionName: election,
      value,
      ttlSeconds: this.options.leaseTtlSeconds,
      handlers,
      log: this.log.child({ election }),
      onResigned: (c) => this.candidacies.delete(c),
    });
    this.candidacies.add(candidacy);
    return candidacy;
  }

  async getLeader(election: string): Promise<LeaderInfo | undefined> {
    const { kvs } = await this.client.getAll().prefix(this.electionPrefix(election)).sort('Create', 'Ascend').limit(1).exec();
    return kvs[0] ? leaderOf(kvs[0]) : undefined;
  }

  observeLeader(election: string, callback: (leader: LeaderInfo | undefined) => void): Unsubscribe {
    return this.watch<LeaderInfo | undefined>({
      prefix: this.electionPrefix(election),
      load: () => this.getLeader(election),
      equal: (a, b) => a?.term === b?.term && a?.value === b?.value,
      emit: callback,
    });
  }

  async registerWorker(registration: Omit<WorkerRegistration, 'updatedAt'>): Promise<WorkerLease> {
    this.assertOpen();
    const lease = await EtcdWorkerLease.register(
      this.root,
      `workers/${registration.endpoint}`,
      registration,
      this.options.leaseTtlSeconds,
      this.log,
      (l) => this.workerLeases.delete(l),
    );
    this.workerLeases.add(lease);
    return lease;
  }

  async listWorkers(): Promise<WorkerRegistration[]> {
    const values = await this.client.getAll().prefix(`${this.prefix}workers/`).strings();
    const workers: WorkerRegistration[] = [];
    for (const [key, value] of Object.entries(values)) {
      try {
        workers.push(JSON.parse(value) as WorkerRegistration);
      } catch {
        this.log.warn({ key }, 'ignoring a worker registration that is not JSON');
      }
    }
    return workers.sort((a, b) => a.endpoint.localeCompare(b.endpoint));
  }

  watchWorkers(callback: (workers: WorkerRegistration[]) => void): Unsubscribe {
    return this.watch<WorkerRegistration[]>({
      prefix: `${this.prefix}workers/`,
      load: () => this.listWorkers(),
      equal: (a, b) => JSON.stringify(a) === JSON.stringify(b),
      emit: callback,
    });
  }

  async recordPlacement(placement: Omit<Placement, 'since'>): Promise<void> {
    const { accountId, workerId, endpoint } = placement;
    const value: Placement = { accountId, workerId, endpoint, since: new Date().toISOString() };
    await this.root.put(`placement/${accountId}/${workerId}`).value(JSON.stringify(value)).exec();
  }

  async listPlacements(accountId?: string): Promise<Placement[]> {
    const prefix = accountId === undefined ? 'placement/' : `placement/${accountId}/`;
    const values = await this.root.getAll().prefix(prefix).strings();
    const out: Placement[] = [];
    for (const [key, value] of Object.entries(values)) {
      try {
        out.push(JSON.parse(value) as Placement);
      } catch {
        this.log.warn({ key }, 'ignoring a placement that is not JSON');
      }
    }
    return sortPlacements(out);
  }

  async removePlacements(workerId: string, accountId?: string): Promise<number> {
    let removed = 0;
    for (const p of await this.listPlacements(accountId)) {
      if (p.workerId !== workerId) continue;
      await this.root.delete().key(`placement/${p.accountId}/${p.workerId}`).exec();
      removed++;
    }
    return removed;
  }

  replicatedLog(name: string): ReplicatedLog {
    return new EtcdReplicatedLog(this.client, `${this.prefix}log/${name}/`, (prefix, load, emit) =>
      this.watch<string>({ prefix, load, equal: (a, b) => a === b, emit: () => emit() }),
    );
  }

  async readAccountView(accountId: string): Promise<AccountView> {
    // One read-only transaction, one round trip: etcd serves its three ranges at one revision, so
    // the view is one instant of the store (a handoff seen implies its target's placement is seen
    // too) and, being linearizable, includes every change committed before the query began. Every
    // query pays this read (docs/decisions/0027-fixed-query-path.md: why it is not cached); two
    // sequential reads cost twice the round trip. The compare always holds (a missing key has
    // version 0).
    const result = await this.root
      .if(`handoff/${accountId}/`, 'Version', '>', -1)
      .then(
        this.root.getAll().prefix(`handoff/${accountId}/`),
        this.root.getAll().prefix(`placement/${accountId}/`),
        this.root.getAll().prefix('workers/'),
      )
      .commit();
    if (!result.succeeded) throw new Error('etcd answered the always-true compare of an account view as false');
    const [handoffs, placements, workers] = result.responses.map((r) => r.response_range?.kvs ?? []);
    return {
      handoffs: this.parseAll<SegmentHandoff>(handoffs ?? [], 'handoff'),
      placements: sortPlacements(this.parseAll<Placement>(placements ?? [], 'placement')),
      workers: this.parseAll<WorkerRegistration>(workers ?? [], 'worker registration').sort((a, b) =>
        a.endpoint.localeCompare(b.endpoint),
      ),
      revision: Number(result.header.revision),
    };
  }

  async recordHandoff(handoff: SegmentHandoff): Promise<number> {
    const { accountId, segmentId, fromWorkerId, toWorkerId } = handoff;
    const res = await this.root
      .put(`handoff/${accountId}/${segmentId}`)
      .value(JSON.stringify({ accountId, segmentId, fromWorkerId, toWorkerId }))
      .exec();
    return Number(res.header.revision);
  }

  async listHandoffs(accountId?: string): Promise<SegmentHandoff[]> {
    const res = await this.root
      .getAll()
      .prefix(accountId === undefined ? 'handoff/' : `handoff/${accountId}/`)
      .exec();
    return this.parseAll<SegmentHandoff>(res.kvs, 'handoff');
  }

  async removeHandoff(accountId: string, segmentId: string): Promise<void> {
    await this.root.delete().key(`handoff/${accountId}/${segmentId}`).exec();
  }

  async requestRebalance(): Promise<RebalanceRequest> {
    const request: RebalanceRequest = { requestId: randomUUID(), requestedAt: new Date().toISOString() };
    await this.root.put('rebalance/request').value(JSON.stringify(request)).exec();
    return request;
  }

  async getRebalance(): Promise<RebalanceRequest | undefined> {
    const value = await this.root.get('rebalance/request').string();
    return value === null ? undefined : (JSON.parse(value) as RebalanceRequest);
  }

  async putRebalanceProgress(progress: RebalanceProgress): Promise<void> {
    await this.root.put(`rebalance/progress/${progress.workerId}`).value(JSON.stringify(progress)).exec();
  }

  async listRebalanceProgress(): Promise<RebalanceProgress[]> {
    const res = await this.root.getAll().prefix('rebalance/progress/').exec();
    return this.parseAll<RebalanceProgress>(res.kvs, 'rebalance progress').sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  async markLost(workerId: string): Promise<void> {
    await this.root.put(`lost/${workerId}`).value(new Date().toISOString()).exec();
  }

  async listLost(): Promise<string[]> {
    const keys = await this.root.getAll().prefix('lost/').keys();
    return keys.map((k) => k.slice('lost/'.length)).sort();
  }

  async bumpDirectoryRevision(): Promise<void> {
    // The value only says when; what readers compare is the key's mod revision, which etcd raises
    // on every put, so two bumps in the same millisecond still differ.
    await this.root.put('directory/revision').value(new Date().toISOString()).exec();
  }

  async readDirectoryRevision(): Promise<number> {
    // A plain get is linearizable in etcd3 (serializable is opt-in): one round trip to the leader.
    const res = await this.root.get('directory/revision').exec();
    const kv = res.kvs[0];
    return kv ? Number(kv.mod_revision) : 0;
  }

  async recordKeyRanking(ranking: Omit<KeyRanking, 'recordedAt'>, ttlSeconds: number): Promise<void> {
    this.assertOpen();
    // Its own lease, never kept alive: the record lapses by itself once no gateway re-records it.
    const lease = this.root.lease(ttlSeconds, { autoKeepAlive: false });
    try {
      const value: KeyRanking = { ...ranking, recordedAt: new Date().toISOString() };
      await lease.put(`keyrank/${ranking.id}`).value(JSON.stringify(value)).exec();
    } finally {
      lease.release();
    }
  }

  async listKeyRankings(): Promise<KeyRankingHistory> {
    const res = await this.root.getAll().prefix('keyrank/').exec();
    return { rankings: this.parseAll<KeyRanking>(res.kvs, 'key ranking'), revision: Number(res.header.revision) };
  }

  async requestDrain(workerId: string): Promise<DrainRecord> {
    const key = `drain/${workerId}`;
    const fresh = newDrainRecord(workerId, new Date().toISOString());
    // Create only: a second request must not reset the progress of a running drain.
    await this.root
      .if(key, 'Create', '==', 0)
      .then(this.root.put(key).value(JSON.stringify(fresh)))
      .commit();
    return (await this.getDrain(workerId)) ?? fresh;
  }

  async getDrain(workerId: string): Promise<DrainRecord | undefined> {
    const value = await this.root.get(`drain/${workerId}`).string();
    return value === null ? undefined : (JSON.parse(value) as DrainRecord);
  }

  async listDrains(): Promise<DrainRecord[]> {
    const res = await this.root.getAll().prefix('drain/').exec();
    return this.parseAll<DrainRecord>(res.kvs, 'drain record').sort((a, b) => a.workerId.localeCompare(b.workerId));
  }

  async putDrain(record: DrainRecord): Promise<void> {
    await this.root.put(`drain/${record.workerId}`).value(JSON.stringify(record)).exec();
  }

  async removeDrain(workerId: string): Promise<void> {
    await this.root.delete().key(`drain/${workerId}`).exec();
  }

  private parseAll<T>(kvs: IKeyValue[], what: string): T[] {
    const out: T[] = [];
    for (const kv of kvs) {
      try {
        out.push(JSON.parse(kv.value.toString()) as T);
      } catch {
        this.log.warn({ key: kv.key.toString() }, `ignoring a ${what} that is not JSON`);
      }
    }
    return out;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([
      ...[...this.candidacies].map((c) => c.resign()),
      ...[...this.workerLeases].map((l) => l.revoke()),
      ...[...this.watches].map((w) => w.stop()),
    ]);
    this.watches.clear();
    this.client.close();
  }

  private electionPrefix(election: string): string {
    return `${this.prefix}election/${election}/`;
  }

  private watch<T>(spec: {
    prefix: string;
    load: () => Promise<T>;
    equal: (a: T, b: T) => boolean;
    emit: (state: T) => void;
  }): Unsubscribe {
    if (this.closed) return () => {};
    const watch = new PrefixWatch<T>({ client: this.client, log: this.log, ...spec });
    this.watches.add(watch as PrefixWatch<unknown>);
    return () => {
      this.watches.delete(watch as PrefixWatch<unknown>);
      void watch.stop();
    };
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('coordinator is closed');
  }
}

function leaderOf(kv: IKeyValue): LeaderInfo {
  return { value: kv.value.toString(), term: Number(kv.create_revision) };
}
