/**
 * Which String columns a seal stores the term fold of (decision 0045): free text only — values
 * averaging at least FOLD_MIN_AVG_BYTES bytes, most of them with a space. A log message is folded;
 * a long path or id without spaces, a short spaced text and a level are not. The stored fold is
 * the term fold of each value, NULLs included.
 */
import assert from 'node:assert/strict';
import { termFoldSql } from '@strata/common';
import { storedFolds } from '../src/storage/segment-format.js';
import { FOLD_MIN_AVG_BYTES } from '../src/storage/term-folds.js';
import { ACCOUNT, input, openEngine, part, scanRows, storageTestContext } from './helpers/storage-fixtures.js';

const BASE = Date.UTC(2024, 0, 1);

describe('stored term folds: which columns (decision 0045)', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  it('folds the free-text column only, with the fold of every value', async () => {
    const engine = await openEngine(t.dir);
    t.engine = engine;
    const rows = Array.from({ length: 300 }, (_, i) => ({
      ts: BASE + i * 1000,
      data: {
        // ~45 bytes, spaced, with characters the fold changes: folded.
        message: i % 10 === 0 ? null : `Upstream TIMEOUT after ${i}ms calling İstanbul-db ${i % 4}`,
        // Long, no spaces: an id or a path, left alone.
        path: `/api/v1/checkout/items/${i}/details/${i * 7919}`,
        // Spaced but short: left alone.
        note: `ok ${i % 3}`,
        level: i % 2 === 0 ? 'Info' : 'Error',
      },
    }));
    assert.ok(`/api/v1/checkout/items/1/details/7919`.length >= FOLD_MIN_AVG_BYTES);
    await engine.append(input([part('app.folds', rows)]));
    await engine.sealAll();
    const [segment] = await engine.listSegments(ACCOUNT);
    const scan = await engine.openScan(ACCOUNT, 'app.folds');
    try {
      const files = await storedFolds(scan!.connection, [engine.segmentPath(segment!)]);
      assert.deepEqual(files.get(engine.segmentPath(segment!)), ['message']);
    } finally {
      await scan!.release();
    }
    // The stored fold is the fold of each value (NULL for NULL), read through the scan.
    const [r] = await scanRows(
      engine,
      'app.folds',
      (rel) =>
        `SELECT count(*)::INTEGER AS n, count("#fold:message")::INTEGER AS folded, count(*) FILTER (WHERE "#fold:message" IS DISTINCT FROM ${termFoldSql('message')})::INTEGER AS wrong, count(*) FILTER (WHERE "#fold:path" IS DISTINCT FROM ${termFoldSql('path')})::INTEGER AS "wrongPath" FROM ${rel}`,
      { folds: ['message', 'path'] },
    );
    assert.deepEqual(r, { n: 300, folded: 270, wrong: 0, wrongPath: 0 });
    const [sample] = await scanRows(
      engine,
      'app.folds',
      (rel) => `SELECT "#fold:message" AS f FROM ${rel} WHERE message LIKE '%after 7ms %'`,
      { folds: ['message'] },
    );
    assert.equal(sample?.f, 'upstream timeout after 7ms calling \u0131stanbul-db 3');
  });
});
