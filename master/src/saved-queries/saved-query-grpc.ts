import type { HandlersOf } from '@strata/common';
import type { SavedQueryServiceService } from '@strata/proto/savedqueries/v1/saved_queries';
import type { SavedQueryRepository } from './saved-query-repository.js';

/** gRPC handlers of the master's SavedQueryService. */
export function savedQueryHandlers(repo: () => SavedQueryRepository): HandlersOf<typeof SavedQueryServiceService> {
  return {
    listSavedQueries: async (req) => ({ queries: await repo().list(req.accountId) }),
    createSavedQuery: async (req) => ({ query: await repo().create(req.accountId, req.name, req.query, req.createdByUserId) }),
    getSavedQuery: async (req) => ({ query: await repo().get(req.accountId, req.queryId) }),
    deleteSavedQuery: async (req) => ({ deleted: await repo().delete(req.accountId, req.queryId) }),
  };
}
