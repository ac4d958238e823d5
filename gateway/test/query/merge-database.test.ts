/**
 * The gateway's merge database is confined (docs/decisions/0008-fragment-safety.md): statements on
 * it reach no file but its spill directory and cannot change its configuration, and it still
 * spills large merges to that directory.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'mocha';
import { MergeDatabase } from '../../src/query/exec/merge-database.js';

describe('merge database confinement', function () {
  this.timeout(60_000);
  const merge = new MergeDatabase({ threads: 1, memoryLimit: '100MB' });
  after(() => merge.close());

  it('refuses files outside its spill directory, extensions and configuration changes', async () => {
    const c = await merge.connect();
    try {
      for (const statement of [
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM glob('/etc/*')",
        "COPY (SELECT 1) TO '/tmp/strata-merge-escape.csv'",
        "ATTACH '/tmp/strata-merge-escape.db' AS x",
        'LOAD spatial',
        'SET enable_external_access = true',
        "SET memory_limit = '100TB'",
      ])
        await assert.rejects(c.run(statement), /Permission Error|disabled|locked/, statement);
    } finally {
      c.closeSync();
    }
  });

  it('still spills a merge larger than its memory limit', async () => {
    const c = await merge.connect();
    try {
      await c.run(
        "CREATE TEMP TABLE t AS SELECT range * 7919 % 1000003 AS x, repeat('a', 100) || range AS pad FROM range(4000000)",
      );
      const rows = (await c.runAndReadAll('SELECT count(*) AS n FROM (SELECT * FROM t ORDER BY x DESC)')).getRowsJson();
      assert.deepEqual(rows, [['4000000']]);
    } finally {
      c.closeSync();
    }
  });
});
