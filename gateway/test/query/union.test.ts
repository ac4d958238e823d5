/**
 * union's options (issue 16, item 1): kind=inner|outer, withsource=, isfuzzy=, wildcard table
 * names. Expected answers are computed from the fixture rows in TypeScript; every query runs on
 * one worker and on three.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, EVENTS, getCluster, LOGS, run, sortedJson } from './fixture.js';

describe('union options', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('withsource= names each row’s table in a first column; an expression is union_argN', async () => {
    const r = await run('union withsource=Source Logs, logship.agent.events, (Logs | take 0) | summarize n = count() by Source');
    assert.deepEqual(r.header, ['Source', 'n']);
    assert.deepEqual(
      sortedJson(r.results),
      sortedJson([
        { Source: 'Logs', n: LOGS.length },
        { Source: 'logship.agent.events', n: EVENTS.length },
      ]),
    );
    const first = await run('union withsource=Source Logs, logship.agent.events | take 1', { columnsOnly: true });
    assert.equal(first.header[0], 'Source');
  });

  it('kind=inner keeps only the columns every input has; outer (the default) keeps all', async () => {
    const inner = await run('union kind=inner Logs, logship.agent.events | take 1', { columnsOnly: true });
    assert.deepEqual(inner.header, ['timestamp', 'host']);
    const outer = await run('union Logs, logship.agent.events | take 1', { columnsOnly: true });
    assert.ok(outer.header.includes('value') && outer.header.includes('message'));
    const n = await run('union kind=inner Logs, logship.agent.events | count');
    assert.deepEqual(n.results, [{ Count: LOGS.length + EVENTS.length }]);
  });

  it('a wildcard name stands for every table it matches', async () => {
    const r = await run('union withsource=T logship.*, Lo* | summarize n = count() by T');
    assert.deepEqual(
      sortedJson(r.results),
      sortedJson([
        { T: 'Logs', n: LOGS.length },
        { T: 'logship.agent.events', n: EVENTS.length },
      ]),
    );
    await assert.rejects(run('union Nothing*, Logs | count'), /No table matches 'Nothing\*'/);
  });

  it('isfuzzy=true leaves out names that do not resolve, but not all of them', async () => {
    const r = await run('union isfuzzy=true Logs, NoSuchTable, Nothing* | count');
    assert.deepEqual(r.results, [{ Count: LOGS.length }]);
    await assert.rejects(run('union Logs, NoSuchTable | count'), /NoSuchTable/);
    await assert.rejects(run('union isfuzzy=true NoSuchTable, Nothing* | count'), /None of the tables of this union exists/);
  });
});
