import { createHash } from 'node:crypto';
import { componentLogger, type Logger, type WorkerRegistration } from '@strata/common';
import { SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import { SegmentTransferServiceService } from '@strata/proto/worker/v1/transfer';
import { CycleDuty, type DutyCycle } from '../cycle-duty.js';
import type { LeaderState } from '../leader-state.js';

const CALL_TIMEOUT_MS = 30_000;

/** Rendezvous choice among holders: every leader picks the same one for a segment. */
function chosen(segmentId: string, holders: string[]): string {
  let best = '';
  let bestScore = '';
  for (const h of holders) {
    const score = createHash('sha256').update(`${segmentId}/${h}`).digest('hex');
    if (score > bestScore) {
      best = h;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Leader duty restoring workers written off as lost (`lost/<workerId>`, from `strata placements
 * write-off`): for each lost worker that still has placements, it lists every registered
 * worker's replicas, promotes one copy of each segment whose primary was the lost worker (its
 * holder then replicates it again up to the replication factor) and drops the other copies;
 * once no registered worker holds a replica of it any more, it removes the lost worker's
 * placements (fenced), and queries answer without it. Until then they answer 503 naming it, so
 * no answer misses a segment that a replica could give. A registered worker that cannot be
 * listed postpones the removal (it may hold replicas). See docs/decisions/0016-drain-and-replication.md.
 */
export class ReplicaRecoveryDuty extends CycleDuty {
  readonly name = 'replica-recovery';

  constructor(private readonly intervalMs = 1_000) {
    super();
  }

  protected cycleFor(state: LeaderState): DutyCycle {
    const log = componentLogger(state.log, 'replica-recovery');
    return {
      run: (signal) =>
        this.runOnce(state, log, signal).catch((err) =>
          log.warn({ reason: err instanceof Error ? err.message : String(err) }, 'replica recovery round failed'),
        ),
      nextDelayMs: async () => this.intervalMs,
    };
  }

  private async runOnce(state: LeaderState, log: Logger, signal: AbortSignal): Promise<void> {
    const { coordinator } = state;
    const lost = new Set(await coordinator.listLost());
    if (lost.size === 0) return;
    const holders = new Set((await coordinator.listPlacements()).map((p) => p.workerId));
    const pending = [...lost].filter((id) => holders.has(id));
    if (pending.length === 0) return;
    const workers = (await coordinator.listWorkers()).filter(
      (w): w is WorkerRegistration & { workerId: string } => w.workerId !== undefined && !lost.has(w.workerId),
    );
    // Replicas of lost primaries, by segment: which registered workers hold a copy.
    const copies = new Map<string, { primary: string; holders: string[] }>();
    let complete = true;
    for (const w of workers) {
      if (signal.aborted) return;
      try {
        const { segments } = await state.channels
          .client(SegmentServiceService, w.endpoint)
          .listSegments({ accountId: '', includeReplicas: true }, { timeoutMs: CALL_TIMEOUT_MS });
        for (const s of segments) {
          if (!s.replicaOf || !lost.has(s.replicaOf)) continue;
          const entry = copies.get(s.segmentId) ?? { primary: s.replicaOf, holders: [] };
          entry.holders.push(w.workerId);
          copies.set(s.segmentId, entry);
        }
      } catch (err) {
        complete = false;
        log.warn({ worker: w.endpoint, reason: err instanceof Error ? err.message : String(err) }, 'could not list a worker');
      }
    }
    const endpointOf = new Map(workers.map((w) => [w.workerId, w.endpoint]));
    const promote = new Map<string, string[]>();
    const drop = new Map<string, { segmentIds: string[]; primary: string }[]>();
    for (const [segmentId, c] of copies) {
      const keeper = chosen(segmentId, c.holders);
      promote.set(keeper, [...(promote.get(keeper) ?? []), segmentId]);
      for (const h of c.holders)
        if (h !== keeper) drop.set(h, [...(drop.get(h) ?? []), { segmentIds: [segmentId], primary: c.primary }]);
    }
    let promoted = 0;
    for (const [workerId, segmentIds] of promote) {
      if (signal.aborted) return;
      // A promotion is a leader command: fenced, and it carries the term.
      await state.assertLeadership?.();
      const res = await state.channels
        .client(SegmentServiceService, endpointOf.get(workerId)!)
        .promoteReplicas({ segmentIds, term: state.term }, { timeoutMs: CALL_TIMEOUT_MS });
      promoted += res.promoted.length;
    }
    for (const [workerId, drops] of drop) {
      for (const d of drops) {
        if (signal.aborted) return;
        await state.channels
          .client(SegmentTransferServiceService, endpointOf.get(workerId)!)
          .dropReplicas({ segmentIds: d.segmentIds, primaryWorkerId: d.primary }, { timeoutMs: CALL_TIMEOUT_MS });
      }
    }
    if (promoted > 0) log.info({ promoted, lost: pending }, 'replicas of lost workers promoted');
    // Placements go only once every registered worker was listed and all copies were promoted
    // (the next round lists again and finds none left).
    if (!complete || copies.size > 0) return;
    for (const workerId of pending) {
      await state.assertLeadership?.();
      const removed = await coordinator.removePlacements(workerId);
      log.info({ workerId, placements: removed }, 'lost worker restored from replicas; its placements are removed');
    }
  }
}
