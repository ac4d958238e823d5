import type { HandlersOf } from '@strata/common';
import type { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import type { StoragePolicyRepository } from './storage-policy-repository.js';

/** gRPC handlers of the master's StoragePolicyService over the repository. */
export function storagePolicyHandlers(repo: () => StoragePolicyRepository): HandlersOf<typeof StoragePolicyServiceService> {
  return {
    getStoragePolicy: async () => repo().policy(),
    listSchemaRetentions: async (req) => ({ retentions: await repo().schemaRetentions(req.accountId) }),
    putSchemaRetention: async (req) => ({
      retentions: await repo().putSchemaRetention(req.accountId, req.schema, req.retention, req.updatedBy),
    }),
    recordSchemaDrop: async (req) => ({ drop: await repo().recordDrop(req.accountId, req.schema, req.droppedBy) }),
  };
}
