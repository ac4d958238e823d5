/**
 * The query endpoints the clients call (docs/compatibility.md):
 *   POST /search/:accountId/kusto          run a query
 *   POST /search/:accountId/kusto/parse    parse status, result columns, completions
 *   GET  /search/:accountId/schemas        the account's tables and columns
 *
 * Who may query an account: operation `query.run` (access-policy.ts) — global admins, and holders
 * of Account.Admin, Account.Query or an Incident role on it; a scoped token needs a query scope
 * for the account, and then sees only the schemas its query patterns match (other tables do not
 * exist for it, also in schema.tables). A token's `queryTimeoutSeconds` shortens the server's
 * default; nothing exceeds the maximum.
 */
import type { ServerResponse } from 'node:http';
import { MAX_QUERY_SECONDS, StrataError } from '@strata/common';
import { z } from 'zod';
import { accountScope, anySchemaPatternMatches } from '../auth/token-scope.js';
import type { RouteContext, RouteDef } from '../http/route.js';
import { totalsBySchema, usageByWorker } from '../storage/usage.js';
import { accountMembers } from './account-members.js';
import { restrictCatalog } from './cluster/schema-catalog.js';
import { queryResultJson, variablesById, warmQueryEngine } from './engine.js';
import { parseQuery } from './parse-info.js';
import type { MissingWorker, QueryCoverage } from './query-coverage.js';
import { RESULT_TYPE_NAME, type SchemaCatalog } from './types.js';

/** Server default and maximum query run time. */
export const DEFAULT_QUERY_TIMEOUT_SECONDS = 60;
export const MAX_QUERY_TIMEOUT_SECONDS = MAX_QUERY_SECONDS;

/**
 * `variables` (`[{ id, type?, value }]`) fill `declare query_parameters(…)`; extra request fields
 * (querySource, properties) are accepted and ignored.
 * `allowPartial: true` accepts an answer without the data of workers that cannot be reached
 * (marked `partial: true` with `missingWorkers`) instead of 503.
 */
const variables = z.array(z.object({ id: z.string(), type: z.string().optional(), value: z.unknown() })).optional();
const queryBody = z.object({ query: z.string(), allowPartial: z.boolean().optional(), variables });
const parseBody = z.object({
  query: z.string(),
  cursorPosition: z.number().int().min(0).optional(),
  allowPartial: z.boolean().optional(),
  variables,
});

function accountOf(rc: RouteContext): string {
  return (rc.params.accountId as string).toLowerCase();
}

/** Who must answer this request (503 naming missing holders unless `allowPartial`). */
function coverageOf(rc: RouteContext, allowPartial: boolean | undefined): Promise<QueryCoverage> {
  return rc.deps.query.coverage(accountOf(rc), allowPartial === true);
}

/**
 * The catalog the caller may see: a scoped token only its query schemas. The account's members
 * (for `schema.users`) are read from the master only when the query text names them, and never
 * for a scoped token.
 */
async function callerCatalog(rc: RouteContext, coverage: QueryCoverage, query = '', fresh = false): Promise<SchemaCatalog> {
  const accountId = accountOf(rc);
  const catalog = await rc.deps.query.catalog(accountId, { fresh, coverage });
  const scope = rc.principal?.scope ? accountScope(rc.principal.scope, accountId)?.query : undefined;
  if (rc.principal?.scope && !scope) return { tables: [] };
  const visible = restrictCatalog(catalog, scope ? (schema) => anySchemaPatternMatches(scope.schemas, schema) : undefined);
  const withUsage = /schema\.usage/i.test(query)
    ? { ...visible, usage: await visibleUsage(rc, accountId, visible, coverage) }
    : visible;
  if (rc.principal?.scope || !/schema\.users/i.test(query)) return withUsage;
  return { ...withUsage, people: { accountId, members: await accountMembers(rc.deps, accountId) } };
}

/**
 * The usage figures of the schemas the caller sees (`schema.usage`). A worker that does not
 * answer makes them incomplete: 503 naming it, unless the request allows a partial answer.
 */
async function visibleUsage(rc: RouteContext, accountId: string, visible: SchemaCatalog, coverage: QueryCoverage) {
  const { workers, unreachable } = await usageByWorker(rc.deps.coordinator, rc.deps.channels, accountId);
  if (unreachable.length > 0 && !coverage.allowPartial)
    throw new StrataError('unavailable', `Workers holding data of this account cannot be reached: ${unreachable.join(', ')}.`, {
      retryAfterSeconds: 5,
    });
  const names = new Set(visible.tables.map((t) => t.name));
  return workers.flatMap((w) =>
    w.schemas
      .filter((s) => names.has(s.schema))
      .map((s) => ({
        schema: s.schema,
        worker: w.worker,
        rows: Number(s.hotRows) + Number(s.segmentRows),
        hotRows: Number(s.hotRows),
        segments: Number(s.segments),
        bytes: Number(s.segmentBytes),
        oldestUs: Number(s.minTimestampUs),
        newestUs: Number(s.maxTimestampUs),
      })),
  );
}

export function queryTimeoutMs(rc: RouteContext): number {
  const scope = rc.principal?.scope ? accountScope(rc.principal.scope, accountOf(rc))?.query : undefined;
  const requested = scope?.queryTimeoutSeconds;
  const seconds =
    typeof requested === 'number' && requested > 0
      ? Math.min(requested, MAX_QUERY_TIMEOUT_SECONDS)
      : DEFAULT_QUERY_TIMEOUT_SECONDS;
  return seconds * 1000;
}

/** Aborted when the client goes away before the answer is written. */
function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Marks a query answer that lacks some holders' data: `partial: true` and who is missing. */
function withMissingWorkers(json: string, missing: MissingWorker[]): string {
  if (missing.length === 0) return json;
  return `${json.slice(0, -1)},"partial":true,"missingWorkers":${JSON.stringify(missing)}}`;
}

export const queryRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/search/:accountId/kusto',
    operation: 'query.run',
    summary:
      'Run a KQL query: { query, variables? } (variables `[{ id, value }]` fill `declare query_parameters`). Answers { header, columns: [{ name, type }], results: [{ column: value }], render?, truncated }. Query errors answer 400 with token positions into the query.',
    requestSchema: queryBody,
    async handler(rc) {
      const { query, allowPartial, variables: given } = await rc.body(queryBody);
      await warmQueryEngine();
      // The workers are those of the account's current view (decision 0027: the view is read for
      // every query, and the query may start on the last one while it is read). A query that fails
      // to plan against the cached catalog is planned once more against a fresh one: perhaps a
      // schema or column written through another gateway since it was cached.
      const { result, coverage } = await rc.deps.query.runCovered(
        query,
        (covered, fresh) => callerCatalog(rc, covered, query, fresh),
        {
          accountId: accountOf(rc),
          allowPartial: allowPartial === true,
          parameters: variablesById(given),
          timeoutMs: queryTimeoutMs(rc),
          signal: clientGone(rc.koa.res),
        },
      );
      // Written straight from the columns (result-json.ts): the same JSON as the row objects would give.
      return {
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: withMissingWorkers(queryResultJson(result), coverage.missing),
      };
    },
  },
  {
    method: 'POST',
    path: '/search/:accountId/kusto/parse',
    operation: 'query.run',
    summary:
      'Parse a KQL query without running it: { query, cursorPosition? }. Answers { parseSuccess, error, header, columns, suggestions: { autoCompletions } }.',
    requestSchema: parseBody,
    async handler(rc) {
      const { query, cursorPosition, allowPartial, variables: given } = await rc.body(parseBody);
      await warmQueryEngine();
      const coverage = await coverageOf(rc, allowPartial);
      const parsed = parseQuery(query, await callerCatalog(rc, coverage, query), cursorPosition, {
        parameters: variablesById(given),
      });
      return { body: coverage.missing.length > 0 ? { ...parsed, partial: true, missingWorkers: coverage.missing } : parsed };
    },
  },
  {
    method: 'GET',
    path: '/search/:accountId/schemas',
    operation: 'query.run',
    summary:
      "The account's tables (schemas) with their columns: [{ name, columns: [{ name, type }] }]. ?allowPartial=true answers without unreachable workers' schemas, naming them in Strata-Missing-Workers. ?usage=true adds each table's `usage`: { rows, hotRows, segments, bytes, oldest, newest } over all workers.",
    async handler(rc) {
      const allowPartial = String(rc.koa.query.allowPartial ?? rc.koa.query.allowpartial ?? '').toLowerCase() === 'true';
      const coverage = await coverageOf(rc, allowPartial);
      const catalog = await callerCatalog(rc, coverage);
      const missing = coverage.missing;
      const withUsage = String(rc.koa.query.usage ?? '').toLowerCase() === 'true';
      const usage = withUsage
        ? totalsBySchema((await usageByWorker(rc.deps.coordinator, rc.deps.channels, accountOf(rc))).workers)
        : undefined;
      return {
        headers: (missing.length > 0
          ? { 'strata-partial': 'true', 'strata-missing-workers': missing.map((m) => m.endpoint).join(', ') }
          : {}) as Record<string, string>,
        body: catalog.tables.map((t) => ({
          name: t.name,
          columns: t.columns.map((c) => ({ name: c.name, type: RESULT_TYPE_NAME[c.type] })),
          ...(usage
            ? { usage: usage.get(t.name) ?? { rows: 0, hotRows: 0, segments: 0, bytes: 0, oldest: null, newest: null } }
            : {}),
        })),
      };
    },
  },
];
