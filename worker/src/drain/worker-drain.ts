import { type ChannelPool, type Coordinator, type DrainRecord, errorFields, type Logger, StrataError } from '@strata/common';
import type { StorageEngine } from '../storage/storage-engine.js';
import { type Handed, receiverFor, SegmentMover } from './segment-mover.js';

export interface WorkerDrainOptions {
  coordinator: Coordinator;
  channels: ChannelPool;
  storage: StorageEngine;
  workerId: string;
  /** This worker's registered endpoint (the receivers fetch from it). */
  endpoint: string;
  /** How long handed-off segments stay listed here (backend.drainGraceSeconds). */
  graceMs: number;
  /** Publishes `draining` (and not writable) in the registration. */
  markDraining(): Promise<void>;
  /** Removes the registration for good (the drain is done). */
  deregister(): Promise<void>;
  log: Logger;
  /** How often the drain record is looked for (default 2 s). */
  pollMs?: number;
}

/**
 * Drains this worker when an operator asks for it (a `drain/<workerId>` record in the
 * coordinator, written by the gateway's admin route or `strata workers drain`): stops taking
 * writes, seals its hot rows, hands every segment to another worker (copy, verify, list hidden
 * there, one coordinator record per segment moves ownership), waits until no query that started
 * before a handoff can still be running, unlists the handed-off segments, removes its placements
 * and deregisters. Progress goes to the drain record. A restart resumes from the record; a
 * finished drain keeps the worker out of the cluster. See
 * docs/decisions/0016-drain-and-replication.md.
 *
 * The worker carries out its own drain (rather than the master leader): it is the one that can
 * stop its writes and seal, it holds the files, and no fencing is needed since no one else moves
 * its segments.
 */
export class WorkerDrain {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private record: DrainRecord | undefined;
  private readonly abort = new AbortController();
  private readonly mover: SegmentMover;

  constructor(private readonly o: WorkerDrainOptions) {
    this.mover = new SegmentMover(o);
  }

  /** The drain record as last seen (undefined: no drain asked for). */
  get state(): DrainRecord | undefined {
    return this.record;
  }

  /** Starts looking for a drain request. */
  start(): void {
    // At once: a worker restarted in the middle of a drain resumes it before anything else.
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.abort.abort(new StrataError('cancelled', 'The worker is stopping.'));
    await this.running?.catch(() => undefined);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.poll()
        .catch((err) => this.o.log.warn(errorFields(err), 'drain step failed; retrying'))
        .finally(() => this.schedule(this.o.pollMs ?? 2_000));
    }, delayMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const record = await this.o.coordinator.getDrain(this.o.workerId);
    this.record = record;
    if (!record || record.phase === 'done') return;
    try {
      await this.run(record);
    } catch (err) {
      if (this.stopped) return;
      const message = err instanceof Error ? err.message : String(err);
      await this.report({ lastError: message }).catch(() => undefined);
      throw err;
    }
  }

  private async report(change: Partial<DrainRecord>): Promise<void> {
    const base = this.record ?? (await this.o.coordinator.getDrain(this.o.workerId));
    if (!base) throw new StrataError('cancelled', 'The drain record was removed.');
    const next: DrainRecord = { ...base, ...change, updatedAt: new Date().toISOString() };
    if (change.lastError === undefined) delete next.lastError;
    this.record = next;
    await this.o.coordinator.putDrain(next);
  }

  private async run(record: DrainRecord): Promise<void> {
    const { storage, log } = this.o;
    if (record.phase === 'requested' || record.phase === 'sealing') {
      await this.report({ phase: 'sealing' });
      await this.o.markDraining();
      await storage.stopWrites('This worker is being drained and takes no writes; send them to another worker.');
      const sealed = await storage.sealAll();
      log.info({ sealed: sealed.length }, 'drain: writes stopped, hot rows sealed');
    } else {
      // Resumed after a restart: the registration and the refusal are not persistent.
      await this.o.markDraining();
      await storage.stopWrites('This worker is being drained and takes no writes; send them to another worker.');
      await storage.sealAll();
    }
    const handed = await this.moveSegments();
    await this.report({ phase: 'settling' });
    await this.mover.settle(handed, this.o.graceMs, this.abort.signal);
    const left = (await storage.listSegments()).filter((s) => s.handoff === undefined || s.handoff === 'outgoing');
    if (left.length > 0) throw new StrataError('internal', `${left.length} segments are still listed here.`);
    await this.o.coordinator.removePlacements(this.o.workerId);
    await this.report({ phase: 'done' });
    await this.o.deregister();
    log.info({ workerId: this.o.workerId }, 'drain finished: every segment moved, placements removed, deregistered');
  }

  /** Hands every segment of this worker to another worker; answers the handoffs. */
  private async moveSegments(): Promise<Handed[]> {
    const { storage } = this.o;
    // Its own segments (and those it had begun to hand off); replicas of other workers' segments stay
    // behind: their primaries make new copies elsewhere once this worker has left.
    const segments = (await storage.listSegments()).filter((s) => s.handoff === undefined || s.handoff === 'outgoing');
    const recorded = await this.mover.recorded();
    await this.report({
      phase: 'moving',
      segmentsTotal: segments.length,
      bytesTotal: segments.reduce((n, s) => n + s.byteSize, 0),
      segmentsMoved: 0,
      bytesMoved: 0,
    });
    const handed: Handed[] = [];
    let moved = 0;
    let bytes = 0;
    for (const segment of segments) {
      if (this.stopped) throw new StrataError('cancelled', 'The worker is stopping.');
      const workers = await this.mover.receivers();
      const existing = recorded.get(segment.segmentId);
      const to = existing ? workers.find((w) => w.workerId === existing.toWorkerId) : receiverFor(segment.segmentId, workers);
      if (!to)
        throw new StrataError(
          'unavailable',
          `Worker ${existing?.toWorkerId} that took segment ${segment.segmentId} is not registered.`,
        );
      handed.push(await this.mover.handOff(segment, to, this.abort.signal, existing));
      moved++;
      bytes += segment.byteSize;
      await this.report({ segmentsMoved: moved, bytesMoved: bytes });
    }
    return handed;
  }
}
