import type { Campaign, Election, Etcd3, IOperation, Lease } from 'etcd3';
import { errorFields, type Logger } from '../logging.js';
import { backoffDelay } from './backoff.js';
import type { Candidacy, LeadershipHandlers } from './coordinator.js';
import { LeadershipEvents, leadershipLost } from './leadership-events.js';

/** An extra condition of a fenced transaction: `key`'s `target` compared with `value`. */
export interface FencedCondition {
  key: string;
  target: 'Create' | 'Mod' | 'Version' | 'Value';
  value: string | number;
}

interface Held {
  /** Full etcd key of this candidate's campaign (its lease id under the election prefix). */
  key: string;
  /** Create revision of `key`: the fencing term. */
  term: number;
}

export interface EtcdCandidacyOptions {
  client: Etcd3;
  election: Election;
  electionName: string;
  value: string;
  ttlSeconds: number;
  handlers: LeadershipHandlers;
  log: Logger;
  onResigned: (candidacy: EtcdCandidacy) => void;
}

/**
 * One candidate of an etcd election (etcd3's Campaign: a key under the election prefix, attached
 * to a lease; the key with the lowest create revision leads). On top of the Campaign it:
 *  - takes the leader key's create revision as the fencing term;
 *  - demotes at once when the campaign errors or its lease is lost, and also when the lease's
 *    keep-alives have not been acknowledged for 2/3 of the TTL: etcd3 itself reports a lost
 *    connection only after twice the TTL, long after a standby may have taken over;
 *  - re-campaigns after a bounded, jittered backoff until resigned.
 */
export class EtcdCandidacy implements Candidacy {
  private readonly events: LeadershipEvents;
  private campaign: Campaign | undefined;
  /** Bumped for every new campaign and on resign: events of older campaigns are ignored. */
  private generation = 0;
  private held: Held | undefined;
  private failures = 0;
  /** Step-asides since leadership last proved healthy (a passed fencing check): their backoff. */
  private asides = 0;
  private stopped = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;

  constructor(private readonly options: EtcdCandidacyOptions) {
    this.events = new LeadershipEvents(options.handlers, options.log);
    this.start();
  }

  get isLeader(): boolean {
    return this.held !== undefined;
  }

  get term(): number | undefined {
    return this.held?.term;
  }

  async assertLeadership(): Promise<void> {
    const held = this.held;
    const generation = this.generation;
    if (!held) throw leadershipLost(this.options.electionName);
    // A Txn whose only condition is that our election key still exists with the create revision
    // we were elected with: true exactly while we lead (no key created later can precede ours).
    const result = await this.options.client.if(held.key, 'Create', '==', String(held.term)).commit();
    if (!result.succeeded) {
      this.fail(generation, 'election key no longer holds our term');
      throw leadershipLost(this.options.electionName);
    }
    if (this.held !== held) throw leadershipLost(this.options.electionName);
    this.asides = 0;
  }

  /**
   * One etcd Txn: this leadership's fencing check (as in `assertLeadership`) and `conditions`
   * (compared with `==`); only if all hold are `ops` applied, atomically. A failed condition
   * demotes this candidate (its leadership, or its view of the keys it guards, is stale) and
   * throws `unavailable`. A committed Txn resolves even if a demotion arrived meanwhile: the change
   * is in etcd. Any other error (a timeout, etcd unreachable) leaves the outcome unknown.
   * The replicated log appends with this, so a deposed leader can never add an entry.
   */
  async commitFenced(conditions: FencedCondition[], ops: IOperation[], what: string): Promise<void> {
    const held = this.held;
    const generation = this.generation;
    if (!held) throw leadershipLost(this.options.electionName);
    let txn = this.options.client.if(held.key, 'Create', '==', String(held.term));
    for (const c of conditions) txn = txn.and(c.key, c.target, '==', c.value);
    const result = await txn.then(...ops).commit();
    if (!result.succeeded) {
      this.fail(generation, `${what}: its fencing condition failed`);
      throw leadershipLost(this.options.electionName);
    }
    this.asides = 0;
  }

  stepAside(reason: string): void {
    // Not leading (already demoted, or never elected): the campaign goes on as it is. Failing it
    // again would start a second campaign next to the retry already scheduled.
    if (!this.held) return;
    // The same path as a lost campaign: demote, revoke the lease (a standby need not wait for the
    // TTL) and campaign again after the backoff. Its own count: an election resets `failures`, so
    // a takeover that keeps failing would otherwise retry every 100-200 ms.
    this.fail(this.generation, reason, this.asides++);
  }

  async resign(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.generation++;
    clearTimeout(this.retryTimer);
    clearInterval(this.watchdog);
    if (this.held) {
      this.held = undefined;
      this.events.demoted('resigned');
    }
    const campaign = this.campaign;
    this.campaign = undefined;
    try {
      await campaign?.resign();
    } catch (err) {
      // The lease then ends by itself after its TTL.
      this.options.log.warn({ ...errorFields(err), election: this.options.electionName }, 'resign failed');
    }
    this.options.onResigned(this);
    await this.events.drained();
  }

  private start(): void {
    const generation = ++this.generation;
    const { election, log, electionName, ttlSeconds } = this.options;
    const campaign = election.campaign(this.options.value);
    this.campaign = campaign;
    // etcd3 keeps the Campaign's lease private; its keep-alive acknowledgements feed the watchdog.
    const lease = (campaign as unknown as { lease?: Lease }).lease;
    if (!lease) log.warn({ election: electionName }, 'etcd3 Campaign has no lease field: keep-alive watchdog disabled');
    let lastAck = Date.now();
    lease?.on('keepaliveSucceeded', () => {
      lastAck = Date.now();
    });
    // A granted lease means etcd is reachable again: later failures start from a short backoff.
    lease
      ?.grant()
      .then(() => {
        if (generation === this.generation) this.failures = 0;
      })
      .catch(() => undefined);
    campaign.on('error', (err) => this.fail(generation, `campaign failed: ${err.message}`));
    campaign.on('elected', () => {
      void this.elected(generation, campaign, () => lastAck);
    });
    log.debug({ election: electionName, ttlSeconds }, 'campaigning');
  }

  private async elected(generation: number, campaign: Campaign, lastAck: () => number): Promise<void> {
    const { client, log, electionName, ttlSeconds } = this.options;
    let held: Held;
    try {
      const key = await campaign.getCampaignKey();
      const { kvs } = await client.get(key).exec();
      const kv = kvs[0];
      if (!kv) throw new Error('election key vanished right after the election');
      held = { key, term: Number(kv.create_revision) };
    } catch (err) {
      this.fail(generation, `cannot read the election key: ${(err as Error).message}`);
      return;
    }
    if (generation !== this.generation) return;
    this.held = held;
    this.failures = 0;
    log.info({ election: electionName, term: held.term }, 'elected');
    this.events.elected(held.term);
    const ttlMs = ttlSeconds * 1000;
    const limitMs = (ttlMs * 2) / 3;
    this.watchdog = setInterval(
      () => {
        const silentMs = Date.now() - lastAck();
        if (silentMs > limitMs) this.fail(generation, `no lease keep-alive acknowledged for ${silentMs} ms`);
      },
      Math.max(50, Math.floor(ttlMs / 10)),
    );
    this.watchdog.unref();
  }

  /** Stops leader duties at once (if leading), drops the campaign and schedules a new one. */
  private fail(generation: number, reason: string, attempt?: number): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation++;
    clearInterval(this.watchdog);
    const { log, electionName } = this.options;
    if (this.held) {
      log.warn({ election: electionName, term: this.held.term, reason }, 'leadership lost');
      this.held = undefined;
      this.events.demoted(reason);
    } else {
      log.warn({ election: electionName, reason }, 'campaign failed');
    }
    const campaign = this.campaign;
    this.campaign = undefined;
    // Revoking the lease lets a standby take over at once instead of after the TTL.
    campaign?.resign().catch(() => undefined);
    const delay = backoffDelay(attempt ?? this.failures++);
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.start();
    }, delay);
  }
}
