import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { MAX_JSON_DEPTH, StrataError } from '@strata/common';
import { StorageEngine } from '../src/storage/storage-engine.js';
import {
  ACCOUNT,
  entries,
  fakeGuard,
  input,
  openEngine,
  part,
  scanRows,
  storageTestContext,
  testLog,
} from './helpers/storage-fixtures.js';

describe('storage engine', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('creates a table on first write with inferred types and the stamped columns', async () => {
    t.engine = await openEngine(t.dir);
    const result = await t.engine.append(
      input(
        [
          part(
            'App.Logs',
            [
              {
                ts: Date.UTC(2024, 0, 1),
                data: { n: 1, f: 1.5, b: true, s: 'x', d: { k: [1] }, when: '2024-02-03T04:05:06.789Z' },
              },
              { ts: Date.UTC(2024, 0, 2), data: { n: 2, f: 2.5, b: false, s: 'y', d: [1, 2], when: '2024-02-03T04:05:07Z' } },
            ],
            ['when'],
          ),
        ],
        { agent: 'agent-7', inflowTimestampUs: Date.UTC(2024, 5, 1) * 1000 },
      ),
    );
    assert.deepEqual(result, { rowsStored: 2, duplicate: false });
    assert.deepEqual(t.engine.listSchemas(ACCOUNT), [
      {
        schema: 'App.Logs',
        columns: [
          { name: 'timestamp', type: 'DateTime' },
          { name: '__INFLOW_ID', type: 'Guid' },
          { name: '__INFLOW_TIMESTAMP', type: 'DateTime' },
          { name: '__INFLOW_HOST', type: 'String' },
          { name: '__INFLOW_SOURCE_ADDRESS', type: 'String' },
          { name: '__INFLOW_AGENT', type: 'String' },
          { name: 'n', type: 'Int64' },
          { name: 'f', type: 'Float64' },
          { name: 'b', type: 'Boolean' },
          { name: 's', type: 'String' },
          { name: 'd', type: 'Dynamic' },
          { name: 'when', type: 'DateTime' },
        ],
      },
    ]);
    const rows = await scanRows(
      t.engine,
      'App.Logs',
      (r) =>
        `SELECT strftime("timestamp", '%Y-%m-%dT%H:%M:%SZ') AS ts, __INFLOW_HOST, __INFLOW_SOURCE_ADDRESS, __INFLOW_AGENT,
                strftime(__INFLOW_TIMESTAMP, '%Y-%m-%d') AS arrived, n, f, b, s, d, strftime("when", '%H:%M:%S.%g') AS w,
                typeof(__INFLOW_ID) AS idType FROM ${r} ORDER BY n`,
    );
    assert.deepEqual(rows, [
      {
        ts: '2024-01-01T00:00:00Z',
        __INFLOW_HOST: 'gateway-test',
        __INFLOW_SOURCE_ADDRESS: '127.0.0.1',
        __INFLOW_AGENT: 'agent-7',
        arrived: '2024-06-01',
        n: '1',
        f: 1.5,
        b: true,
        s: 'x',
        d: '{"k":[1]}',
        w: '04:05:06.789',
        idType: 'UUID',
      },
      {
        ts: '2024-01-02T00:00:00Z',
        __INFLOW_HOST: 'gateway-test',
        __INFLOW_SOURCE_ADDRESS: '127.0.0.1',
        __INFLOW_AGENT: 'agent-7',
        arrived: '2024-06-01',
        n: '2',
        f: 2.5,
        b: false,
        s: 'y',
        d: '[1,2]',
        w: '04:05:07.000',
        idType: 'UUID',
      },
    ]);
    assert.equal(await t.engine.openScan(ACCOUNT, 'Missing'), undefined);
    assert.deepEqual(t.engine.listSchemas('00000000-0000-0000-0000-0000000000ff'), []);
  });

  it('adds columns and widens Int64 → Float64 → String without dropping values, in hot rows and segments', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('M', [{ ts: 1_000, data: { v: 1 } }])]));
    await t.engine.sealAll(); // segment written with v: Int64
    await t.engine.append(input([part('M', [{ ts: 2_000, data: { v: 2.5, extra: 'e' } }])]));
    assert.equal(t.engine.listSchemas(ACCOUNT)[0]!.columns.find((c) => c.name === 'v')!.type, 'Float64');
    await t.engine.sealAll(); // segment written with v: Float64
    await t.engine.append(input([part('M', [{ ts: 3_000, data: { v: 'three', when: '2024-01-01T00:00:00Z' } }], ['when'])]));
    await t.engine.append(input([part('M', [{ ts: 4_000, data: { v: true, when: 'not a date' } }])]));
    const cols = t.engine.listSchemas(ACCOUNT)[0]!.columns;
    assert.equal(cols.find((c) => c.name === 'v')!.type, 'String');
    assert.equal(cols.find((c) => c.name === 'when')!.type, 'String');
    const rows = await scanRows(t.engine, 'M', (r) => `SELECT v, extra, "when" FROM ${r} ORDER BY "timestamp"`);
    assert.deepEqual(rows, [
      { v: '1', extra: null, when: null },
      { v: '2.5', extra: 'e', when: null },
      { v: 'three', extra: null, when: '2024-01-01T00:00:00.000000Z' },
      { v: 'true', extra: null, when: 'not a date' },
    ]);
  });

  it('stores a request with an idempotency key once, also across a restart, and refuses a different body under the key', async () => {
    t.engine = await openEngine(t.dir);
    const req = input([part('Idem', entries(10))], { idempotencyKey: 'k-1', contentHash: 'h1' });
    assert.deepEqual(await t.engine.append(req), { rowsStored: 10, duplicate: false });
    assert.deepEqual(await t.engine.append(req), { rowsStored: 0, duplicate: true });
    // Concurrent retries in one group commit.
    const req2 = input([part('Idem', entries(5, undefined, 100))], { idempotencyKey: 'k-2', contentHash: 'h2' });
    const both = await Promise.all([t.engine.append(req2), t.engine.append(req2), t.engine.append(req2)]);
    assert.equal(both.filter((r) => !r.duplicate).length, 1);
    await assert.rejects(
      t.engine.append(input([part('Idem', entries(1))], { idempotencyKey: 'k-1', contentHash: 'other' })),
      (err: unknown) => err instanceof StrataError && err.kind === 'conflict',
    );
    await t.engine.close();
    t.engine = await openEngine(t.dir);
    assert.deepEqual(await t.engine.append(req), { rowsStored: 0, duplicate: true });
    const [count] = await scanRows(t.engine, 'Idem', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`);
    assert.equal(count!.n, 15);
  });

  it('keys are per account: the same key in another account is a different request', async () => {
    t.engine = await openEngine(t.dir);
    const other = '00000000-0000-0000-0000-0000000000b2';
    await t.engine.append(input([part('A', entries(1))], { idempotencyKey: 'same' }));
    const r = await t.engine.append(input([part('A', entries(1))], { idempotencyKey: 'same', accountId: other }));
    assert.equal(r.duplicate, false);
  });

  it('fails only the bad request of a group commit, writing nothing of it', async () => {
    t.engine = await openEngine(t.dir);
    const good = Array.from({ length: 5 }, (_, i) => t.engine!.append(input([part('G', entries(20, undefined, i * 20))])));
    const badPart = part('G', entries(3, undefined, 1000));
    badPart.rowCount = 4; // declares more rows than it holds
    const bad = t.engine.append(input([part('G', entries(2, undefined, 2000)), badPart]));
    const results = await Promise.allSettled([...good, bad]);
    assert.deepEqual(
      results.slice(0, 5).map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
    assert.equal(results[5]!.status, 'rejected');
    assert.match(String((results[5] as PromiseRejectedResult).reason.message), /declared 4 rows but holds 3/);
    const [count] = await scanRows(t.engine, 'G', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`);
    assert.equal(count!.n, 100);
  });

  it('refuses rows that do not match their declared types as invalid', async () => {
    t.engine = await openEngine(t.dir);
    const p = part('T', [{ ts: 1, data: { n: 1 } }]);
    p.rows = Buffer.from(JSON.stringify({ '@ts': 1000, '@id': '0b7c5a3e-1d2f-4c5b-8a9e-123456789abc', n: 'x' }));
    await assert.rejects(t.engine.append(input([p])), (err: unknown) => err instanceof StrataError && err.kind === 'invalid');
    assert.deepEqual(t.engine.listSchemas(ACCOUNT), []);
  });

  it('seals hot rows into a DuckDB segment file sorted by timestamp, listed in the catalog with its format', async () => {
    t.engine = await openEngine(t.dir);
    // Out of order on purpose.
    await t.engine.append(input([part('S', entries(500, Date.UTC(2024, 0, 1), 500))]));
    await t.engine.append(input([part('S', entries(500, Date.UTC(2024, 0, 1), 0))]));
    assert.equal(t.engine.hotRows(ACCOUNT, 'S'), 1000);
    const [segment] = await t.engine.sealAll();
    assert.ok(segment);
    assert.equal(t.engine.hotRows(ACCOUNT, 'S'), 0);
    assert.equal(segment.rowCount, 1000);
    assert.equal(segment.format, 'duckdb');
    assert.equal(segment.minTsUs, Date.UTC(2024, 0, 1) * 1000);
    assert.equal(segment.maxTsUs, (Date.UTC(2024, 0, 1) + 999_000) * 1000);
    const file = t.engine.segmentPath(segment);
    assert.ok(file.endsWith(`${segment.segmentId}.duckdb`), file);
    assert.ok(existsSync(file));
    // Everything is in the file itself: nothing left in a write-ahead log or temporary file.
    assert.ok(!existsSync(`${file}.wal`));
    assert.ok(!existsSync(`${file}.tmp`));
    const listed = await t.engine.listSegments(ACCOUNT);
    assert.deepEqual(
      listed.map((s) => [s.segmentId, s.schema, s.rowCount, s.byteSize, s.format]),
      [[segment.segmentId, 'S', 1000, segment.byteSize, 'duckdb']],
    );

    // Another instance reads the file as it is: one table of the sealed rows, sorted by timestamp.
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    await c.run(`ATTACH '${file}' AS s (READ_ONLY)`);
    const sorted = (
      await c.runAndReadAll(
        `SELECT count(*)::INTEGER AS n, bool_and(s = seq) AS ok FROM (SELECT seq, row_number() OVER () - 1 AS s FROM s."rows")`,
      )
    ).getRowObjectsJson();
    assert.deepEqual(sorted, [{ n: 1000, ok: true }]);
    c.closeSync();
    db.closeSync();

    // Still queryable, hot and sealed together, with the time range applied.
    await t.engine.append(input([part('S', entries(10, Date.UTC(2024, 0, 1), 1000))]));
    const [all] = await scanRows(
      t.engine,
      'S',
      (r) => `SELECT count(*)::INTEGER AS n, count(DISTINCT seq)::INTEGER AS d FROM ${r}`,
    );
    assert.deepEqual(all, { n: 1010, d: 1010 });
    const [ranged] = await scanRows(t.engine, 'S', (r) => `SELECT count(*)::INTEGER AS n, min(seq)::INTEGER AS lo FROM ${r}`, {
      fromMs: Date.UTC(2024, 0, 1) + 100_000,
      toMs: Date.UTC(2024, 0, 1) + 1_005_000,
    });
    assert.deepEqual(ranged, { n: 905, lo: 100 });
    // Segment footers are parsed once, not per query (segment files never change once written).
    const [setting] = await scanRows(t.engine, 'S', () => "SELECT current_setting('parquet_metadata_cache') AS on");
    assert.deepEqual(setting, { on: true });
  });

  it('seals by itself once hot rows reach the row threshold', async () => {
    t.engine = await openEngine(t.dir, { sealRows: 100, maintenanceIntervalMs: 50 });
    await t.engine.append(input([part('Auto', entries(150))]));
    const deadline = Date.now() + 10_000;
    while ((await t.engine.listSegments(ACCOUNT)).length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal((await t.engine.listSegments(ACCOUNT)).length, 1);
    assert.equal(t.engine.hotRows(ACCOUNT, 'Auto'), 0);
  });

  it('has every committed row, segment and schema after a restart and deletes unlisted files', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('R', entries(300))]));
    await t.engine.sealAll();
    await t.engine.append(input([part('R', entries(200, undefined, 300)), part('R2', entries(7))]));
    const orphanDir = path.join(t.engine.layout.account(ACCOUNT).segments, '1');
    await t.engine.close();
    const orphan = path.join(orphanDir, '11111111-1111-4111-8111-111111111111.parquet');
    writeFileSync(orphan, 'left by a crashed seal');
    writeFileSync(`${orphan}.tmp`, 'left by a crashed compaction');
    t.engine = await openEngine(t.dir);
    assert.ok(!existsSync(orphan));
    assert.ok(!existsSync(`${orphan}.tmp`));
    assert.deepEqual(
      t.engine.listSchemas(ACCOUNT).map((s) => s.schema),
      ['R', 'R2'],
    );
    const [r] = await scanRows(t.engine, 'R', (rel) => `SELECT count(DISTINCT seq)::INTEGER AS n FROM ${rel}`);
    assert.equal(r!.n, 500);
    assert.equal(t.engine.hotRows(ACCOUNT, 'R'), 200);
  });

  it('refuses rows whose values nest deeper than the inflow limit, as the gateway does', async () => {
    t.engine = await openEngine(t.dir);
    const deep = (levels: number) => {
      let v: unknown = 1;
      for (let i = 0; i < levels; i++) v = { k: v };
      return v;
    };
    const ok = await t.engine.append(input([part('Deep', [{ ts: Date.UTC(2024, 0, 1), data: { d: deep(MAX_JSON_DEPTH) } }])]));
    assert.equal(ok.rowsStored, 1);
    for (const levels of [MAX_JSON_DEPTH + 1, 10_000]) {
      const rows = Buffer.from(`{"@ts":1,"@id":"${randomUUID()}","d":${'['.repeat(levels)}${']'.repeat(levels)}}`);
      await assert.rejects(
        t.engine.append(input([{ schema: 'Deep', columns: [{ name: 'd', type: 'Dynamic' }], rows, rowCount: 1 }])),
        (err: StrataError) =>
          err.kind === 'invalid' && err.message === `Schema Deep: a field value nests deeper than ${MAX_JSON_DEPTH} levels.`,
      );
    }
    assert.equal(t.engine.hotRows(ACCOUNT, 'Deep'), 1);
  });

  it('stores a nested value sent for a String column as its JSON text, however deep, and refuses one for a number', async () => {
    // Only Dynamic columns keep JSON, so only batches declaring one are scanned for nesting
    // (hot-writer.ts nestedValuesKept): any other column stores the value's text or refuses it.
    t.engine = await openEngine(t.dir);
    for (const levels of [MAX_JSON_DEPTH + 1, 100_000]) {
      const nested = `${'['.repeat(levels)}${']'.repeat(levels)}`;
      const rows = Buffer.from(`{"@ts":1,"@id":"${randomUUID()}","s":${nested},"undeclared":${nested}}`);
      const stored = await t.engine.append(
        input([{ schema: 'Flat', columns: [{ name: 's', type: 'String' }], rows, rowCount: 1 }]),
      );
      assert.equal(stored.rowsStored, 1);
      const [r] = await scanRows(
        t.engine,
        'Flat',
        (rel) => `SELECT length(s)::INTEGER AS n, s LIKE '[[%]]' AS brackets FROM ${rel} WHERE length(s) = ${2 * levels}`,
      );
      assert.deepEqual(r, { n: 2 * levels, brackets: true });
    }
    const rows = Buffer.from(`{"@ts":1,"@id":"${randomUUID()}","n":${'['.repeat(10_000)}${']'.repeat(10_000)}}`);
    await assert.rejects(
      t.engine.append(input([{ schema: 'Flat', columns: [{ name: 'n', type: 'Int64' }], rows, rowCount: 1 }])),
      (err: StrataError) => err.kind === 'invalid' && err.message.startsWith('Rows do not match their declared columns'),
    );
    assert.equal(t.engine.hotRows(ACCOUNT, 'Flat'), 2);
  });

  it("gives an account's instance its threads while it is active and one thread once it is idle", async () => {
    const OTHER = '00000000-0000-0000-0000-0000000000b2';
    const guard = fakeGuard();
    await guard.check();
    const open = (idleThreadsMs: number) =>
      StorageEngine.open({
        dataPath: t.dir,
        log: testLog(),
        guard,
        cores: 4,
        tuning: { maintenanceIntervalMs: 20, idleThreadsMs },
      });
    const setting = async (engine: StorageEngine, accountId: string) => {
      const scan = await engine.openScan(accountId, 'T');
      try {
        return (await scan!.connection.runAndReadAll(`SELECT current_setting('threads') AS n`)).getRowObjectsJS()[0]!.n;
      } finally {
        await scan!.release();
      }
    };
    t.engine = await open(3_600_000);
    await t.engine.append(input([part('T', entries(3))]));
    await t.engine.append(input([part('T', entries(3))], { accountId: OTHER }));
    assert.equal(t.engine.accountThreads(ACCOUNT), 3, 'cores but one while active');
    assert.equal(await setting(t.engine, ACCOUNT), 3n);
    await t.engine.close();
    // Reopened: every instance starts with one thread; a write or a query makes its account active.
    // The idle window is long enough that a loaded machine (the suite runs beside other work) does
    // not let it pass between a write and the read that checks the account is active.
    t.engine = await open(2_000);
    assert.equal(t.engine.accountThreads(ACCOUNT), 1);
    assert.equal(await setting(t.engine, OTHER), 1n);
    await t.engine.append(input([part('T', entries(1))]));
    assert.equal(await setting(t.engine, ACCOUNT), 3n);
    assert.equal(t.engine.accountThreads(OTHER), 1, 'the other account stays idle');
    const scan = await t.engine.openScan(OTHER, 'T');
    await scan!.applyThreads(2); // as a query does, with the executor settings' value
    await scan!.release();
    assert.equal(await setting(t.engine, OTHER), 2n);
    // Idle for longer than idleThreadsMs: maintenance takes both back to one thread.
    const deadline = Date.now() + 15_000;
    while ((t.engine.accountThreads(ACCOUNT) !== 1 || t.engine.accountThreads(OTHER) !== 1) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(await setting(t.engine, ACCOUNT), 1n);
    assert.equal(await setting(t.engine, OTHER), 1n);
  });

  it('keeps each account in its own directory; reads create none, and only GUIDs become paths', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('A', entries(2))]));
    assert.deepEqual(readdirSync(path.join(t.dir, 'accounts')), [ACCOUNT]);
    assert.ok(existsSync(t.engine.layout.account(ACCOUNT).database));
    const stranger = '00000000-0000-0000-0000-0000000000c3';
    assert.equal(await t.engine.openScan(stranger, 'A'), undefined);
    assert.deepEqual(t.engine.listSchemas(stranger), []);
    assert.deepEqual(await t.engine.describe(stranger), []);
    assert.deepEqual(readdirSync(path.join(t.dir, 'accounts')), [ACCOUNT], 'a read made no directory');
    for (const id of ['../../etc', `${ACCOUNT}/../x`, ACCOUNT.toUpperCase(), '']) {
      assert.throws(() => t.engine!.layout.account(id), /lower-case GUID/);
      await assert.rejects(t.engine.append(input([part('A', entries(1))], { accountId: id })), /lower-case GUID/);
      assert.equal(await t.engine.openScan(id, 'A'), undefined);
    }
    assert.deepEqual(readdirSync(path.join(t.dir, 'accounts')), [ACCOUNT]);
  });

  it('refuses a second open of the same data path in one process', async () => {
    t.engine = await openEngine(t.dir);
    await assert.rejects(openEngine(t.dir), /already open/);
  });

  it('gives several schemas in one consistent snapshot', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('A', entries(3)), part('B', entries(4))]));
    const snap = await t.engine.openSnapshot(ACCOUNT, [{ schema: 'A' }, { schema: 'Nope' }, { schema: 'B' }]);
    try {
      assert.deepEqual(
        snap.relations.map((r) => r.schema),
        ['A', 'B'],
      );
      const [a, b] = snap.relations;
      const rows = (
        await snap.connection.runAndReadAll(
          `SELECT (SELECT count(*) FROM ${a!.relation})::INTEGER AS a, (SELECT count(*) FROM ${b!.relation})::INTEGER AS b`,
        )
      ).getRowObjectsJson();
      assert.deepEqual(rows, [{ a: 3, b: 4 }]);
    } finally {
      await snap.release();
    }
  });

  it('releases a snapshot once, and close() waits for a release still under way', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('A', entries(3))]));
    const snap = await t.engine.openSnapshot(ACCOUNT, [{ schema: 'A' }]);
    // The query service leaves the release running while it answers; close comes meanwhile.
    const first = snap.release();
    assert.equal(snap.release(), first);
    const closing = t.engine.close();
    await first;
    await closing;
    t.engine = await openEngine(t.dir);
    const [r] = await scanRows(t.engine, 'A', (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`);
    assert.equal(r!.n, 3);
  });
});
