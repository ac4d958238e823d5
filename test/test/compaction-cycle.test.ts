import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ChannelPool, createLogger, EmbeddedCoordinator, loadConfigObject, type RoleContext } from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import { CompactionScheduler } from '@strata/master';
import { SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import { startWorkerWith, type WorkerHandle } from '@strata/worker';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';

/** One segment: `rows` rows of incompressible text, so byte sizes grow with rows. */
async function writeSegment(worker: WorkerHandle, schema: string, first: number, rows: number) {
  const lines = Array.from({ length: rows }, (_, i) =>
    JSON.stringify({
      '@ts': (Date.UTC(2024, 0, 1) + (first + i) * 1000) * 1000,
      '@id': randomUUID(),
      seq: first + i,
      pad: randomUUID(),
    }),
  );
  await worker.storage.append({
    accountId: ACCOUNT,
    parts: [
      {
        schema,
        columns: [
          { name: 'seq', type: 'Int64' },
          { name: 'pad', type: 'String' },
        ],
        rows: Buffer.from(lines.join('\n')),
        rowCount: rows,
      },
    ],
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: 'gw',
    sourceAddress: '127.0.0.1',
    agent: null,
  });
  await worker.storage.sealAll();
}

describe('compaction cycle (master scheduler → worker over gRPC)', function () {
  this.timeout(60_000);

  it('compacts small segments up to the account MaxFileSize and leaves row counts unchanged', async () => {
    const dataPath = mkdtempSync(path.join(tmpdir(), 'strata-compaction-'));
    const log = createLogger('test', { level: 'silent' });
    const coordinator = new EmbeddedCoordinator(log);
    const channels = new ChannelPool(testIdentity());
    const ctx: RoleContext = {
      config: loadConfigObject({ backend: { enable: true, endpoint: '127.0.0.1:0', dataPath, minimumFreeSpaceBytes: 0 } }, {}),
      log,
      coordinator,
      channels,
      identity: testIdentity(),
    };
    const worker = await startWorkerWith(ctx);
    try {
      for (let i = 0; i < 6; i++) await writeSegment(worker, 'Logs', i * 400, 400);
      for (let i = 0; i < 3; i++) await writeSegment(worker, 'Other', i * 100, 100);
      const before = await worker.storage.listSegments(ACCOUNT);
      const logs = before.filter((s) => s.schema === 'Logs').sort((a, b) => a.minTsUs! - b.minTsUs!);
      // MaxFileSize such that three Logs segments reach it: the first job takes the three oldest.
      const maxFileSize = logs[0]!.byteSize + logs[1]!.byteSize + Math.floor(logs[2]!.byteSize / 2);
      const sizesAsked: string[] = [];
      const scheduler = new CompactionScheduler({
        listWorkers: () => coordinator.listWorkers(),
        channels,
        maxFileSize: async (accountId) => {
          sizesAsked.push(accountId);
          return maxFileSize;
        },
        term: () => 3,
        minSegmentsPerPartialJob: 3,
        log,
      });
      const report = await scheduler.runOnce();
      assert.deepEqual(sizesAsked, [ACCOUNT]);
      assert.deepEqual(report, { workers: 1, planned: 3, completed: 3, failed: 0 });

      const { segments } = await channels
        .client(SegmentServiceService, worker.endpoint)
        .listSegments({ accountId: ACCOUNT, includeReplicas: false });
      const after = segments.filter((s) => s.schema === 'Logs').sort((a, b) => a.minTimestampMs - b.minTimestampMs);
      assert.deepEqual(
        after.map((s) => s.rowCount),
        [1200, 1200],
      );
      assert.equal(segments.filter((s) => s.schema === 'Other').length, 1);
      const total = (schema: string) => segments.filter((s) => s.schema === schema).reduce((n, s) => n + s.rowCount, 0);
      assert.equal(total('Logs'), 2400);
      assert.equal(total('Other'), 300);
      const scan = (await worker.storage.openScan(ACCOUNT, 'Logs'))!;
      try {
        const rows = (
          await scan.connection.runAndReadAll(
            `SELECT count(*)::INTEGER AS n, count(DISTINCT seq)::INTEGER AS d FROM ${scan.relation}`,
          )
        ).getRowObjectsJson();
        assert.deepEqual(rows, [{ n: 2400, d: 2400 }]);
      } finally {
        await scan.release();
      }
      // Nothing left that fits the rules: the next cycle plans nothing.
      assert.equal((await scheduler.runOnce()).planned, 0);
    } finally {
      await worker.stop();
      channels.close();
      await coordinator.close();
      rmSync(dataPath, { recursive: true, force: true });
    }
  });
});
