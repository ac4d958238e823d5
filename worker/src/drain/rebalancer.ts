import {
  type Coordinator,
  errorFields,
  type Logger,
  type RebalanceProgress,
  StrataError,
  type WorkerRegistration,
} from '@strata/common';
import type { SegmentInfo } from '../storage/catalog.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import type { Handed, SegmentMover } from './segment-mover.js';

export interface RebalancerOptions {
  coordinator: Coordinator;
  storage: StorageEngine;
  mover: SegmentMover;
  workerId: string;
  /** How long handed-off segments stay listed here (backend.drainGraceSeconds). */
  graceMs: number;
  /** Whether this worker is draining (a drain moves everything; no rebalance then). */
  draining(): boolean;
  log: Logger;
  /** How often the rebalance request is looked for (default 5 s). */
  pollMs?: number;
}

/** A plan: which of this worker's segments go to which receiver. */
export interface RebalancePlan {
  moves: { segment: SegmentInfo; to: WorkerRegistration }[];
}

/**
 * Which segments a worker holding more than the average gives away, and to whom. Every worker
 * plans from the same registrations (each publishes `segmentBytes`); a giver takes its
 * proportional share of each receiver's deficit, so givers planning at once do not overfill one
 * receiver. Oldest segments go first; a segment goes only where it fits the remaining share
 * (with half a segment of slack), so the plan never makes a receiver the new maximum.
 */
export function planRebalance(self: string, own: SegmentInfo[], workers: WorkerRegistration[]): RebalancePlan {
  const eligible = workers.filter((w) => w.workerId !== undefined && w.writable && !w.draining);
  if (!eligible.some((w) => w.workerId === self) || eligible.length < 2) return { moves: [] };
  const bytes = (w: WorkerRegistration) => w.segmentBytes ?? 0;
  const average = eligible.reduce((n, w) => n + bytes(w), 0) / eligible.length;
  const mine = bytes(eligible.find((w) => w.workerId === self)!);
  const excess = (w: WorkerRegistration) => Math.max(0, bytes(w) - average);
  const totalExcess = eligible.reduce((n, w) => n + excess(w), 0);
  if (mine <= average || totalExcess === 0) return { moves: [] };
  const myShare = (mine - average) / totalExcess;
  const room = new Map(
    eligible.filter((w) => bytes(w) < average).map((w) => [w.workerId!, { w, left: (average - bytes(w)) * myShare }]),
  );
  let toGive = mine - average;
  const moves: RebalancePlan['moves'] = [];
  for (const segment of [...own].sort((a, b) => a.createdAtMs - b.createdAtMs)) {
    if (toGive <= 0) break;
    let best: { w: WorkerRegistration; left: number } | undefined;
    for (const r of room.values()) if (!best || r.left > best.left) best = r;
    if (!best || segment.byteSize > best.left + segment.byteSize / 2) continue;
    moves.push({ segment, to: best.w });
    best.left -= segment.byteSize;
    toGive -= segment.byteSize;
  }
  return { moves };
}

/**
 * Carries out this worker's part of a rebalance (`rebalance/request`, from
 * `POST /cluster/rebalance` or `strata workers rebalance`): plans once per request, hands the
 * planned segments over with the drain's SegmentMover (no query reads a row twice or misses one)
 * and reports its progress (`rebalance/progress/<workerId>`). Writes go on meanwhile; segments
 * sealed after planning stay. See docs/decisions/0016-drain-and-replication.md.
 */
export class Rebalancer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly abort = new AbortController();

  constructor(private readonly o: RebalancerOptions) {}

  start(): void {
    this.schedule(this.o.pollMs ?? 5_000);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort(new StrataError('cancelled', 'The worker is stopping.'));
    await this.running.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.poll()
        .catch((err) => this.o.log.warn(errorFields(err), 'rebalance step failed; retrying'))
        .finally(() => this.schedule(this.o.pollMs ?? 5_000));
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const { coordinator, workerId } = this.o;
    if (this.o.draining()) return;
    const request = await coordinator.getRebalance();
    if (!request) return;
    const mine = (await coordinator.listRebalanceProgress()).find((p) => p.workerId === workerId);
    if (mine?.requestId === request.requestId && mine.phase === 'done') return;
    const progress: RebalanceProgress = {
      requestId: request.requestId,
      workerId,
      phase: 'moving',
      segmentsTotal: 0,
      segmentsMoved: 0,
      bytesTotal: 0,
      bytesMoved: 0,
      updatedAt: new Date().toISOString(),
    };
    const report = async (change: Partial<RebalanceProgress>) => {
      Object.assign(progress, change, { updatedAt: new Date().toISOString() });
      if (change.lastError === undefined) delete progress.lastError;
      await coordinator.putRebalanceProgress(progress);
    };
    try {
      await this.run(report);
    } catch (err) {
      if (!this.stopped) await report({ lastError: err instanceof Error ? err.message : String(err) }).catch(() => undefined);
      throw err;
    }
  }

  private async run(report: (change: Partial<RebalanceProgress>) => Promise<void>): Promise<void> {
    const { storage, mover, coordinator, workerId, log } = this.o;
    const recorded = await mover.recorded();
    const segments = await storage.listSegments();
    // Resumed: segments this worker had begun to hand off go to the same receivers first.
    const resumed = segments.filter((s) => s.handoff === 'outgoing');
    const own = segments.filter((s) => s.handoff === undefined);
    const workers = await coordinator.listWorkers();
    const plan = planRebalance(workerId, own, workers);
    const moves = [
      ...resumed.flatMap((segment) => {
        const h = recorded.get(segment.segmentId);
        const to = h && workers.find((w) => w.workerId === h.toWorkerId);
        return to ? [{ segment, to }] : [];
      }),
      ...plan.moves,
    ];
    await report({
      phase: 'moving',
      segmentsTotal: moves.length,
      bytesTotal: moves.reduce((n, m) => n + m.segment.byteSize, 0),
    });
    const handed: Handed[] = [];
    let bytes = 0;
    for (const m of moves) {
      if (this.stopped || this.o.draining()) throw new StrataError('cancelled', 'The rebalance stopped.');
      handed.push(await mover.handOff(m.segment, m.to, this.abort.signal, recorded.get(m.segment.segmentId)));
      bytes += m.segment.byteSize;
      await report({ segmentsMoved: handed.length, bytesMoved: bytes });
    }
    await report({ phase: 'settling' });
    await mover.settle(handed, this.o.graceMs, this.abort.signal);
    await report({ phase: 'done' });
    if (handed.length > 0) log.info({ segments: handed.length, bytes }, 'rebalance: segments handed to other workers');
  }
}
