/**
 * Cluster administration (docs/api.md, "Cluster"): the registered workers and draining one
 * (docs/decisions/0016-drain-and-replication.md). Global admins only: a drain moves every
 * account's data.
 *
 * The gateway only writes the request (a drain record in the coordinator); the worker carries the
 * drain out and reports its progress in the same record.
 */
import {
  type ClusterWorker,
  type Coordinator,
  type DrainRecord,
  listClusterWorkers,
  notFound,
  type RebalanceRequest,
  requestWorkerDrain,
  StrataError,
} from '@strata/common';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';

const drainJson = z.object({
  workerId: z.string(),
  phase: z.enum(['requested', 'sealing', 'moving', 'settling', 'done']),
  requestedAt: z.string(),
  updatedAt: z.string(),
  segmentsTotal: z.number(),
  segmentsMoved: z.number(),
  bytesTotal: z.number(),
  bytesMoved: z.number(),
  lastError: z.string().nullable(),
});

const rebalanceJson = z.object({
  requestId: z.string(),
  requestedAt: z.string(),
  workers: z.array(
    z.object({
      workerId: z.string(),
      phase: z.enum(['moving', 'settling', 'done']),
      segmentsTotal: z.number(),
      segmentsMoved: z.number(),
      bytesTotal: z.number(),
      bytesMoved: z.number(),
      updatedAt: z.string(),
      lastError: z.string().nullable(),
    }),
  ),
});

/** The latest rebalance with each worker's part (reported by the workers as they go). */
async function rebalanceView(coordinator: Coordinator, request: RebalanceRequest): Promise<z.infer<typeof rebalanceJson>> {
  const progress = (await coordinator.listRebalanceProgress()).filter((p) => p.requestId === request.requestId);
  return {
    requestId: request.requestId,
    requestedAt: request.requestedAt,
    workers: progress.map((p) => ({
      workerId: p.workerId,
      phase: p.phase,
      segmentsTotal: p.segmentsTotal,
      segmentsMoved: p.segmentsMoved,
      bytesTotal: p.bytesTotal,
      bytesMoved: p.bytesMoved,
      updatedAt: p.updatedAt,
      lastError: p.lastError ?? null,
    })),
  };
}

const workerJson = z.object({
  workerId: z.string().nullable(),
  endpoint: z.string().nullable(),
  registered: z.boolean(),
  writable: z.boolean(),
  draining: z.boolean(),
  freeBytes: z.number().nullable(),
  drain: drainJson.nullable(),
});

function drainView(d: DrainRecord): z.infer<typeof drainJson> {
  return {
    workerId: d.workerId,
    phase: d.phase,
    requestedAt: d.requestedAt,
    updatedAt: d.updatedAt,
    segmentsTotal: d.segmentsTotal,
    segmentsMoved: d.segmentsMoved,
    bytesTotal: d.bytesTotal,
    bytesMoved: d.bytesMoved,
    lastError: d.lastError ?? null,
  };
}

/** A worker of `listClusterWorkers` as JSON. */
function workerView(w: ClusterWorker): z.infer<typeof workerJson> {
  return { ...w, drain: w.drain ? drainView(w.drain) : null };
}

const WORKER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function workerIdOf(raw: string | undefined): string {
  const id = (raw ?? '').toLowerCase();
  if (!WORKER_ID.test(id)) throw new StrataError('invalid', 'A worker id is a UUID (see GET /cluster/workers).');
  return id;
}

export const clusterRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/cluster/rebalance',
    operation: 'cluster.manage',
    summary:
      'Evens out existing segments over the workers: each worker holding more than the average hands its oldest segments to workers below it, the same way a drain does (no query misses or double-counts a row). Answers 202 with the request; a new request replaces an older one.',
    responseSchema: rebalanceJson,
    successStatuses: [202],
    async handler(rc) {
      const request = await rc.deps.coordinator.requestRebalance();
      return { status: 202, body: await rebalanceView(rc.deps.coordinator, request) };
    },
  },
  {
    method: 'GET',
    path: '/cluster/rebalance',
    operation: 'cluster.manage',
    summary:
      "The latest rebalance and each worker's part: phase (moving, settling, done), segments and bytes moved of total, last error. 404 when none was asked for.",
    responseSchema: rebalanceJson,
    async handler(rc) {
      const request = await rc.deps.coordinator.getRebalance();
      if (!request) throw notFound('No rebalance was asked for.');
      return { body: await rebalanceView(rc.deps.coordinator, request) };
    },
  },
  {
    method: 'GET',
    path: '/cluster/workers',
    operation: 'cluster.manage',
    summary:
      'The workers: registered ones (endpoint, writable, draining, free bytes) and drained ones that left, each with its drain and its progress (segments and bytes moved of total).',
    responseSchema: z.array(workerJson),
    async handler(rc) {
      return { body: (await listClusterWorkers(rc.deps.coordinator)).map(workerView) };
    },
  },
  {
    method: 'POST',
    path: '/cluster/workers/:workerId/drain',
    operation: 'cluster.manage',
    summary:
      'Drains a worker: it stops taking writes, seals its hot rows, hands every segment to the other workers (no query misses or double-counts a row meanwhile), removes its placements and deregisters. Answers 202 with the drain; repeating it answers the drain under way. 409 when no other writable worker could take the data.',
    responseSchema: drainJson,
    successStatuses: [202],
    async handler(rc) {
      const record = await requestWorkerDrain(rc.deps.coordinator, workerIdOf(rc.params.workerId));
      return { status: 202, body: drainView(record) };
    },
  },
  {
    method: 'GET',
    path: '/cluster/workers/:workerId/drain',
    operation: 'cluster.manage',
    summary:
      "A worker's drain: phase (requested, sealing, moving, settling, done), segments and bytes moved of total, last error.",
    responseSchema: drainJson,
    async handler(rc) {
      const id = workerIdOf(rc.params.workerId);
      const record = await rc.deps.coordinator.getDrain(id);
      if (!record) throw notFound(`Worker ${id} has no drain.`);
      return { body: drainView(record) };
    },
  },
];
