import { decodeFragmentStatement, decodeFragmentTarget, implementService, type Logger, StrataError } from '@strata/common';
import { WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import type { StoragePolicyPoller } from '../storage-policy-poller.js';
import type { StorageEngine } from './storage-engine.js';

/**
 * WorkerStorageService: what this worker holds per schema (usage figures), and a schema drop
 * applied at once when a gateway drops a schema (workers that miss the call apply it from the
 * storage policy they poll).
 */
export function workerStorageService(storage: StorageEngine, policy: StoragePolicyPoller, log: Logger) {
  return {
    definition: WorkerStorageServiceService,
    implementation: implementService(
      WorkerStorageServiceService,
      {
        applySchemaDrop: async (req) => {
          const gone = await policy.applyDrop({ dropId: req.dropId, accountId: req.accountId, schema: req.schema });
          return { rowsDeleted: gone?.rows ?? 0, segmentsDeleted: gone?.segments ?? 0 };
        },
        purgeStep: async (req) => {
          if (!req.fragment) throw new StrataError('invalid', 'A purge step needs its fragment.');
          const { accountId, schema, fromUs, toUs } = decodeFragmentTarget(req.fragment);
          // A purge deletes what its statement matches, over every row: bounds the statement does
          // not repeat would be ignored and widen the purge (decision 0018), so they are refused.
          if (fromUs !== undefined || toUs !== undefined)
            throw new StrataError(
              'invalid',
              'A purge fragment must state its whole predicate, without storage-applied time bounds.',
            );
          const progress = await storage.purgeStep(
            req.jobId,
            accountId,
            schema,
            decodeFragmentStatement(req.fragment),
            req.maxSegments > 0 ? req.maxSegments : 4,
          );
          return progress;
        },
        describeStorage: async (req) => ({
          schemas: await storage.describe(req.accountId),
          freeBytes: storage.freeBytes,
        }),
      },
      log,
    ),
  };
}
