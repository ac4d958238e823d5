/**
 * Data lifecycle (docs/api.md, "Data lifecycle"): per-schema retention, dropping a schema, and
 * what an account stores. Retention of an account and the system default are settings
 * (`Service.Storage.Retention`, settings-routes.ts); the master keeps the policy and every worker
 * enforces it (docs/architecture.md).
 *
 * Who may: account admins and global admins change retention and drop schemas (the account
 * settings permission); whoever may query an account may read its retention and usage.
 */
import { type ChannelPool, type Coordinator, errorFields, invalid, StrataError } from '@strata/common';
import { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { type SchemaUsage, WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { z } from 'zod';
import type { RouteContext, RouteDef } from '../http/route.js';

const retentionBody = z.object({ retention: z.union([z.string().max(64), z.null()]) });

const WORKER_CALL_MS = 10_000;

const accountOf = (rc: RouteContext) => rc.params.accountId!.toLowerCase();
const schemaOf = (rc: RouteContext) => {
  const schema = decodeURIComponent(rc.params.schema ?? '');
  if (schema.trim() === '' || schema.length > 256) throw invalid('A schema name has 1 to 256 characters.');
  return schema;
};

export interface WorkerUsage {
  worker: string;
  freeBytes: number;
  schemas: SchemaUsage[];
}

/**
 * Every registered worker's usage of an account. A worker that does not answer makes the answer
 * incomplete: it is listed in `unreachable`, never silently left out of the totals.
 */
export async function usageByWorker(
  coordinator: Coordinator,
  channels: ChannelPool,
  accountId: string,
): Promise<{ workers: WorkerUsage[]; unreachable: string[] }> {
  const registered = await coordinator.listWorkers();
  const answers = await Promise.allSettled(
    registered.map((w) =>
      channels.client(WorkerStorageServiceService, w.endpoint).describeStorage({ accountId }, { timeoutMs: WORKER_CALL_MS }),
    ),
  );
  const workers: WorkerUsage[] = [];
  const unreachable: string[] = [];
  answers.forEach((a, i) => {
    const worker = registered[i]!.endpoint;
    if (a.status === 'fulfilled') workers.push({ worker, freeBytes: Number(a.value.freeBytes), schemas: a.value.schemas });
    else unreachable.push(worker);
  });
  return { workers, unreachable };
}

const iso = (us: number) => (us > 0 ? new Date(Math.floor(us / 1000)).toISOString() : null);

/** One schema's figures, as the API shows them (timestamps ISO 8601 UTC, null without rows). */
function usageView(
  u: Pick<SchemaUsage, 'hotRows' | 'segmentRows' | 'segments' | 'segmentBytes' | 'minTimestampUs' | 'maxTimestampUs'>,
) {
  return {
    rows: Number(u.hotRows) + Number(u.segmentRows),
    hotRows: Number(u.hotRows),
    segments: Number(u.segments),
    bytes: Number(u.segmentBytes),
    oldest: iso(Number(u.minTimestampUs)),
    newest: iso(Number(u.maxTimestampUs)),
  };
}

/** Totals per schema over workers. */
export function totalsBySchema(workers: WorkerUsage[]): Map<string, ReturnType<typeof usageView>> {
  const sums = new Map<string, SchemaUsage>();
  for (const w of workers) {
    for (const s of w.schemas) {
      const t = sums.get(s.schema);
      if (!t) {
        sums.set(s.schema, { ...s });
        continue;
      }
      t.hotRows = Number(t.hotRows) + Number(s.hotRows);
      t.segmentRows = Number(t.segmentRows) + Number(s.segmentRows);
      t.segments = Number(t.segments) + Number(s.segments);
      t.segmentBytes = Number(t.segmentBytes) + Number(s.segmentBytes);
      const lo = [Number(t.minTimestampUs), Number(s.minTimestampUs)].filter((v) => v > 0);
      t.minTimestampUs = lo.length ? Math.min(...lo) : 0;
      t.maxTimestampUs = Math.max(Number(t.maxTimestampUs), Number(s.maxTimestampUs));
    }
  }
  return new Map([...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => [k, usageView(v)]));
}

export const lifecycleRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/accounts/:accountId/usage',
    operation: 'query.run',
    summary:
      'What the account stores: per schema rows (hot and sealed), segments, bytes on disk, oldest and newest entry, in total and per worker; `unreachable` lists workers that did not answer (their share is missing, and `complete` is false).',
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
