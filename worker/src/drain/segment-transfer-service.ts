import { createReadStream } from 'node:fs';
import { type ChannelPool, type ColumnSchema, implementService, type Logger, StrataError } from '@strata/common';
import {
  type SegmentDescriptor as ProtoSegmentDescriptor,
  SegmentTransferServiceService,
} from '@strata/proto/worker/v1/transfer';
import type { PlacementRecorder } from '../ingest/placement-recorder.js';
import type { SegmentDescriptor } from '../storage/handoff.js';
import { isSegmentFormat } from '../storage/segment-format.js';
import type { StorageEngine } from '../storage/storage-engine.js';

/** Bytes per streamed chunk of a segment file (well under gRPC's 4 MiB message limit). */
const CHUNK_BYTES = 1 << 20;

export function descriptorToProto(d: SegmentDescriptor): ProtoSegmentDescriptor {
  return {
    segmentId: d.segmentId,
    accountId: d.accountId,
    schema: d.schema,
    ...(d.minTsUs === null ? {} : { minTsUs: d.minTsUs }),
    ...(d.maxTsUs === null ? {} : { maxTsUs: d.maxTsUs }),
    rowCount: d.rowCount,
    byteSize: d.byteSize,
    columnsJson: JSON.stringify(d.columns),
    createdAtMs: d.createdAtMs,
    sha256: d.sha256,
    format: d.format,
  };
}

function descriptorFromProto(p: ProtoSegmentDescriptor | undefined): SegmentDescriptor {
  if (!p?.accountId || !p.schema || !/^[0-9a-f]{64}$/.test(p.sha256))
    throw new StrataError('invalid', 'A segment to adopt needs an account, a schema and a SHA-256.');
  let columns: ColumnSchema[];
  try {
    columns = JSON.parse(p.columnsJson) as ColumnSchema[];
  } catch {
    throw new StrataError('invalid', 'The segment columns are not JSON.');
  }
  if (!Array.isArray(columns) || !columns.every((c) => typeof c?.name === 'string' && typeof c?.type === 'string'))
    throw new StrataError('invalid', 'The segment columns must be [{ name, type }].');
  // A sender older than decision 0025 sends no format: it wrote Parquet only.
  const format = p.format === '' ? 'parquet' : p.format;
  if (!isSegmentFormat(format)) throw new StrataError('invalid', `Unknown segment format ${JSON.stringify(p.format)}.`);
  return {
    segmentId: p.segmentId,
    accountId: p.accountId,
    schema: p.schema,
    minTsUs: p.minTsUs ?? null,
    maxTsUs: p.maxTsUs ?? null,
    rowCount: p.rowCount,
    byteSize: p.byteSize,
    columns,
    createdAtMs: p.createdAtMs,
    sha256: p.sha256,
    format,
  };
}

/**
 * SegmentTransferService of a worker (proto/strata/worker/v1/transfer.proto): the copy primitive
 * of drains. The receiving worker pulls the file from the giving one, so the bytes flow once and
 * the giver only answers reads; the catalog side is storage/handoff.ts.
 */
export function segmentTransferService(
  storage: StorageEngine,
  placements: PlacementRecorder,
  channels: ChannelPool,
  log: Logger,
) {
  return {
    definition: SegmentTransferServiceService,
    implementation: implementService(
      SegmentTransferServiceService,
      {
        readSegment: async (req, send) => {
          const file = await storage.segmentFile(req.accountId, req.segmentId);
          for await (const chunk of createReadStream(file, { highWaterMark: CHUNK_BYTES })) {
            await send({ data: chunk as Buffer });
          }
        },
        adoptSegment: async (req, ctx) => {
          const desc = descriptorFromProto(req.segment);
          if (!req.sourceEndpoint || !req.sourceWorkerId)
            throw new StrataError('invalid', 'A segment to adopt needs its source endpoint and worker id.');
          // This worker holds the account's data from the moment the copy may be read here: the
          // placement comes first, as for a first write (decision 0009).
          await placements.ensure(desc.accountId);
          const source = channels.client(SegmentTransferServiceService, req.sourceEndpoint);
          const stream = source.readSegment(
            { accountId: desc.accountId, segmentId: desc.segmentId },
            { signal: ctx.signal, timeoutMs: 600_000 },
          );
          async function* chunks() {
            for await (const chunk of stream) yield chunk.data;
          }
          const as = req.replica ? 'replica' : 'incoming';
          const fetched = await storage.adoptSegment(desc, req.sourceWorkerId, chunks(), as);
          log.info(
            { segmentId: desc.segmentId, accountId: desc.accountId, bytes: desc.byteSize, fetched, as },
            'segment adopted',
          );
          return { fetched };
        },
        dropReplicas: async (req) => ({
          dropped: (await storage.dropReplicas(req.segmentIds, req.primaryWorkerId === '' ? undefined : req.primaryWorkerId))
            .length,
        }),
        settleSegment: async (req) => {
          await storage.settleIncoming(req.accountId, req.segmentId, req.handoffRevision);
          return {};
        },
      },
      log,
    ),
  };
}
