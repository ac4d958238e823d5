import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { StrataError } from '@strata/common';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import {
  ACCOUNT,
  entries,
  fakeGuard,
  filesReclaimed,
  input,
  openEngine,
  part,
  scanRows,
  storageTestContext,
} from './helpers/storage-fixtures.js';

/** Writes `n` segments of `rows` rows each (seq 0 … n·rows-1), sealing after each batch. */
async function writeSegments(engine: StorageEngine, schema: string, n: number, rows: number) {
  for (let i = 0; i < n; i++) {
    await engine.append(input([part(schema, entries(rows, Date.UTC(2024, 0, 1), i * rows))]));
    await engine.sealAll();
  }
  return engine.listSegments(ACCOUNT);
}

describe('worker compaction', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('merges segments into one sorted segment with the same rows and swaps the catalog', async () => {
    t.engine = await openEngine(t.dir);
    const segments = await writeSegments(t.engine, 'C', 4, 250);
    assert.equal(segments.length, 4);
    const merged = await t.engine.compact({ accountId: ACCOUNT, schema: 'C', segmentIds: segments.map((s) => s.segmentId) });
    assert.equal(merged.rowCount, 1000);
    assert.equal(merged.minTsUs, Date.UTC(2024, 0, 1) * 1000);
    assert.equal(merged.maxTsUs, (Date.UTC(2024, 0, 1) + 999_000) * 1000);
    const listed = await t.engine.listSegments(ACCOUNT);
    assert.deepEqual(
      listed.map((s) => s.segmentId),
      [merged.segmentId],
    );
    await filesReclaimed(t.engine);
    for (const s of segments) assert.ok(!existsSync(t.engine.segmentPath(s)), 'old file deleted');
    const [stats] = await scanRows(
      t.engine,
      'C',
      (r) => `SELECT count(*)::INTEGER AS n, count(DISTINCT __INFLOW_ID)::INTEGER AS ids, sum(seq)::BIGINT AS s FROM ${r}`,
    );
    assert.deepEqual(stats, { n: 1000, ids: 1000, s: String((999 * 1000) / 2) });
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const file = t.engine.segmentPath(merged);
    assert.equal(merged.format, 'duckdb');
    await c.run(`ATTACH '${file}' AS m (READ_ONLY)`);
    const sorted = (
      await c.runAndReadAll(`SELECT bool_and(s = seq) AS ok FROM (SELECT seq, row_number() OVER () - 1 AS s FROM m."rows")`)
    ).getRowObjectsJson();
    assert.deepEqual(sorted, [{ ok: true }]);
    c.closeSync();
    db.closeSync();
  });

  it('merges segments whose times interleave into one sorted file with every row (staged, then sorted)', async () => {
    // Segment i holds seq 3k+i: no file's rows come before another's, so the merge must sort.
    t.engine = await openEngine(t.dir);
    const base = Date.UTC(2024, 0, 1);
    for (let i = 0; i < 3; i++) {
      const rows = Array.from({ length: 200 }, (_, k) => ({ ts: base + (3 * k + i) * 1000, data: { seq: 3 * k + i } }));
      await t.engine.append(input([part('O', rows)]));
      await t.engine.sealAll();
    }
    const segments = await t.engine.listSegments(ACCOUNT);
    const merged = await t.engine.compact({ accountId: ACCOUNT, schema: 'O', segmentIds: segments.map((s) => s.segmentId) });
    assert.equal(merged.rowCount, 600);
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`ATTACH '${t.engine.segmentPath(merged)}' AS m (READ_ONLY)`);
    const check = (
      await c.runAndReadAll(
        `SELECT count(*)::INTEGER AS n, bool_and(s = seq) AS sorted FROM (SELECT seq, row_number() OVER () - 1 AS s FROM m."rows")`,
      )
    ).getRowObjectsJson();
    assert.deepEqual(check, [{ n: 600, sorted: true }]);
    c.closeSync();
    db.closeSync();
  });

  it('merges segments written before and after a schema change, converting old values', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('W', [{ ts: 1_000, data: { v: 1 } }])]));
    await t.engine.sealAll();
    await t.engine.append(input([part('W', [{ ts: 2_000, data: { v: 'two', w: 2 } }])]));
    await t.engine.sealAll();
    const ids = (await t.engine.listSegments(ACCOUNT)).map((s) => s.segmentId);
    await t.engine.compact({ accountId: ACCOUNT, schema: 'W', segmentIds: ids });
    assert.deepEqual(await scanRows(t.engine, 'W', (r) => `SELECT v, w FROM ${r} ORDER BY "timestamp"`), [
      { v: '1', w: null },
      { v: 'two', w: '2' },
    ]);
  });

  it('a concurrent scan sees every row exactly once before, during and after the swap; old files wait for it', async () => {
    t.engine = await openEngine(t.dir);
    const segments = await writeSegments(t.engine, 'Q', 5, 200);
    await t.engine.append(input([part('Q', entries(50, Date.UTC(2024, 0, 1), 1000))])); // hot rows too
    const count = async (scan: {
      connection: { runAndReadAll(s: string): Promise<{ getRowObjectsJson(): unknown[] }> };
      relation: string;
    }) =>
      (
        await scan.connection.runAndReadAll(
          `SELECT count(*)::INTEGER AS n, count(DISTINCT seq)::INTEGER AS d FROM ${scan.relation}`,
        )
      ).getRowObjectsJson()[0];

    const before = (await t.engine.openScan(ACCOUNT, 'Q'))!;
    assert.deepEqual(await count(before), { n: 1050, d: 1050 });
    // Scans opened and queried while the compaction runs.
    const during: Promise<unknown>[] = [];
    const compaction = t.engine.compact({ accountId: ACCOUNT, schema: 'Q', segmentIds: segments.map((s) => s.segmentId) });
    for (let i = 0; i < 5; i++) {
      during.push(
        (async () => {
          const scan = (await t.engine!.openScan(ACCOUNT, 'Q'))!;
          try {
            return await count(scan);
          } finally {
            await scan.release();
          }
        })(),
      );
      await new Promise((r) => setTimeout(r, 5));
    }
    await compaction;
    for (const result of await Promise.all(during)) assert.deepEqual(result, { n: 1050, d: 1050 });
    // The scan opened before the swap still reads the old files, which are kept for it.
    assert.deepEqual(await count(before), { n: 1050, d: 1050 });
    assert.equal(t.engine.pendingFileDeletions, 5);
    assert.ok(existsSync(t.engine.segmentPath(segments[0]!)));
    await before.release();
    await waitUntil(() => t.engine!.pendingFileDeletions === 0);
    assert.ok(!existsSync(t.engine.segmentPath(segments[0]!)));
    const after = await scanRows(
      t.engine,
      'Q',
      (r) => `SELECT count(*)::INTEGER AS n, count(DISTINCT seq)::INTEGER AS d FROM ${r}`,
    );
    assert.deepEqual(after, [{ n: 1050, d: 1050 }]);
  });

  it('refuses a stale plan without changing anything', async () => {
    t.engine = await openEngine(t.dir);
    const segments = await writeSegments(t.engine, 'P', 3, 10);
    const ids = segments.map((s) => s.segmentId);
    await t.engine.compact({ accountId: ACCOUNT, schema: 'P', segmentIds: ids.slice(0, 2) });
    await assert.rejects(
      t.engine.compact({ accountId: ACCOUNT, schema: 'P', segmentIds: [ids[1]!, ids[2]!] }),
      (err: unknown) => err instanceof StrataError && err.kind === 'precondition_failed',
    );
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 2);
    const [r] = await scanRows(t.engine, 'P', (rel) => `SELECT count(DISTINCT seq)::INTEGER AS n FROM ${rel}`);
    assert.equal(r!.n, 30);
    await assert.rejects(t.engine.compact({ accountId: ACCOUNT, schema: 'P', segmentIds: [ids[2]!] }), /at least two/);
    await assert.rejects(t.engine.compact({ accountId: ACCOUNT, schema: 'Nope', segmentIds: ids }), /does not exist/);
  });

  it('refuses jobs from an older fencing term', async () => {
    t.engine = await openEngine(t.dir);
    const ids = (await writeSegments(t.engine, 'F', 4, 10)).map((s) => s.segmentId);
    await t.engine.compact({ accountId: ACCOUNT, schema: 'F', segmentIds: ids.slice(0, 2) }, 7);
    await assert.rejects(t.engine.compact({ accountId: ACCOUNT, schema: 'F', segmentIds: ids.slice(2) }, 6), /older than term 7/);
  });

  it('refuses compaction and appends while free space is under the minimum, and resumes by itself', async () => {
    const free = { bytes: 1e12 };
    const guard = fakeGuard(100, free);
    t.engine = await openEngine(t.dir, {}, guard);
    const ids = (await writeSegments(t.engine, 'D', 2, 10)).map((s) => s.segmentId);
    free.bytes = 10;
    await guard.check();
    const refused = (err: unknown) => err instanceof StrataError && err.kind === 'insufficient_storage';
    await assert.rejects(t.engine.compact({ accountId: ACCOUNT, schema: 'D', segmentIds: ids }), refused);
    await assert.rejects(t.engine.append(input([part('D', entries(1))])), refused);
    free.bytes = 1e12;
    await guard.check();
    await t.engine.compact({ accountId: ACCOUNT, schema: 'D', segmentIds: ids });
    await t.engine.append(input([part('D', entries(1, Date.UTC(2025, 0, 1)))]));
    const [r] = await scanRows(t.engine, 'D', (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`);
    assert.equal(r!.n, 21);
  });

  it('after a crash mid-job the old set is listed, or the new one, never both or neither', async () => {
    t.engine = await openEngine(t.dir);
    const segments = await writeSegments(t.engine, 'K', 3, 100);
    const dir = path.dirname(t.engine.segmentPath(segments[0]!));
    await t.engine.close();
    // Crash before the swap: the merged file exists but is not listed.
    const unlisted = path.join(dir, '22222222-2222-4222-8222-222222222222.duckdb');
    writeFileSync(unlisted, 'merged file of a job that never committed');
    writeFileSync(`${unlisted}.tmp.wal`, 'its write-ahead log');
    t.engine = await openEngine(t.dir);
    assert.ok(!existsSync(unlisted));
    assert.ok(!existsSync(`${unlisted}.tmp.wal`));
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 3);
    // Crash after the swap committed but before the old files were deleted: put one back.
    await t.engine.compact({ accountId: ACCOUNT, schema: 'K', segmentIds: segments.map((s) => s.segmentId) });
    const oldFile = t.engine.segmentPath(segments[0]!);
    await t.engine.close();
    writeFileSync(oldFile, 'old segment not yet deleted when the process died');
    t.engine = await openEngine(t.dir);
    assert.ok(!existsSync(oldFile), 'old files removed at start-up');
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 1);
    const [r] = await scanRows(
      t.engine,
      'K',
      (rel) => `SELECT count(*)::INTEGER AS n, count(DISTINCT seq)::INTEGER AS d FROM ${rel}`,
    );
    assert.deepEqual(r, { n: 300, d: 300 });
  });
});

async function waitUntil(probe: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 20));
  }
}
