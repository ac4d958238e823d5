import { createHash } from 'node:crypto';
import {
  type ChannelPool,
  type Coordinator,
  errorFields,
  type Logger,
  StrataError,
  type WorkerRegistration,
} from '@strata/common';
import { SegmentTransferServiceService } from '@strata/proto/worker/v1/transfer';
import { descriptorToProto } from '../drain/segment-transfer-service.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import { workerMetrics } from '../worker-metrics.js';

export interface ReplicatorOptions {
  coordinator: Coordinator;
  channels: ChannelPool;
  storage: StorageEngine;
  workerId: string;
  endpoint: string;
  /** Copies of each sealed segment, this worker's included (backend.replicationFactor). */
  factor: number;
  /** Whether this worker is draining (its segments are being handed off: not replicated). */
  draining(): boolean;
  log: Logger;
  /** Rounds between seals (default 2 s with replication, 10 s without); a seal or compaction starts one at once. */
  intervalMs?: number;
  /** Told the bytes of this worker's own segments after every round (a rebalance evens them out). */
  publishSegmentBytes?(bytes: number): void;
}

/** Workers ranked for a segment by rendezvous hashing: the same segment goes to the same workers. */
function ranked(segmentId: string, workers: WorkerRegistration[]): WorkerRegistration[] {
  const score = (w: WorkerRegistration) => createHash('sha256').update(`${segmentId}/${w.workerId}`).digest('hex');
  return workers
    .map((w) => ({ w, s: score(w) }))
    .sort((a, b) => (a.s < b.s ? 1 : a.s > b.s ? -1 : 0))
    .map((x) => x.w);
}

/**
 * Keeps `factor` copies of this worker's sealed segments (docs/decisions/0016-drain-and-replication.md):
 * this worker is each one's primary and the only one that reads it; the other workers keep
 * replicas, hidden from queries, fetched through the same copy primitive as a drain
 * (SegmentTransferService.AdoptSegment with `replica`). Each round:
 * - forgets copies on workers that are gone for good (written off, or drained) and makes new ones
 *   on registered, writable, non-draining workers until each segment has `factor - 1` replicas;
 * - drops the replicas of segments this worker no longer lists (compacted, expired, handed off);
 * - drops its own replicas of segments whose primary was drained (the segment's new owner makes
 *   its own copies), keeping those of a lost primary (the master leader promotes one of them).
 * A worker that is merely down keeps its place: its copies are not replaced while it may return.
 */
export class Replicator {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private again = false;
  private busy = false;
  private stopped = false;

  constructor(private readonly o: ReplicatorOptions) {}

  start(): void {
    this.o.storage.onSegmentsListed(() => this.kick());
    // Not at once: a worker that just started has other things to do first (serving, registering).
    this.schedule(this.interval());
  }

  /** Without replication a round only reports and cleans up: every 10 s is enough. */
  private interval(): number {
    return this.o.intervalMs ?? (this.o.factor > 1 ? 2_000 : 10_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /** Runs a round now (or right after the running one). */
  kick(): void {
    if (this.stopped) return;
    if (this.busy) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.busy = true;
      this.running = this.round()
        .then(() => undefined)
        .catch((err) => this.o.log.warn(errorFields(err), 'replication round failed; retrying'))
        .finally(() => {
          this.busy = false;
          const next = this.again ? 0 : this.interval();
          this.again = false;
          this.schedule(next);
        });
    }, delayMs);
    this.timer.unref();
  }

  /** One pass; answers how many segments still lack copies. */
  async round(): Promise<number> {
    const { storage, coordinator, workerId, factor } = this.o;
    const [workers, lostList, drains] = await Promise.all([
      coordinator.listWorkers(),
      coordinator.listLost(),
      coordinator.listDrains(),
    ]);
    const gone = new Set([...lostList, ...drains.filter((d) => d.phase === 'done').map((d) => d.workerId)]);
    const byId = new Map(workers.filter((w) => w.workerId !== undefined).map((w) => [w.workerId!, w]));
    const segments = await storage.listSegments();
    const own = segments.filter((s) => s.handoff === undefined);
    const ownIds = new Set(own.map((s) => s.segmentId));
    const holders = await storage.replicaHolders();

    // Copies of segments this worker no longer holds as primary.
    for (const [segmentId, at] of holders) {
      if (ownIds.has(segmentId)) continue;
      for (const h of at) await this.dropCopy(segmentId, h, byId.get(h), gone.has(h));
    }
    // Replicas of segments whose primary was drained: the new owner keeps its own copies.
    const orphans = segments
      .filter(
        (s) =>
          s.handoff === 'replica' &&
          s.peerWorkerId !== undefined &&
          drains.some((d) => d.workerId === s.peerWorkerId && d.phase === 'done'),
      )
      .map((s) => s.segmentId);
    if (orphans.length > 0) await storage.dropReplicas(orphans);

    let missing = 0;
    if (factor > 1 && !this.o.draining()) {
      const candidates = workers.filter(
        (w) => w.workerId !== undefined && w.workerId !== workerId && w.writable && !w.draining && !gone.has(w.workerId),
      );
      for (const segment of own) {
        if (this.stopped) break;
        let at = holders.get(segment.segmentId) ?? [];
        for (const h of at.filter((x) => gone.has(x))) await storage.noteReplica(segment.segmentId, h, false);
        at = at.filter((x) => !gone.has(x));
        let need = factor - 1 - at.length;
        for (const target of ranked(
          segment.segmentId,
          candidates.filter((w) => !at.includes(w.workerId!)),
        )) {
          if (need <= 0) break;
          try {
            await this.copyTo(segment.accountId, segment.segmentId, target);
            need--;
          } catch (err) {
            this.o.log.warn(
              { segmentId: segment.segmentId, to: target.endpoint, ...errorFields(err) },
              'could not replicate a segment',
            );
          }
        }
        if (need > 0) missing++;
      }
    }
    this.o.publishSegmentBytes?.(own.reduce((n, s) => n + s.byteSize, 0));
    const m = workerMetrics();
    m.underReplicated.set(missing);
    m.ownSegments.set(own.length);
    m.replicaSegments.set(segments.filter((s) => s.handoff === 'replica').length - orphans.length);
    m.replicationRounds.inc();
    return missing;
  }

  private async copyTo(accountId: string, segmentId: string, target: WorkerRegistration): Promise<void> {
    const { storage, channels, workerId, endpoint } = this.o;
    const copy = await storage.segmentForCopy(accountId, segmentId);
    await channels.client(SegmentTransferServiceService, target.endpoint).adoptSegment(
      {
        sourceEndpoint: endpoint,
        sourceWorkerId: workerId,
        segment: descriptorToProto({ ...copy.segment, sha256: copy.sha256 }),
        replica: true,
      },
      { timeoutMs: 600_000 },
    );
    await storage.noteReplica(segmentId, target.workerId!, true);
  }

  private async dropCopy(segmentId: string, holder: string, at: WorkerRegistration | undefined, gone: boolean): Promise<void> {
    if (at) {
      try {
        await this.o.channels
          .client(SegmentTransferServiceService, at.endpoint)
          .dropReplicas({ segmentIds: [segmentId], primaryWorkerId: this.o.workerId });
      } catch (err) {
        if (!(err instanceof StrataError)) throw err;
        return; // asked again next round
      }
    } else if (!gone) {
      return; // down for now: its copy is dropped when it is back
    }
    await this.o.storage.noteReplica(segmentId, holder, false);
  }
}
