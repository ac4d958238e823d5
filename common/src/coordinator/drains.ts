import { notFound, StrataError } from '../errors.js';
import type { Coordinator, DrainRecord } from './coordinator.js';

/** The record a drain request creates: nothing counted yet. */
export function newDrainRecord(workerId: string, nowIso: string): DrainRecord {
  return {
    workerId,
    phase: 'requested',
    requestedAt: nowIso,
    updatedAt: nowIso,
    segmentsTotal: 0,
    segmentsMoved: 0,
    bytesTotal: 0,
    bytesMoved: 0,
  };
}

/** A worker as operators see it: registered, or gone after a drain. */
export interface ClusterWorker {
  workerId: string | null;
  endpoint: string | null;
  registered: boolean;
  writable: boolean;
  draining: boolean;
  freeBytes: number | null;
  drain: DrainRecord | null;
}

/** Registered workers, then drained or draining ones that are not registered, each with its drain. */
export async function listClusterWorkers(coordinator: Coordinator): Promise<ClusterWorker[]> {
  const [workers, drains] = await Promise.all([coordinator.listWorkers(), coordinator.listDrains()]);
  const byId = new Map(drains.map((d) => [d.workerId, d]));
  const out: ClusterWorker[] = workers.map((w) => {
    const drain = w.workerId === undefined ? undefined : byId.get(w.workerId);
    if (w.workerId !== undefined) byId.delete(w.workerId);
    return {
      workerId: w.workerId ?? null,
      endpoint: w.endpoint,
      registered: true,
      writable: w.writable,
      draining: w.draining === true,
      freeBytes: w.freeBytes,
      drain: drain ?? null,
    };
  });
  for (const d of byId.values()) {
    out.push({
      workerId: d.workerId,
      endpoint: null,
      registered: false,
      writable: false,
      draining: d.phase !== 'done',
      freeBytes: null,
      drain: d,
    });
  }
  return out;
}

/**
 * Records a drain request for a registered worker (the worker carries it out). Refused with
 * `conflict` when no other writable worker could take its data; repeating it answers the drain
 * under way.
 */
export async function requestWorkerDrain(coordinator: Coordinator, workerId: string): Promise<DrainRecord> {
  const existing = await coordinator.getDrain(workerId);
  if (existing) return existing;
  const workers = await coordinator.listWorkers();
  if (!workers.some((w) => w.workerId === workerId)) throw notFound(`Worker ${workerId} is not registered.`);
  if (!workers.some((w) => w.workerId !== undefined && w.workerId !== workerId && w.writable && !w.draining))
    throw new StrataError('conflict', `No other writable worker is registered to take the data of worker ${workerId}.`);
  return coordinator.requestDrain(workerId);
}
