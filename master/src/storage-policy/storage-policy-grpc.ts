import { type HandlersOf, notFound } from '@strata/common';
import type { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import type { PurgeJob, PurgeRepository } from './purge-repository.js';
import type { StoragePolicyRepository } from './storage-policy-repository.js';

/** gRPC handlers of the master's StoragePolicyService over the repository. */
export function storagePolicyHandlers(
  repo: () => StoragePolicyRepository,
  purges: () => PurgeRepository,
): HandlersOf<typeof StoragePolicyServiceService> {
  const found = (job: PurgeJob | undefined, jobId: string) => {
    if (!job) throw notFound(`Purge job ${jobId} does not exist.`);
    return job;
  };
  return {
    startPurge: async (req) => ({
      job: await purges().start({
        accountId: req.accountId,
        schema: req.schema,
        predicate: req.predicate,
        fragment: req.fragment,
        requestedBy: req.requestedBy,
        workers: req.workers,
      }),
    }),
    getPurge: async (req) => ({ job: found(await purges().get(req.accountId, req.jobId), req.jobId) }),
    listPurges: async (req) => ({ jobs: await purges().list(req.accountId) }),
    getStoragePolicy: async () => repo().policy(),
    listSchemaRetentions: async (req) => ({ retentions: await repo().schemaRetentions(req.accountId) }),
    putSchemaRetention: async (req) => ({
      retentions: await repo().putSchemaRetention(req.accountId, req.schema, req.retention, req.updatedBy),
    }),
    recordSchemaDrop: async (req) => ({ drop: await repo().recordDrop(req.accountId, req.schema, req.droppedBy) }),
  };
}
