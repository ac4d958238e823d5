import { forbidden, invalid, isGuid, notFound } from '@strata/common';
import { type SavedQuery, SavedQueryServiceService } from '@strata/proto/savedqueries/v1/saved_queries';
import { z } from 'zod';
import { holdsOnAccount, isGlobalAdmin } from '../auth/principal.js';
import type { RouteContext, RouteDef } from '../http/route.js';

/**
 * Saved queries of an account (compatibility reference §1.6, logsh's TUI). They need what running
 * a query needs (`query.run`): whoever may query the account lists and saves them; a saved query
 * is deleted by its creator, an account admin or a global admin. The query text is stored as
 * written (it may name schemas that do not exist yet) and checked when it runs.
 */

const BASE = '/search/:accountId/saved-queries';
/** The query engine's own limit on query text (parse-kql.ts). */
const MAX_QUERY_LENGTH = 65_536;

const createBody = z.object({
  name: z.string().trim().min(1, 'name is required').max(200),
  query: z.string().min(1, 'query is required').max(MAX_QUERY_LENGTH),
});

const savedQueryJsonSchema = z.object({
  queryId: z.string(),
  name: z.string(),
  query: z.string(),
  createdByUserId: z.string(),
  createdAt: z.string(),
});

function savedQueryJson(q: SavedQuery): z.output<typeof savedQueryJsonSchema> {
  return { queryId: q.queryId, name: q.name, query: q.query, createdByUserId: q.createdByUserId, createdAt: q.createdAt };
}

function accountOf(rc: RouteContext): string {
  const id = rc.params.accountId!;
  if (!isGuid(id)) throw invalid('The account id must be a GUID.');
  return id.toLowerCase();
}

export const savedQueryRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: BASE,
    operation: 'query.run',
    summary: "The account's saved queries by name: [{ queryId, name, query, createdByUserId, createdAt }].",
    responseSchema: z.array(savedQueryJsonSchema),
    async handler(rc) {
      const { queries } = await rc.deps.master.service(SavedQueryServiceService).listSavedQueries({ accountId: accountOf(rc) });
      return { body: queries.map(savedQueryJson) };
    },
  },
  {
    method: 'POST',
    path: BASE,
    operation: 'query.run',
    summary: 'Save a query: { name, query } → 201 with the saved query (queryId assigned).',
    requestSchema: createBody,
    responseSchema: savedQueryJsonSchema,
    successStatuses: [201],
    async handler(rc) {
      const { name, query } = await rc.body(createBody);
      const res = await rc.deps.master
        .service(SavedQueryServiceService)
        .createSavedQuery({ accountId: accountOf(rc), name, query, createdByUserId: rc.principal!.userId });
      return { status: 201, body: savedQueryJson(res.query!) };
    },
  },
  {
    method: 'DELETE',
    path: `${BASE}/:queryId`,
    operation: 'query.run',
    summary: 'Delete a saved query (its creator, an account admin or a global admin). 204; 404 when none.',
    successStatuses: [204],
    async handler(rc) {
      const accountId = accountOf(rc);
      const queryId = rc.params.queryId!;
      if (!isGuid(queryId)) throw invalid('The query id must be a GUID.');
      const service = rc.deps.master.service(SavedQueryServiceService);
      const { query } = await service.getSavedQuery({ accountId, queryId });
      if (!query) throw notFound(`Saved query ${queryId.toLowerCase()} does not exist.`);
      const p = rc.principal!;
      const mayDelete =
        query.createdByUserId === p.userId.toLowerCase() ||
        (!p.scope && (isGlobalAdmin(p) || holdsOnAccount(p, accountId, ['Service.Account.Admin'])));
      if (!mayDelete) throw forbidden('Only the creator of a saved query or an account admin can delete it.');
      await service.deleteSavedQuery({ accountId, queryId });
      return { status: 204 };
    },
  },
];
