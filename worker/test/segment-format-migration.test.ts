/**
 * A data directory written before decision 0025 (every segment a Parquet file; a committed fixture
 * written by the storage engine of commit 0f603ca, worker/test/fixtures/parquet-segments/README.md)
 * opened by this engine: every row answers, new seals write DuckDB segment files beside the old
 * Parquet ones, and compaction, a purge, a restart and a copy to another worker work across both.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type FragmentStatement, runFragment, termFoldSql } from '@strata/common';
import { storedFolds } from '../src/storage/segment-format.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import {
  ACCOUNT,
  filesReclaimed,
  input,
  openEngine,
  part,
  purgeToEnd,
  scanRows,
  seqParityPurge,
  storageTestContext,
  tempDir,
} from './helpers/storage-fixtures.js';

// dist/test → the source tree's fixture (not copied by tsc).
const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../test/fixtures/parquet-segments/data.tar.gz');
const BASE = Date.UTC(2024, 0, 1);

interface Seen {
  rows: number;
  distinctSeq: number;
  minSeq: number;
  maxSeq: number;
  sumV: number;
}

async function seen(engine: StorageEngine, schema = 'app.logs'): Promise<Seen> {
  const [r] = await scanRows(
    engine,
    schema,
    (rel) =>
      `SELECT count(*)::INTEGER AS rows, count(DISTINCT seq)::INTEGER AS "distinctSeq", min(seq)::INTEGER AS "minSeq", max(seq)::INTEGER AS "maxSeq", sum(v)::DOUBLE AS "sumV" FROM ${rel}`,
  );
  return r as unknown as Seen;
}

/** Σ v over seq 0…n-1 as the fixture wrote it: v = seq before the widening (seq < 150), seq + 0.25 after. */
const sumV = (n: number) => Array.from({ length: n }, (_, i) => (i < 150 ? i : i + 0.25)).reduce((a, b) => a + b, 0);

const formats = async (engine: StorageEngine) => (await engine.listSegments(ACCOUNT)).map((s) => s.format).sort();

describe('segment format migration (Parquet segments of an earlier version)', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  const open = async () => {
    execFileSync('tar', ['-xzf', FIXTURE, '-C', t.dir]);
    t.engine = await openEngine(t.dir);
    return t.engine;
  };

  it('answers every row of the old directory, its Parquet segments listed as such', async () => {
    const engine = await open();
    assert.deepEqual(await seen(engine), { rows: 192, distinctSeq: 192, minSeq: 0, maxSeq: 191, sumV: sumV(192) });
    const [metrics] = await scanRows(engine, 'app.metrics', (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`);
    assert.equal(metrics!.n, 20);
    // Hot rows stayed hot (the last five only in the write-ahead log), segments stayed Parquet.
    assert.equal(engine.hotRows(ACCOUNT, 'app.logs'), 12);
    const segments = await engine.listSegments(ACCOUNT);
    assert.deepEqual(
      segments.map((s) => s.format),
      ['parquet', 'parquet', 'parquet'],
    );
    for (const s of segments) {
      assert.ok(s.fileName.endsWith('.parquet'), s.fileName);
      assert.ok(existsSync(engine.segmentPath(s)));
    }
    // Time bounds cut old segments like new ones.
    const [inRange] = await scanRows(engine, 'app.logs', (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`, {
      fromMs: BASE + 140_000,
      toMs: BASE + 160_000,
    });
    assert.equal(inRange!.n, 20);
  });

  it('seals new rows as DuckDB files beside the Parquet ones, and keeps answering after a restart', async () => {
    let engine = await open();
    await engine.sealAll();
    assert.deepEqual(await formats(engine), ['duckdb', 'parquet', 'parquet', 'parquet']);
    await engine.append(
      input([
        part(
          'app.logs',
          Array.from({ length: 8 }, (_, k) => ({
            ts: BASE + (192 + k) * 1000,
            data: { seq: 192 + k, v: 192 + k + 0.25, msg: 'n' },
          })),
        ),
      ]),
    );
    await engine.sealAll();
    assert.deepEqual(await formats(engine), ['duckdb', 'duckdb', 'parquet', 'parquet', 'parquet']);
    assert.deepEqual(await seen(engine), { rows: 200, distinctSeq: 200, minSeq: 0, maxSeq: 199, sumV: sumV(200) });
    await engine.close();
    engine = await openEngine(t.dir);
    t.engine = engine;
    assert.deepEqual(await seen(engine), { rows: 200, distinctSeq: 200, minSeq: 0, maxSeq: 199, sumV: sumV(200) });
  });

  it('runs a top-N through a threshold over old Parquet segments beside DuckDB ones (decision 0038)', async () => {
    const engine = await open();
    await engine.sealAll();
    // Four more DuckDB segments of two rows each (a threshold needs four whole files), two hot rows.
    for (let n = 0; n < 5; n++) {
      await engine.append(
        input([
          part(
            'app.logs',
            Array.from({ length: 2 }, (_, k) => ({
              ts: BASE + (192 + 2 * n + k) * 1000,
              data: { seq: 192 + 2 * n + k, v: 192 + 2 * n + k + 0.25, msg: 'n' },
            })),
          ),
        ]),
      );
      if (n < 4) await engine.sealAll();
    }
    assert.deepEqual(await formats(engine), ['duckdb', 'duckdb', 'duckdb', 'duckdb', 'duckdb', 'parquet', 'parquet', 'parquet']);
    // Parquet segments carry no statistics the guess reads: only the DuckDB ones are whole parts;
    // the Parquet ones (v widened from Int64 since) are filtered like the hot rows.
    const scan = await engine.openScan(ACCOUNT, 'app.logs');
    assert.ok(scan);
    try {
      assert.equal(scan.whole.length, 5);
      assert.ok(scan.branches.length >= 3);
      const available = scan.columns.map((c) => c.name);
      for (const [key, type, wire] of [
        ['seq', 'long', 'BIGINT'],
        ['v', 'real', 'DOUBLE'],
        ['timestamp', 'datetime', 'TIMESTAMP'],
      ] as const)
        for (const descending of [true, false])
          for (const limit of [1n, 5n, 40n, 250n]) {
            const dir = descending ? 'DESC' : 'ASC';
            const statement: FragmentStatement = {
              sql: `WITH "s0" AS (SELECT "seq" AS "c0", "${key}" AS "k" FROM "__strata_source__") SELECT "c0", "k" FROM "s0" ORDER BY "k" ${dir} NULLS LAST LIMIT ${limit}`,
              params: [],
              sourceColumns: [
                { name: 'seq', type: 'long' },
                { name: key, type },
              ],
              columns: [
                { id: 'c0', type: 'BIGINT' },
                { id: 'k', type: wire },
              ],
              maxRows: limit,
              branchTopN: { keys: [{ column: 1, descending, nullsFirst: false }], limit, source: key },
            };
            const got: unknown[] = [];
            for await (const b of runFragment(
              scan.connection,
              scan.relation,
              available,
              statement,
              new AbortController().signal,
              8192,
              scan.branches,
              scan.whole,
            ))
              got.push(...b.columns[0]!.map((x) => Number(x)));
            // seq orders like v and the timestamp (v = seq or seq + 0.25; ts = base + seq s).
            const all = Array.from({ length: 202 }, (_, i) => i);
            const expected = (descending ? all.reverse() : all).slice(0, Number(limit));
            assert.deepEqual(got, expected, `${key} ${dir} ${limit}`);
          }
    } finally {
      await scan.release();
    }
  });

  it('compacts Parquet and DuckDB segments into one DuckDB segment, and purges a Parquet one into a DuckDB file', async () => {
    const engine = await open();
    await engine.sealAll();
    const logs = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.logs');
    assert.deepEqual(logs.map((s) => s.format).sort(), ['duckdb', 'parquet', 'parquet']);
    const merged = await engine.compact({ accountId: ACCOUNT, schema: 'app.logs', segmentIds: logs.map((s) => s.segmentId) });
    assert.equal(merged.format, 'duckdb');
    assert.equal(merged.rowCount, 192);
    assert.deepEqual(await seen(engine), { rows: 192, distinctSeq: 192, minSeq: 0, maxSeq: 191, sumV: sumV(192) });
    await filesReclaimed(engine);
    for (const s of logs) assert.ok(!existsSync(engine.segmentPath(s)), 'a replaced file is deleted');

    // A purge of app.metrics (one Parquet segment): its rewrite is a DuckDB file.
    await purgeToEnd(engine, 'app.metrics', seqParityPurge(0));
    const metrics = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.metrics');
    assert.deepEqual(
      metrics.map((s) => [s.format, s.rowCount]),
      [['duckdb', 10]],
    );
    const [odd] = await scanRows(
      engine,
      'app.metrics',
      (rel) => `SELECT count(*)::INTEGER AS n, sum(seq % 2)::INTEGER AS odd FROM ${rel}`,
    );
    assert.deepEqual(odd, { n: 10, odd: 10 });
  });

  it('copies a Parquet segment to a worker of this version, which lists and reads it as Parquet', async () => {
    const engine = await open();
    const other = tempDir();
    const taker = await openEngine(other.dir);
    try {
      const [segment] = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.metrics');
      const copy = await engine.segmentForCopy(ACCOUNT, segment!.segmentId);
      assert.equal(copy.segment.format, 'parquet');
      assert.equal(
        await taker.adoptSegment({ ...copy.segment, sha256: copy.sha256 }, 'giver', createReadStream(copy.file), 'incoming'),
        true,
      );
      await taker.settleIncoming(ACCOUNT, segment!.segmentId, 1);
      const [adopted] = await taker.listSegments(ACCOUNT);
      assert.equal(adopted!.format, 'parquet');
      assert.ok(taker.segmentPath(adopted!).endsWith('.parquet'));
      const [r] = await scanRows(taker, 'app.metrics', (rel) => `SELECT count(*)::INTEGER AS n FROM ${rel}`);
      assert.equal(r!.n, 20);
      // A format the file does not have is caught by its row check, not listed.
      const [logs] = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.logs');
      const wrong = await engine.segmentForCopy(ACCOUNT, logs!.segmentId);
      await assert.rejects(
        taker.adoptSegment(
          { ...wrong.segment, format: 'duckdb', sha256: wrong.sha256 },
          'giver',
          createReadStream(wrong.file),
          'incoming',
        ),
      );
      assert.equal((await taker.listSegments(ACCOUNT)).length, 1);
    } finally {
      await taker.close();
      other.cleanup();
    }
  });
  it('gives term folds over a mix of Parquet, unfolded and folded DuckDB segments and hot rows, and folds old segments when compacting them (decision 0045)', async () => {
    const engine = await open();
    // The fixture's hot rows (short texts: no fold chosen) become a DuckDB file without a fold,
    // the shape of every DuckDB segment written before decision 0045.
    await engine.sealAll();
    const longRows = (from: number, n: number) =>
      Array.from({ length: n }, (_, k) => ({
        ts: BASE + (from + k) * 1000,
        data: { seq: from + k, v: from + k + 0.25, msg: longText(from + k) },
      }));
    await engine.append(input([part('app.logs', longRows(192, 400))]));
    await engine.sealAll();
    await engine.append(input([part('app.logs', longRows(592, 20))]));
    const folded = async () => {
      const logs = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.logs');
      const scan = await engine.openScan(ACCOUNT, 'app.logs');
      try {
        const files = await storedFolds(
          scan!.connection,
          logs.map((s) => engine.segmentPath(s)),
        );
        return logs.map((s) => [s.format, s.rowCount, files.get(engine.segmentPath(s)) ?? []] as const);
      } finally {
        await scan!.release();
      }
    };
    // Three Parquet segments, a DuckDB one without a fold (fixture hot rows), one with (long texts).
    assert.deepEqual((await folded()).map(([format, , folds]) => `${format}:${folds.join(',')}`).sort(), [
      'duckdb:',
      'duckdb:msg',
      'parquet:',
      'parquet:',
    ]);
    await sameAnswersOnTheFold(engine, 612);
    // A compaction of them all writes the fold (the old segments get it on their next rewrite):
    // most of the merged texts are free text, so the sample folds the column.
    const logs = (await engine.listSegments(ACCOUNT)).filter((s) => s.schema === 'app.logs');
    await engine.compact({ accountId: ACCOUNT, schema: 'app.logs', segmentIds: logs.map((s) => s.segmentId) });
    assert.deepEqual(await folded(), [['duckdb', 592, ['msg']]]);
    await sameAnswersOnTheFold(engine, 612);
  });
});

/** A long text (~200 bytes) with the characters the fold changes or keeps apart: İ, ı, K (Kelvin), ſ, ß, case. */
function longText(i: number): string {
  const words = ['Timeout', 'TIMEOUT', 'tİmeout', 'tımeout', 'disk', 'DIS\u212A', 'Dı\u017Fk', 'straße', 'Id', 'İd', 'ok'];
  const picked = Array.from({ length: 24 }, (_, k) => words[(i * 7 + k * ((i % 5) + 1)) % words.length]);
  return `${picked.join(i % 2 === 0 ? ' ' : '-')} #${i}`;
}

/**
 * Over the scan with the fold asked for: every row's `#fold:msg` is the term fold of its msg
 * (stored or computed), and the term regex answers the same on the fold as on the text.
 */
async function sameAnswersOnTheFold(engine: StorageEngine, rows: number): Promise<void> {
  const fold = '"#fold:msg"';
  const [r] = await scanRows(
    engine,
    'app.logs',
    (rel) =>
      `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE ${fold} IS DISTINCT FROM ${termFoldSql('msg')})::INTEGER AS wrong FROM ${rel}`,
    { folds: ['msg'] },
  );
  assert.deepEqual(r, { n: rows, wrong: 0 });
  for (const needle of ['timeout', 'disk', 'id', 'n', 'straße'.slice(0, 3)]) {
    const re = `(?i)(?:^|[^\\p{L}\\p{N}])${needle}(?:[^\\p{L}\\p{N}]|$)`;
    const [c] = await scanRows(
      engine,
      'app.logs',
      (rel) =>
        `SELECT count(*) FILTER (WHERE regexp_matches(msg, '${re}'))::INTEGER AS text, count(*) FILTER (WHERE regexp_matches(${fold}, '${re}'))::INTEGER AS fold FROM ${rel}`,
      { folds: ['msg'] },
    );
    assert.equal(c!.fold, c!.text, needle);
    if (needle === 'timeout' || needle === 'id') assert.ok((c!.text as number) > 0, `some rows hold ${needle}`);
  }
}
