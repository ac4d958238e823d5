/**
 * A query with many fragments must not make Node warn about its abort signal (issue 16, part 4):
 * every fragment stream listens on the query's one signal, and Node's default limit of 10
 * listeners logged a MaxListenersExceededWarning for each such query.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

describe('the executor with many fragments', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('runs 14 fragments on three workers without a MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const legs = Array.from({ length: 14 }, () => 'Logs').join(', ');
      const r = await run(`union ${legs} | count`);
      assert.deepEqual(r.results, [{ Count: 14 * LOGS.length }]);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message),
      [],
    );
  });
});
