import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ChannelPool, EmbeddedCoordinator, loadConfigObject, type RoleContext, StrataError } from '@strata/common';
import { testIdentity, waitFor } from '@strata/common/testing';
import { ColumnType, IngestServiceService } from '@strata/proto/ingest/v1/ingest';
import { SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import { WorkerServiceService } from '@strata/proto/worker/v1/worker';
import { startWorkerWith, type WorkerHandle } from '../src/worker-role.js';
import { ACCOUNT, scanRows, tempDir, testLog } from './helpers/storage-fixtures.js';

function context(dataPath: string, minimumFreeSpaceBytes: number): RoleContext {
  const log = testLog();
  return {
    config: loadConfigObject({ backend: { enable: true, endpoint: '127.0.0.1:0', dataPath, minimumFreeSpaceBytes } }, {}),
    log,
    coordinator: new EmbeddedCoordinator(log),
    channels: new ChannelPool(testIdentity()),
    identity: testIdentity(),
  };
}

function appendRequest(rows: number, key = '') {
  const lines = Array.from({ length: rows }, (_, i) =>
    JSON.stringify({ '@ts': (Date.UTC(2024, 0, 1) + i) * 1000, '@id': randomUUID(), msg: `m${i}`, n: i }),
  );
  return {
    accountId: ACCOUNT,
    parts: [
      {
        schema: 'Role.Logs',
        columns: [
          { name: 'msg', type: ColumnType.COLUMN_TYPE_STRING },
          { name: 'n', type: ColumnType.COLUMN_TYPE_INT64 },
        ],
        rows: Buffer.from(lines.join('\n')),
        rowCount: rows,
      },
    ],
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: 'gw',
    sourceAddress: '10.0.0.1',
    agent: '',
    idempotencyKey: key,
    contentHash: '',
    keyViewRevision: 0,
  };
}

describe('worker role', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof tempDir>;
  let ctx: RoleContext;
  let worker: WorkerHandle | undefined;

  beforeEach(() => {
    tmp = tempDir();
  });
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
    ctx.channels.close();
    await ctx.coordinator.close();
    tmp.cleanup();
  });

  it('serves health, ingest and segments over gRPC and registers with the coordinator', async () => {
    ctx = context(tmp.dir, 0);
    worker = await startWorkerWith(ctx);
    assert.match(worker.endpoint, /^127\.0\.0\.1:\d+$/);
    assert.doesNotMatch(worker.endpoint, /:0$/);
    const [registered] = await ctx.coordinator.listWorkers();
    assert.equal(registered!.endpoint, worker.endpoint);
    assert.equal(registered!.writable, true);
    assert.ok(registered!.freeBytes > 0);

    const health = await ctx.channels.client(WorkerServiceService, worker.endpoint).health({});
    assert.equal(health.endpoint, worker.endpoint);
    assert.equal(health.writable, true);

    const ingest = ctx.channels.client(IngestServiceService, worker.endpoint);
    assert.deepEqual(await ingest.append(appendRequest(25, 'key-1')), { rowsStored: 25, duplicate: false });
    assert.deepEqual(await ingest.append(appendRequest(25, 'key-1')), { rowsStored: 0, duplicate: true });
    const rows = await scanRows(
      worker.storage,
      'Role.Logs',
      (r) => `SELECT count(*)::INTEGER AS n, max(n)::INTEGER AS mx, any_value(__INFLOW_SOURCE_ADDRESS) AS a FROM ${r}`,
    );
    assert.deepEqual(rows, [{ n: 25, mx: 24, a: '10.0.0.1' }]);

    await worker.storage.sealAll();
    const { segments } = await ctx.channels
      .client(SegmentServiceService, worker.endpoint)
      .listSegments({ accountId: ACCOUNT, includeReplicas: false });
    assert.equal(segments.length, 1);
    assert.equal(segments[0]!.rowCount, 25);
    assert.equal(segments[0]!.schema, 'Role.Logs');
    assert.equal(segments[0]!.minTimestampMs, Date.UTC(2024, 0, 1));

    // A bad type value is refused as invalid over the wire too.
    const bad = appendRequest(1);
    bad.parts[0]!.columns[1]!.type = ColumnType.COLUMN_TYPE_UNSPECIFIED;
    await assert.rejects(ingest.append(bad), (err: unknown) => err instanceof StrataError && err.kind === 'invalid');

    await worker.stop();
    worker = undefined;
    assert.deepEqual(await ctx.coordinator.listWorkers(), []);
  });

  it('a worker written off as lost refuses to start on its old data; a drained one stays out of the cluster', async () => {
    ctx = context(tmp.dir, 0);
    worker = await startWorkerWith(ctx);
    const id = worker.workerId;
    await worker.stop();
    worker = undefined;
    // Drained: it starts, holds nothing, does not register and refuses writes.
    await ctx.coordinator.putDrain({ ...(await ctx.coordinator.requestDrain(id)), phase: 'done' });
    worker = await startWorkerWith(ctx);
    assert.deepEqual(await ctx.coordinator.listWorkers(), []);
    assert.match(worker.readiness().detail, /drained/);
    await worker.stop();
    worker = undefined;
    // Written off: its segments may live on elsewhere (promoted replicas), so it must not come back.
    await ctx.coordinator.markLost(id);
    await assert.rejects(startWorkerWith(ctx), /written off as lost/);
    assert.deepEqual(await ctx.coordinator.listWorkers(), []);
  });

  it('with the minimum above the free space: refuses appends with insufficient storage and reports not writable', async () => {
    ctx = context(tmp.dir, Number.MAX_SAFE_INTEGER);
    worker = await startWorkerWith(ctx);
    const [registered] = await ctx.coordinator.listWorkers();
    assert.equal(registered!.writable, false);
    assert.equal(worker.readiness().ready, true);
    assert.match(worker.readiness().detail, /not writable/);
    const health = await ctx.channels.client(WorkerServiceService, worker.endpoint).health({});
    assert.equal(health.writable, false);
    await assert.rejects(
      ctx.channels.client(IngestServiceService, worker.endpoint).append(appendRequest(3)),
      (err: unknown) =>
        err instanceof StrataError && err.kind === 'insufficient_storage' && /Insufficient storage/.test(err.message),
    );
    assert.deepEqual(worker.storage.listSchemas(ACCOUNT), []);
  });

  it('publishes writable again by itself when space returns', async () => {
    ctx = context(tmp.dir, 1_000);
    const free = { bytes: 10 };
    worker = await startWorkerWith(ctx, { statFreeBytes: async () => free.bytes, freeSpaceIntervalMs: 20 });
    assert.equal((await ctx.coordinator.listWorkers())[0]!.writable, false);
    free.bytes = 1e9;
    await waitFor('writable registration', async () => (await ctx.coordinator.listWorkers())[0]?.writable === true);
    const ingest = ctx.channels.client(IngestServiceService, worker.endpoint);
    assert.equal((await ingest.append(appendRequest(2))).rowsStored, 2);
    free.bytes = 10;
    await waitFor('not writable registration', async () => (await ctx.coordinator.listWorkers())[0]?.writable === false);
  });
});
