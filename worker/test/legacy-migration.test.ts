/**
 * Start-up migration of a data directory in the old shared layout (a committed fixture written by
 * the previous storage engine, worker/test/fixtures/legacy-layout/README.md) into per-account
 * directories: every row — sealed segments, hot rows, rows only in the write-ahead log — is
 * queryable afterwards, idempotency keys still work, and an interrupted migration is resumed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrateLegacyLayout } from '../src/storage/legacy-migration.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import { StorageLayout } from '../src/storage/storage-layout.js';
import { ACCOUNT, input, openEngine, part, scanRows, storageTestContext, testLog } from './helpers/storage-fixtures.js';

const OTHER = '00000000-0000-0000-0000-0000000000b2';
// dist/test → the source tree's fixture (not copied by tsc).
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/legacy-layout/data.tar.gz');

function unpackFixture(dir: string): void {
  execFileSync('tar', ['-xzf', FIXTURE, '-C', dir]);
}

interface Seen {
  rows: number;
  distinctSeq: number;
  minSeq: number;
  maxSeq: number;
}

async function seen(engine: StorageEngine, accountId: string, schema: string): Promise<Seen> {
  const [r] = await scanRows(
    engine,
    schema,
    (rel) =>
      `SELECT count(*)::INTEGER AS rows, count(DISTINCT seq)::INTEGER AS "distinctSeq", min(seq)::INTEGER AS "minSeq", max(seq)::INTEGER AS "maxSeq" FROM ${rel}`,
    {},
    accountId,
  );
  return r as unknown as Seen;
}

/** Every row the fixture holds, read through the new engine. */
async function assertEveryRow(engine: StorageEngine): Promise<void> {
  assert.deepEqual(await seen(engine, ACCOUNT, 'app.logs'), { rows: 185, distinctSeq: 185, minSeq: 0, maxSeq: 184 });
  assert.deepEqual(await seen(engine, ACCOUNT, 'app.metrics'), { rows: 20, distinctSeq: 20, minSeq: 0, maxSeq: 19 });
  assert.deepEqual(await seen(engine, OTHER, 'app.logs'), { rows: 50, distinctSeq: 50, minSeq: 0, maxSeq: 49 });
  // Hot rows stayed hot (WAL-only ones included), sealed ones stayed in their segments.
  assert.equal(engine.hotRows(ACCOUNT, 'app.logs'), 5);
  assert.equal(engine.hotRows(OTHER, 'app.logs'), 10);
  assert.equal((await engine.listSegments(ACCOUNT)).length, 4);
  assert.equal((await engine.listSegments(OTHER)).length, 1);
  for (const s of await engine.listSegments()) assert.ok(existsSync(engine.segmentPath(s)), s.fileName);
  // Columns and their widening came along; values of segments written before it convert.
  const logs = engine.listSchemas(ACCOUNT).find((s) => s.schema === 'app.logs');
  assert.deepEqual(logs?.columns.slice(6), [
    { name: 'seq', type: 'Int64' },
    { name: 'v', type: 'Float64' },
    { name: 'msg', type: 'String' },
  ]);
  const [v] = await scanRows(engine, 'app.logs', (rel) => `SELECT sum(v) AS v FROM ${rel}`);
  assert.equal(v!.v, (184 * 185) / 2 + 35 * 0.25);
  const secrets = await scanRows(
    engine,
    'app.logs',
    (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel} WHERE msg LIKE 'secret-of-b-%'`,
    {},
    OTHER,
  );
  assert.equal(secrets[0]!.n, 50);
}

function assertNewLayout(dir: string): void {
  const layout = new StorageLayout(dir);
  for (const old of [layout.legacyDatabase, `${layout.legacyDatabase}.wal`, layout.legacySegments])
    assert.ok(!existsSync(old), `${old} is gone`);
  for (const id of [ACCOUNT, OTHER]) assert.ok(existsSync(layout.account(id).database), `${id} has its own database`);
  assert.equal(readFileSync(layout.workerFile('worker-id'), 'utf8').trim(), '9d0c7f52-3f0b-4f64-9d84-0f3b7c1a2e11');
}

describe('migration of the shared storage layout to per-account directories', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('moves every row of every account, and the idempotency keys, into their own directories', async () => {
    unpackFixture(t.dir);
    t.engine = await openEngine(t.dir);
    assertNewLayout(t.dir);
    await assertEveryRow(t.engine);
    // A retry of a request stored before the upgrade is still recognised.
    const retry = await t.engine.append(
      input([part('app.logs', [{ ts: Date.UTC(2024, 0, 2), data: { seq: 999 } }])], {
        idempotencyKey: 'a-key-1',
        contentHash: 'h-a-key-1',
      }),
    );
    assert.equal(retry.duplicate, true);
    // New writes, seals and a restart work on the migrated directories.
    await t.engine.append(input([part('app.logs', [{ ts: Date.UTC(2024, 0, 2), data: { seq: 185, v: 1.5 } }])]));
    await t.engine.sealAll();
    await t.engine.close();
    t.engine = await openEngine(t.dir);
    assert.equal((await seen(t.engine, ACCOUNT, 'app.logs')).rows, 186);
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 5);
  });

  it('resumes a migration interrupted after one account, rebuilding a half-built directory', async () => {
    unpackFixture(t.dir);
    const layout = new StorageLayout(t.dir);
    await assert.rejects(
      migrateLegacyLayout(layout, testLog(), {
        afterAccount: () => {
          throw new Error('crash after the first account');
        },
      }),
      /crash after the first account/,
    );
    assert.ok(existsSync(layout.account(ACCOUNT).dir), 'the first account is in place');
    assert.ok(existsSync(layout.legacyDatabase), 'the old database is still the truth');
    assert.ok(!existsSync(layout.account(OTHER).dir));
    // The second account half built when the crash came.
    mkdirSync(path.join(layout.migratingAccount(OTHER), 'segments', '1'), { recursive: true });
    writeFileSync(path.join(layout.migratingAccount(OTHER), 'hot.duckdb'), 'half written');
    t.engine = await openEngine(t.dir);
    assertNewLayout(t.dir);
    assert.ok(!existsSync(layout.migratingAccount(OTHER)));
    await assertEveryRow(t.engine);
  });

  it('after the commit point, only removes what the old layout left', async () => {
    unpackFixture(t.dir);
    t.engine = await openEngine(t.dir);
    await t.engine.close();
    // A crash right after the old database was deleted leaves its WAL and segments behind.
    const layout = new StorageLayout(t.dir);
    mkdirSync(path.join(layout.legacySegments, '1'), { recursive: true });
    writeFileSync(path.join(layout.legacySegments, '1', 'x.parquet'), 'old');
    writeFileSync(`${layout.legacyDatabase}.wal`, 'old');
    t.engine = await openEngine(t.dir);
    assertNewLayout(t.dir);
    await assertEveryRow(t.engine);
  });
});
