/**
 * Data lifecycle (docs/api.md, "Data lifecycle"): per-schema retention, dropping a schema, and
 * what an account stores. Retention of an account and the system default are settings
 * (`Service.Storage.Retention`, settings-routes.ts); the master keeps the policy and every worker
 * enforces it (docs/architecture.md).
 *
 * Who may: account admins and global admins change retention and drop schemas (the account
 * settings permission); whoever may query an account may read its retention and usage.
 */
import { errorFields, invalid, notFound, StrataError } from '@strata/common';
import { ExecuteFragmentRequest } from '@strata/proto/query/v1/query';
import { type PurgeJob, StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { z } from 'zod';
import type { RouteContext, RouteDef } from '../http/route.js';
import { fragmentRequest } from '../query/cluster/worker-protocol.js';
import { planQuery } from '../query/engine.js';
import { QueryCoverage } from '../query/query-coverage.js';
import { totalsBySchema, usageByWorker, usageView } from './usage.js';

const retentionBody = z.object({ retention: z.union([z.string().max(64), z.null()]) });
const purgeBody = z.object({ schema: z.string().min(1).max(256), predicate: z.string().min(1).max(16_384) });

const WORKER_CALL_MS = 10_000;

/** Response shapes, for the OpenAPI document. */
const usageFigures = {
  rows: z.number(),
  hotRows: z.number(),
  segments: z.number(),
  bytes: z.number(),
  oldest: z.string().nullable(),
  newest: z.string().nullable(),
};
const usageJson = z.object({
  complete: z.boolean(),
  unreachable: z.array(z.string()),
  schemas: z.array(z.object({ schema: z.string(), ...usageFigures })),
  workers: z.array(
    z.object({ worker: z.string(), freeBytes: z.number(), schemas: z.array(z.object({ schema: z.string(), ...usageFigures })) }),
  ),
});
const retentionJson = z.object({
  schema: z.string(),
  retention: z.string().nullable(),
  updatedAt: z.string().nullable(),
  updatedBy: z.string().nullable(),
});
const dropJson = z.object({
  schema: z.string(),
  dropId: z.string(),
  droppedAt: z.string(),
  rowsDeleted: z.number(),
  pendingWorkers: z.array(z.string()),
});
const purgeProgress = {
  rowsExamined: z.number(),
  rowsRemoved: z.number(),
  segmentsDone: z.number(),
  segmentsTotal: z.number(),
};
const purgeJson = z.object({
  jobId: z.string(),
  schema: z.string(),
  predicate: z.string(),
  state: z.enum(['running', 'succeeded', 'failed']),
  requestedBy: z.string(),
  requestedAt: z.string(),
  finishedAt: z.string().nullable(),
  error: z.string().nullable(),
  ...purgeProgress,
  workers: z.array(z.object({ worker: z.string(), ...purgeProgress, finished: z.boolean(), lastError: z.string().nullable() })),
});

/** A purge job as the API shows it: totals over workers, and each worker's share. */
function purgeView(job: PurgeJob) {
  const sum = (f: (w: PurgeJob['workers'][number]) => number) => job.workers.reduce((n, w) => n + f(w), 0);
  return {
    jobId: job.jobId,
    schema: job.schema,
    predicate: job.predicate,
    state: job.state,
    requestedBy: job.requestedBy,
    requestedAt: job.requestedAt,
    finishedAt: job.finishedAt || null,
    error: job.error || null,
    rowsExamined: sum((w) => Number(w.rowsExamined)),
    rowsRemoved: sum((w) => Number(w.rowsRemoved)),
    segmentsDone: sum((w) => w.segmentsDone),
    segmentsTotal: sum((w) => w.segmentsTotal),
    workers: job.workers.map((w) => ({
      worker: w.worker,
      rowsExamined: Number(w.rowsExamined),
      rowsRemoved: Number(w.rowsRemoved),
      segmentsDone: w.segmentsDone,
      segmentsTotal: w.segmentsTotal,
      finished: w.finished,
      lastError: w.lastError || null,
    })),
  };
}

const accountOf = (rc: RouteContext) => rc.params.accountId!.toLowerCase();
const schemaOf = (rc: RouteContext) => {
  const schema = decodeURIComponent(rc.params.schema ?? '');
  if (schema.trim() === '' || schema.length > 256) throw invalid('A schema name has 1 to 256 characters.');
  return schema;
};

/**
 * The rows a purge removes, as the fragment workers run: `<schema> | where (<predicate>) |
 * project __INFLOW_ID`, planned like any query (so the predicate is KQL with its usual errors and
 * positions, and reaches the worker as a checked fragment, never as spliced SQL). The parentheses
 * keep the predicate one expression: a `|` or `;` inside it is a syntax error, not more pipeline.
 */
async function purgeFragment(rc: RouteContext, accountId: string, schema: string, predicate: string): Promise<Buffer> {
  const catalog = await rc.deps.query.catalog(accountId, { fresh: true });
  if (!catalog.tables.some((t) => t.name === schema)) throw notFound(`Schema ${schema} does not exist in this account.`);
  const text = `['${schema.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'] | where (${predicate}) | project __INFLOW_ID`;
  const plan = planQuery(text, catalog, { maxRows: Number.MAX_SAFE_INTEGER - 1 });
  const [fragment] = plan.fragments;
  // A toscalar() value is only known when the query runs; the purge fragment must stand alone.
  if (plan.scalars.length > 0 || plan.nextPhase) throw invalid('A purge predicate cannot use toscalar().');
  if (plan.fragments.length !== 1 || !fragment || fragment.columns.length !== 1)
    throw invalid("A purge predicate is one `where` expression over the schema's columns.");
  return Buffer.from(ExecuteFragmentRequest.encode(fragmentRequest(accountId, fragment)).finish());
}

export const lifecycleRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/accounts/:accountId/purge',
    operation: 'account.settings.write',
    summary:
      'Purge: delete the entries of a schema matching a KQL predicate, { schema, predicate } (the expression of a `where`). Starts a job (202) that rewrites every affected segment and hot row on every worker; GET /accounts/{accountId}/purge/{jobId} reports progress. Recorded with who and when; account admins and global admins only.',
    requestSchema: purgeBody,
    responseSchema: purgeJson,
    async handler(rc) {
      const accountId = accountOf(rc);
      const { schema, predicate } = await rc.body(purgeBody);
      const fragment = await purgeFragment(rc, accountId, schema, predicate);
      // Every worker that may hold rows of the account must finish the job: the registered ones and
      // holders that are down now (placements), which the job waits for.
      const coverage = await QueryCoverage.resolve(rc.deps.coordinator, accountId, true);
      // Tracked by worker id: a worker may come back at another address.
      const workers = [...coverage.workers.map((w) => w.workerId), ...coverage.missing.map((m) => m.workerId)].filter(
        (id): id is string => typeof id === 'string' && id !== '',
      );
      const { job } = await rc.deps.master.service(StoragePolicyServiceService).startPurge({
        accountId,
        schema,
        predicate,
        fragment,
        requestedBy: rc.principal!.userId,
        workers,
      });
      rc.deps.log.info({ accountId, schema, jobId: job?.jobId, by: rc.principal!.userId, workers }, 'purge started');
      return { status: 202, body: purgeView(job!) };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/purge',
    operation: 'account.settings.read',
    summary: "The account's purge jobs, newest first, with progress and outcome.",
    responseSchema: z.array(purgeJson),
    async handler(rc) {
      const { jobs } = await rc.deps.master.service(StoragePolicyServiceService).listPurges({ accountId: accountOf(rc) });
      return { body: jobs.map(purgeView) };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/purge/:jobId',
    operation: 'account.settings.read',
    summary:
      'A purge job: state (running, succeeded, failed), rows examined and removed, segments done of total, per worker and in total, who asked and when.',
    responseSchema: purgeJson,
    async handler(rc) {
      const { job } = await rc.deps.master
        .service(StoragePolicyServiceService)
        .getPurge({ accountId: accountOf(rc), jobId: rc.params.jobId! });
      return { body: purgeView(job!) };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/usage',
    operation: 'query.run',
    summary:
      'What the account stores: per schema rows (hot and sealed), segments, bytes on disk, oldest and newest entry, in total and per worker; `unreachable` lists workers that did not answer (their share is missing, and `complete` is false).',
    responseSchema: usageJson,
    async handler(rc) {
      const { workers, unreachable } = await usageByWorker(rc.deps.coordinator, rc.deps.channels, accountOf(rc));
      return {
        body: {
          complete: unreachable.length === 0,
          unreachable,
          schemas: [...totalsBySchema(workers)].map(([schema, u]) => ({ schema, ...u })),
          workers: workers.map((w) => ({
            worker: w.worker,
            freeBytes: w.freeBytes,
            schemas: w.schemas.map((s) => ({ schema: s.schema, ...usageView(s) })),
          })),
        },
      };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/schemas/:schema/retention',
    operation: 'query.run',
    summary:
      "A schema's retention override ({ schema, retention }, null when the account's retention applies). The account's own retention is the setting Service.Storage.Retention.",
    responseSchema: retentionJson,
    async handler(rc) {
      const schema = schemaOf(rc);
      const { retentions } = await rc.deps.master
        .service(StoragePolicyServiceService)
        .listSchemaRetentions({ accountId: accountOf(rc) });
      const own = retentions.find((r) => r.schema === schema);
      return {
        body: { schema, retention: own?.retention ?? null, updatedAt: own?.updatedAt ?? null, updatedBy: own?.updatedBy ?? null },
      };
    },
  },
  {
    method: 'PUT',
    path: '/accounts/:accountId/schemas/:schema/retention',
    operation: 'account.settings.write',
    summary:
      "Set a schema's retention: { retention: '30d' | '12h' | '45m' | 'd.hh:mm:ss' | 'forever' }, or null to remove the override. Applied by every worker within seconds, no restart.",
    requestSchema: retentionBody,
    responseSchema: retentionJson,
    async handler(rc) {
      const schema = schemaOf(rc);
      const { retention } = await rc.body(retentionBody);
      const { retentions } = await rc.deps.master.service(StoragePolicyServiceService).putSchemaRetention({
        accountId: accountOf(rc),
        schema,
        retention: retention ?? '',
        updatedBy: rc.principal!.userId,
      });
      const own = retentions.find((r) => r.schema === schema);
      return {
        body: { schema, retention: own?.retention ?? null, updatedAt: own?.updatedAt ?? null, updatedBy: own?.updatedBy ?? null },
      };
    },
  },
  {
    method: 'DELETE',
    path: '/accounts/:accountId/schemas/:schema',
    operation: 'account.settings.write',
    summary:
      'Drop a schema: every entry of it on every worker (and its retention override). Recorded first, so a worker that is down applies it when it is back; answers which workers deleted what, and which apply it later.',
    responseSchema: dropJson,
    async handler(rc) {
      const schema = schemaOf(rc);
      const accountId = accountOf(rc);
      const { drop } = await rc.deps.master
        .service(StoragePolicyServiceService)
        .recordSchemaDrop({ accountId, schema, droppedBy: rc.principal!.userId });
      if (!drop) throw new StrataError('internal', 'The schema drop was not recorded.');
      const registered = await rc.deps.coordinator.listWorkers();
      const results = await Promise.allSettled(
        registered.map((w) =>
          rc.deps.channels
            .client(WorkerStorageServiceService, w.endpoint)
            .applySchemaDrop({ dropId: drop.dropId, accountId, schema }, { timeoutMs: WORKER_CALL_MS }),
        ),
      );
      const pending: string[] = [];
      let rowsDeleted = 0;
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') rowsDeleted += Number(r.value.rowsDeleted);
        else {
          pending.push(registered[i]!.endpoint);
          rc.deps.log.warn(
            { worker: registered[i]!.endpoint, ...errorFields(r.reason) },
            "schema drop deferred to the worker's next policy poll",
          );
        }
      });
      rc.deps.log.info(
        { accountId, schema, dropId: drop.dropId, rowsDeleted, pending, by: rc.principal!.userId },
        'schema dropped',
      );
      return { body: { schema, dropId: drop.dropId, droppedAt: drop.droppedAt, rowsDeleted, pendingWorkers: pending } };
    },
  },
];
