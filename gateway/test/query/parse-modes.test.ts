/**
 * parse in its three modes and parse-where (issue 16, item 5, part). Expected values come from
 * JavaScript regexes over LOGS' messages; every query runs on one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, sortedJson } from './fixture.js';

describe('parse modes and parse-where', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('the default (simple) mode reads string constants literally and converts typed columns', async () => {
    const r = await run('Logs | parse message with "Timeout after " secs:long "s" | project id, secs');
    const expected = LOGS.map((l) => {
      const m = /Timeout after (-?\d+)s/.exec(l.message);
      return { id: l.id, secs: m ? Number(m[1]) : null };
    });
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
    const dot = await run('Logs | parse message with "ratio=" x:real | where isnotnull(x) | project id, x');
    const withRatio = LOGS.filter((l) => l.message.includes('ratio=')).map((l) => ({
      id: l.id,
      x: Number(/ratio=(.*)$/.exec(l.message)?.[1]),
    }));
    assert.deepEqual(sortedJson(dot.results), sortedJson(withRatio));
  });

  it('simple is strict (a typed column that does not convert empties every column); relaxed keeps the others', async () => {
    const q = (kind: string, type: string) =>
      `Logs | where message startswith "Invalid" | parse ${kind} message with "user " who " from " ip:${type} | project who, ip`;
    const rows = LOGS.filter((l) => l.message.startsWith('Invalid'));
    // "10.0.0.1" is no datetime: strict modes empty every column, relaxed only that one.
    assert.deepEqual(
      (await run(q('', 'datetime'))).results,
      rows.map(() => ({ who: '', ip: null })),
    );
    assert.deepEqual(
      (await run(q('kind=relaxed', 'datetime'))).results,
      rows.map(() => ({ who: 'admin', ip: null })),
    );
    // A long column takes the number the text starts with (Kusto's pattern for longs); relaxed
    // takes the whole rest, which is no long.
    assert.deepEqual(
      (await run(q('', 'long'))).results,
      rows.map(() => ({ who: 'admin', ip: 10 })),
    );
    assert.deepEqual(
      (await run(q('kind=relaxed', 'long'))).results,
      rows.map(() => ({ who: 'admin', ip: null })),
    );
  });

  it('parse-where keeps only the rows that parse; * skips text', async () => {
    const r = await run('Logs | parse-where message with * "user " who " from " ip | project id, who, ip');
    const expected = LOGS.flatMap((l) => {
      const m = /user (.*?) from (.*)$/.exec(l.message);
      return m ? [{ id: l.id, who: m[1], ip: m[2] }] : [];
    });
    assert.ok(expected.length > 0);
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('regex mode reads constants as regexes and is strict too', async () => {
    const r = await run(
      'Logs | parse kind=regex message with "after " n:long "[a-z]" | where isnotnull(n) | summarize c = count(), s = sum(n)',
    );
    const ns = LOGS.map((l) => /after (.*?)[a-z]/.exec(l.message)).filter((m) => m !== null && /^-?\d+$/.test(m[1] as string));
    assert.deepEqual(r.results, [{ c: ns.length, s: ns.reduce((a, m) => a + Number(m?.[1]), 0) }]);
    await assert.rejects(run('Logs | parse-where kind=relaxed message with "a" b'), /parse-where kind=relaxed is not supported/);
  });
});
