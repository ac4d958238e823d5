import { implementService, type Logger } from '@strata/common';
import { type Segment, SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import type { SegmentInfo } from '../storage/catalog.js';
import type { StorageEngine } from '../storage/storage-engine.js';

function segmentToProto(s: SegmentInfo): Segment {
  return {
    segmentId: s.segmentId,
    accountId: s.accountId,
    schema: s.schema,
    minTimestampMs: s.minTsUs === null ? 0 : Math.floor(s.minTsUs / 1000),
    maxTimestampMs: s.maxTsUs === null ? 0 : Math.floor(s.maxTsUs / 1000),
    rowCount: s.rowCount,
    byteSize: s.byteSize,
    createdAtMs: s.createdAtMs,
    replicaOf: s.handoff === 'replica' ? (s.peerWorkerId ?? '') : '',
  };
}

/**
 * SegmentService of a worker: the catalog for the master's compaction planner, Compact, and the
 * promotion of replicas whose primary was lost (the leader's replica recovery).
 */
export function segmentService(storage: StorageEngine, log: Logger) {
  return {
    definition: SegmentServiceService,
    implementation: implementService(
      SegmentServiceService,
      {
        // The compaction planner sees only this worker's own segments; segments in a handoff or
        // replicas of other workers' segments are never compacted (the recovery duty asks for replicas).
        listSegments: async (req) => ({
          segments: (await storage.listSegments(req.accountId === '' ? undefined : req.accountId))
            .filter((s) => (req.includeReplicas ? s.handoff !== 'incoming' : s.handoff === undefined))
            .map(segmentToProto),
        }),
        promoteReplicas: async (req) => ({ promoted: await storage.promoteReplicas(req.segmentIds, req.term) }),
        compact: async (req) => {
          const merged = await storage.compact(
            { accountId: req.accountId, schema: req.schema, segmentIds: req.segmentIds },
            req.term,
          );
          return { segment: segmentToProto(merged) };
        },
      },
      log,
    ),
  };
}
