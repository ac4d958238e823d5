import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import {
  ChannelPool,
  createLogger,
  EmbeddedCoordinator,
  encodeFragmentRequest,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import { WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { RetentionRules } from '../src/storage/retention-rules.js';
import { workerStorageService } from '../src/storage/worker-storage-service.js';
import { StoragePolicyPoller } from '../src/storage-policy-poller.js';
import {
  ACCOUNT,
  entries,
  filesReclaimed,
  input,
  openEngine,
  part,
  scanRows,
  seqParityPurge,
  storageTestContext,
} from './helpers/storage-fixtures.js';

const DAY = 86_400_000;
const OTHER = '00000000-0000-0000-0000-0000000000b2';

/** `n` entries one minute apart, the last one `endAgoMs` before now. */

/** `n` entries one second apart from `baseMs`, numbered from `firstSeq`. */
const at = (n: number, baseMs: number, firstSeq: number) =>
  entries(n, baseMs).map((e, i) => ({ ts: e.ts, data: { ...e.data, seq: firstSeq + i } }));

const seqs = (rows: Record<string, unknown>[]) => rows.map((r) => Number(r.seq)).sort((a, b) => a - b);

describe('data lifecycle in worker storage: retention and schema drops', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('hides rows past retention from scans at once, then deletes them: whole segments, hot rows, and straddling rows at compaction', async () => {
    t.engine = await openEngine(t.dir);
    const engine = t.engine;
    // Three sealed segments: 10 days old, 3 days old, and one straddling the 2-day cut; then hot rows.
    const old = at(5, Date.now() - 10 * DAY, 0);
    const mid = at(5, Date.now() - 3 * DAY, 100);
    const straddle = [...at(3, Date.now() - 2 * DAY - 60_000, 200), ...at(3, Date.now() - 1 * DAY, 300)];
    for (const batch of [old, mid, straddle]) {
      await engine.append(input([part('L', batch)]));
      await engine.sealAll();
    }
    await engine.append(input([part('L', [...at(2, Date.now() - 5 * DAY, 400), ...at(2, Date.now() - 60_000, 500)])]));
    await engine.append(input([part('Keep', at(4, Date.now() - 30 * DAY, 0))]));
    assert.equal((await scanRows(engine, 'L')).length, 20);

    engine.setRetention(
      new RetentionRules({ defaultRetentionMs: 0, rules: [{ accountId: ACCOUNT, schema: 'L', retentionMs: 2 * DAY }] }),
    );
    // Scans see only the last two days before anything is deleted.
    const expectedKept = [300, 301, 302, 500, 501];
    assert.deepEqual(seqs(await scanRows(engine, 'L')), expectedKept);
    // A scan with an explicit older range is still bounded by retention.
    assert.deepEqual(seqs(await scanRows(engine, 'L', undefined, { fromMs: Date.now() - 20 * DAY })), expectedKept);
    // Other schemas keep everything (no default retention).
    assert.equal((await scanRows(engine, 'Keep')).length, 4);

    const before = await engine.listSegments(ACCOUNT);
    const files = before.map((s) => engine.segmentPath(s));
    const gone = await engine.expireNow();
    // The two old segments (10 rows) and the two 5-day-old hot rows went; the straddling segment stays.
    assert.deepEqual({ rows: gone.rows, segments: gone.segments }, { rows: 12, segments: 2 });
    const after = await engine.listSegments(ACCOUNT);
    assert.equal(after.filter((s) => s.schema === 'L').length, 1);
    // Files are deleted once no scan may read them (none is open).
    await filesReclaimed(engine);
    for (const f of files.slice(0, 2)) assert.equal(existsSync(f), false, `${f} still on disk`);
    assert.deepEqual(seqs(await scanRows(engine, 'L')), expectedKept);

    // Compaction rewrites the straddling segment without its expired rows.
    await engine.sealAll();
    const l = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'L');
    assert.equal(l.length, 2);
    const merged = await engine.compact({ accountId: ACCOUNT, schema: 'L', segmentIds: l.map((s) => s.segmentId) });
    assert.equal(merged.rowCount, 5);
    assert.ok(merged.minTsUs! >= (Date.now() - 2 * DAY - 5_000) * 1000);
    // Retention lifted: nothing comes back (it was deleted), nothing else is hidden.
    engine.setRetention(new RetentionRules());
    assert.deepEqual(seqs(await scanRows(engine, 'L')), expectedKept);
  });

  it('resolves retention schema → account → system default, 0 meaning forever', () => {
    const rules = new RetentionRules({
      defaultRetentionMs: 30 * DAY,
      rules: [
        { accountId: ACCOUNT.toUpperCase(), schema: '', retentionMs: 7 * DAY },
        { accountId: ACCOUNT, schema: 'Audit', retentionMs: 0 },
        { accountId: ACCOUNT, schema: 'Debug', retentionMs: DAY },
      ],
    });
    assert.equal(rules.retentionMs(ACCOUNT, 'Debug'), DAY);
    assert.equal(rules.retentionMs(ACCOUNT, 'Audit'), undefined);
    assert.equal(rules.retentionMs(ACCOUNT, 'Other'), 7 * DAY);
    assert.equal(rules.retentionMs(OTHER, 'Debug'), 30 * DAY);
    assert.equal(rules.cutoffUs(ACCOUNT, 'Debug', 10 * DAY), 9 * DAY * 1000);
  });

  it('drops a schema with its hot rows and segments; another account and schema are untouched; a new append starts afresh', async () => {
    t.engine = await openEngine(t.dir);
    const engine = t.engine;
    await engine.append(input([part('D', entries(6))]));
    await engine.sealAll();
    await engine.append(input([part('D', entries(3, undefined, 50)), part('E', entries(2))]));
    await engine.append(input([part('D', entries(4))], { accountId: OTHER }));
    const files = (await engine.listSegments(ACCOUNT)).map((s) => engine.segmentPath(s));
    const gone = await engine.dropSchema(ACCOUNT, 'D');
    assert.deepEqual({ rows: gone.rows, segments: gone.segments }, { rows: 9, segments: 1 });
    assert.deepEqual(await scanRows(engine, 'D'), []);
    assert.equal(
      engine.listSchemas(ACCOUNT).some((s) => s.schema === 'D'),
      false,
    );
    await filesReclaimed(engine);
    for (const f of files) assert.equal(existsSync(f), false);
    assert.equal((await scanRows(engine, 'E')).length, 2);
    assert.equal((await scanRows(engine, 'D', undefined, {}, OTHER)).length, 4);
    // The schema comes back with what is written after the drop only.
    await engine.append(input([part('D', [{ ts: Date.UTC(2025, 0, 1), data: { fresh: 'yes' } }])]));
    const rows = await scanRows(engine, 'D');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.fresh, 'yes');
    assert.equal('seq' in rows[0]!, false, 'the dropped columns are gone too');
    // Dropping what does not exist is a no-op.
    assert.deepEqual(await engine.dropSchema(ACCOUNT, 'Nope'), { rows: 0, segments: 0, bytes: 0 });
  });

  it('reports usage per schema: rows, segments, bytes, oldest and newest', async () => {
    t.engine = await openEngine(t.dir);
    const engine = t.engine;
    const first = entries(5, Date.UTC(2024, 0, 1));
    await engine.append(input([part('U', first)]));
    await engine.sealAll();
    await engine.append(input([part('U', entries(2, Date.UTC(2024, 5, 1), 10))]));
    const [u] = await engine.describe(ACCOUNT);
    const segs = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'U');
    assert.deepEqual(u, {
      schema: 'U',
      hotRows: 2,
      segmentRows: 5,
      segments: 1,
      segmentBytes: segs[0]!.byteSize,
      minTimestampUs: Date.UTC(2024, 0, 1) * 1000,
      maxTimestampUs: (Date.UTC(2024, 5, 1) + 11_000) * 1000,
    });
    assert.ok(segs[0]!.byteSize > 0);
  });
});

describe('purge steps in worker storage', function () {
  this.timeout(60_000);
  const t = storageTestContext();
  /** A fragment matching entries with an even `seq`, outputting their ids (as a gateway plans it). */
  const evenSeq = seqParityPurge(0);

  async function loadSegments(engine: NonNullable<typeof t.engine>, segments: number, perSegment: number) {
    for (let s = 0; s < segments; s++) {
      await engine.append(input([part('P', at(perSegment, Date.UTC(2024, 0, 1) + s * 3_600_000, s * perSegment))]));
      await engine.sealAll();
    }
    await engine.append(input([part('P', at(4, Date.UTC(2024, 1, 1), 1000))]));
    await engine.append(input([part('P', at(4, Date.UTC(2024, 1, 1), 0))], { accountId: OTHER }));
  }

  it('removes the matching rows from hot rows and segments, step by step, and keeps the rest', async () => {
    t.engine = await openEngine(t.dir);
    await loadSegments(t.engine, 5, 10);
    const steps = [];
    for (let i = 0; i < 10; i++) {
      const p = await t.engine.purgeStep('job-1', ACCOUNT, 'P', evenSeq, 2);
      steps.push(p);
      if (p.finished) break;
    }
    const last = steps.at(-1)!;
    assert.equal(last.finished, true);
    assert.equal(steps.length, 3, 'two segments a step over five segments');
    assert.equal(
      steps.reduce((n, s) => n + s.rowsRemoved, 0),
      27,
    );
    assert.deepEqual({ done: last.segmentsDone, total: last.segmentsTotal }, { done: 5, total: 5 });
    const left = seqs(await scanRows(t.engine, 'P'));
    assert.deepEqual(left, [...Array.from({ length: 25 }, (_, i) => 2 * i + 1), 1001, 1003]);
    // Another account's rows are not touched.
    assert.equal((await scanRows(t.engine, 'P', undefined, {}, OTHER)).length, 4);
    // Running the job again changes nothing.
    const again = await t.engine.purgeStep('job-1b', ACCOUNT, 'P', evenSeq, 10);
    assert.deepEqual({ removed: again.rowsRemoved, finished: again.finished }, { removed: 0, finished: true });
  });

  it('finishes correctly after the worker restarts in the middle of a job', async () => {
    t.engine = await openEngine(t.dir);
    await loadSegments(t.engine, 4, 6);
    const first = await t.engine.purgeStep('job-2', ACCOUNT, 'P', evenSeq, 1);
    assert.equal(first.finished, false);
    await t.engine.close();
    t.engine = await openEngine(t.dir);
    let last = first;
    for (let i = 0; i < 10 && !last.finished; i++) last = await t.engine.purgeStep('job-2', ACCOUNT, 'P', evenSeq, 1);
    assert.equal(last.finished, true);
    assert.deepEqual(seqs(await scanRows(t.engine, 'P')), [...Array.from({ length: 12 }, (_, i) => 2 * i + 1), 1001, 1003]);
  });

  it('refuses a purge fragment that is not a checked single SELECT of ids', async () => {
    t.engine = await openEngine(t.dir);
    await loadSegments(t.engine, 1, 2);
    await assert.rejects(
      t.engine.purgeStep('job-3', ACCOUNT, 'P', { ...evenSeq, sql: `${evenSeq.sql}; SELECT 1` }, 1),
      /not a permitted statement|permitted/,
    );
    await assert.rejects(
      t.engine.purgeStep('job-3', ACCOUNT, 'P', { ...evenSeq, columns: [...evenSeq.columns, { id: 'c2', type: 'BIGINT' }] }, 1),
      /exactly the rows' ids/,
    );
    assert.equal((await scanRows(t.engine, 'P')).length, 6);
  });

  it('refuses over gRPC a purge fragment with storage-applied time bounds (its statement must be its whole predicate)', async () => {
    t.engine = await openEngine(t.dir);
    await loadSegments(t.engine, 1, 4);
    const log = createLogger('test', { level: 'silent' });
    const channels = new ChannelPool(testIdentity(['database']));
    const policy = new StoragePolicyPoller(new EmbeddedCoordinator(log), channels, t.engine, log);
    const service = workerStorageService(t.engine, policy, log);
    const { server, port } = await startGrpcServer('127.0.0.1:0', [service], testIdentity(['backend']));
    try {
      const client = channels.client(WorkerStorageServiceService, `127.0.0.1:${port}`);
      const fragment = encodeFragmentRequest({ accountId: ACCOUNT, schema: 'P' }, evenSeq);
      await assert.rejects(
        client.purgeStep({ jobId: 'job-4', fragment: { ...fragment, fromUs: 1 }, maxSegments: 4 }, { timeoutMs: 30_000 }),
        /whole predicate/,
      );
      assert.equal((await scanRows(t.engine, 'P')).length, 8, 'nothing was purged');
      const done = await client.purgeStep({ jobId: 'job-4', fragment, maxSegments: 4 }, { timeoutMs: 30_000 });
      assert.equal(done.rowsRemoved, 4, 'the same fragment without bounds purges');
    } finally {
      await stopGrpcServer(server, 0);
      channels.close();
    }
  });
});
