import { columnTypeFromProto, implementService, type Logger, StrataError } from '@strata/common';
import { type AppendRequest, IngestServiceService } from '@strata/proto/ingest/v1/ingest';
import type { AppendInput } from '../storage/hot-writer.js';
import type { StorageEngine } from '../storage/storage-engine.js';
import type { PlacementRecorder } from './placement-recorder.js';
import { killAfterCommitIfArmed } from './test-fault-points.js';

/** Converts the wire request into the storage engine's input, refusing unknown column types. */
function appendInputOf(req: AppendRequest): AppendInput {
  return {
    accountId: req.accountId,
    inflowTimestampUs: req.inflowTimestampUs,
    inflowHost: req.inflowHost,
    sourceAddress: req.sourceAddress,
    agent: req.agent === '' ? null : req.agent,
    idempotencyKey: req.idempotencyKey === '' ? undefined : req.idempotencyKey,
    contentHash: req.contentHash,
    keyViewRevision: req.keyViewRevision,
    parts: req.parts.map((p) => ({
      schema: p.schema,
      rows: p.rows,
      rowCount: p.rowCount,
      columns: p.columns.map((c) => {
        const type = columnTypeFromProto(c.type);
        if (!type) throw new StrataError('invalid', `Schema ${p.schema}: field '${c.name}' has no valid type.`);
        return { name: c.name, type };
      }),
    })),
  };
}

/**
 * IngestService of a worker: Append answers once the request is durable, and only after this
 * worker is recorded as a holder of the account's data. FenceKey answers a gateway that is about
 * to store a keyed request on another worker (docs/decisions/0029-keyed-batches-across-owners.md).
 */
export function ingestService(storage: StorageEngine, placements: PlacementRecorder, log: Logger) {
  return {
    definition: IngestServiceService,
    implementation: implementService(
      IngestServiceService,
      {
        append: async (req) => {
          const input = appendInputOf(req);
          await placements.ensure(input.accountId);
          const result = await storage.append(input);
          if (!result.duplicate) killAfterCommitIfArmed(req.idempotencyKey);
          return { rowsStored: result.rowsStored, duplicate: result.duplicate };
        },
        fenceKey: async (req) => {
          if (req.idempotencyKey === '') throw new StrataError('invalid', 'FenceKey needs an idempotency key.');
          return storage.fenceKey({
            accountId: req.accountId,
            idempotencyKey: req.idempotencyKey,
            contentHash: req.contentHash,
            keyViewRevision: req.keyViewRevision,
          });
        },
      },
      log,
    ),
  };
}
