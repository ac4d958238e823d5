import { createHash } from 'node:crypto';
import { type ChannelPool, type Coordinator, type SegmentHandoff, StrataError, type WorkerRegistration } from '@strata/common';
import { SegmentTransferServiceService } from '@strata/proto/worker/v1/transfer';
import type { SegmentInfo } from '../storage/catalog.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import { descriptorToProto } from './segment-transfer-service.js';

export interface SegmentMoverOptions {
  coordinator: Coordinator;
  channels: ChannelPool;
  storage: StorageEngine;
  workerId: string;
  /** This worker's registered endpoint (the receivers fetch from it). */
  endpoint: string;
}

/** A handoff recorded by a mover, waiting for the grace period before it is released. */
export interface Handed {
  segment: SegmentInfo;
  to: WorkerRegistration;
  revision: number;
}

/** Rendezvous choice of a receiving worker: the same segment goes to the same worker on a retry. */
export function receiverFor(segmentId: string, workers: WorkerRegistration[]): WorkerRegistration {
  let best: WorkerRegistration | undefined;
  let bestScore = '';
  for (const w of workers) {
    const score = createHash('sha256').update(`${segmentId}/${w.workerId}`).digest('hex');
    if (best === undefined || score > bestScore) {
      best = w;
      bestScore = score;
    }
  }
  return best!;
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * Moves segments of this worker to other workers without any query reading a row twice or not
 * at all (the giving side of storage/handoff.ts). Used by a drain (every segment) and a
 * rebalance (some). Steps: `handOff` each segment (mark outgoing, the receiver adopts it hidden,
 * one coordinator record moves ownership), then `settle` them all after the grace period (unlist
 * here, settle there, remove the records).
 */
export class SegmentMover {
  constructor(private readonly o: SegmentMoverOptions) {}

  /** This worker's handoffs recorded before (a restart in the middle of a move), by segment. */
  async recorded(): Promise<Map<string, SegmentHandoff>> {
    const mine = (await this.o.coordinator.listHandoffs()).filter((h) => h.fromWorkerId === this.o.workerId);
    return new Map(mine.map((h) => [h.segmentId, h]));
  }

  /** Workers that can take segments: registered, with an id, writable, not draining, not this one. */
  async receivers(): Promise<WorkerRegistration[]> {
    const workers = (await this.o.coordinator.listWorkers()).filter(
      (w) => w.workerId !== undefined && w.workerId !== this.o.workerId && w.writable && !w.draining,
    );
    if (workers.length === 0)
      throw new StrataError('unavailable', 'No other writable worker is registered to take this worker’s segments.');
    return workers;
  }

  /**
   * Hands one segment to `to` (copied, verified and listed hidden there, then one coordinator
   * record moves ownership); a handoff recorded before a restart is recorded again instead.
   */
  async handOff(segment: SegmentInfo, to: WorkerRegistration, signal: AbortSignal, existing?: SegmentHandoff): Promise<Handed> {
    const { storage, channels, coordinator, workerId, endpoint } = this.o;
    if (existing) return { segment, to, revision: await coordinator.recordHandoff(existing) };
    await storage.markOutgoing(segment.accountId, [segment.segmentId], to.workerId!);
    const copy = await storage.segmentForCopy(segment.accountId, segment.segmentId);
    await channels.client(SegmentTransferServiceService, to.endpoint).adoptSegment(
      {
        sourceEndpoint: endpoint,
        sourceWorkerId: workerId,
        segment: descriptorToProto({ ...copy.segment, sha256: copy.sha256 }),
        replica: false,
      },
      { timeoutMs: 600_000, signal },
    );
    const revision = await coordinator.recordHandoff({
      accountId: segment.accountId,
      segmentId: segment.segmentId,
      fromWorkerId: workerId,
      toWorkerId: to.workerId!,
    });
    return { segment, to, revision };
  }

  /**
   * After the grace period (no query from before the handoffs is still running), unlists the
   * handed-off segments here, makes them ordinary on their receivers, and removes the records;
   * then settles handoffs left by an earlier run whose segments this worker no longer lists.
   */
  async settle(handed: Handed[], graceMs: number, signal: AbortSignal): Promise<void> {
    const { storage, coordinator, channels } = this.o;
    if (handed.length > 0) {
      await sleep(graceMs, signal);
      await storage.releaseOutgoing(
        handed.map((h) => h.segment.segmentId),
        Math.max(...handed.map((h) => h.revision)),
      );
      for (const h of handed) {
        await channels
          .client(SegmentTransferServiceService, h.to.endpoint)
          .settleSegment(
            { accountId: h.segment.accountId, segmentId: h.segment.segmentId, handoffRevision: h.revision },
            { signal },
          );
        await coordinator.removeHandoff(h.segment.accountId, h.segment.segmentId);
      }
    }
    await this.settleLeftovers(signal);
  }

  /** Handoffs of this worker whose segment it no longer lists (released before a restart). */
  private async settleLeftovers(signal: AbortSignal): Promise<void> {
    const { coordinator, channels, storage } = this.o;
    const listed = new Set((await storage.listSegments()).map((s) => s.segmentId));
    const workers = await coordinator.listWorkers();
    for (const h of (await this.recorded()).values()) {
      if (listed.has(h.segmentId)) continue;
      const to = workers.find((w) => w.workerId === h.toWorkerId);
      if (!to) throw new StrataError('unavailable', `Worker ${h.toWorkerId} that took segment ${h.segmentId} is not registered.`);
      const revision = await coordinator.recordHandoff(h);
      await channels
        .client(SegmentTransferServiceService, to.endpoint)
        .settleSegment({ accountId: h.accountId, segmentId: h.segmentId, handoffRevision: revision }, { signal });
      await coordinator.removeHandoff(h.accountId, h.segmentId);
    }
  }
}
