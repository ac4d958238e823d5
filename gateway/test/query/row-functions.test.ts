/**
 * serialize and the row functions (issue 16, item 4): row_number, prev, next, row_cumsum over
 * serialized rows. Expected values are computed from LOGS in TypeScript; every query runs on one
 * worker and on three (row functions run where all rows are, in order).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run } from './fixture.js';

const byTime = [...LOGS].sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());

describe('serialize and row functions', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('row_number, prev, next and row_cumsum follow the sort order', async () => {
    const r = await run(
      'Logs | sort by timestamp asc | extend rn = row_number(), p = prev(id), n = next(latencyMs, 2, -1), total = row_cumsum(coalesce(latencyMs, 0)) | project id, rn, p, n, total',
      { ordered: true },
    );
    let total = 0;
    const expected = byTime.map((l, i) => {
      total += l.latencyMs ?? 0;
      return {
        id: l.id,
        rn: i + 1,
        p: i > 0 ? (byTime[i - 1]?.id as string) : null, // id is a guid: null before the first row
        n: i + 2 < byTime.length ? (byTime[i + 2]?.latencyMs ?? null) : -1,
        total,
      };
    });
    assert.deepEqual(r.results, expected);
  });

  it('row_number(start) after top; serialize gives rows an order that later steps keep', async () => {
    const top = await run('Logs | top 5 by timestamp desc | extend rn = row_number(0) | project id, rn', { ordered: true });
    const newest = [...byTime].reverse().slice(0, 5);
    assert.deepEqual(
      top.results,
      newest.map((l, i) => ({ id: l.id, rn: i })),
    );
    const ser = await run('range x from 1 to 4 step 1 | serialize s = row_cumsum(x) | where x > 1 | extend p = prev(s)', {
      ordered: true,
    });
    assert.deepEqual(ser.results, [
      { x: 2, s: 3, p: null },
      { x: 3, s: 6, p: 3 },
      { x: 4, s: 10, p: 6 },
    ]);
  });

  it('row_number and row_cumsum restart where their restart argument is true (which may use prev)', async () => {
    const r = await run(
      `Logs | sort by timestamp asc
         | extend rn = row_number(1, level != prev(level)), cs = row_cumsum(coalesce(latencyMs, 0), level != prev(level)),
           every4 = row_number(0, row_number() % 4 == 1)
         | project id, rn, cs, every4`,
      { ordered: true },
    );
    let rn = 0;
    let cs = 0;
    let every4 = 0;
    const expected = byTime.map((l, i) => {
      const restart = i === 0 || l.level !== byTime[i - 1]?.level;
      rn = restart ? 1 : rn + 1;
      cs = (restart ? 0 : cs) + (l.latencyMs ?? 0);
      every4 = (i + 1) % 4 === 1 ? 0 : every4 + 1;
      return { id: l.id, rn, cs, every4 };
    });
    assert.deepEqual(r.results, expected);
    await assert.rejects(
      run('Logs | sort by timestamp | extend row_number(1, 5)'),
      /restart argument of 'row_number' must be a bool/,
    );
  });

  it('refuses row functions over rows without an order, and outside extend/project/serialize', async () => {
    await assert.rejects(run('Logs | extend rn = row_number()'), /'row_number' needs serialized rows/);
    await assert.rejects(
      run('Logs | sort by timestamp | summarize by level | extend p = prev(level)'),
      /'prev' needs serialized rows/,
    );
    await assert.rejects(
      run('Logs | sort by timestamp | where prev(latencyMs) > 1'),
      /'prev' is supported in extend, project and serialize/,
    );
  });
});
