/**
 * Statements and sub-queries (issue 16, item 3): let-declared scalar and tabular functions,
 * materialize(), `as`, `invoke`, `set`, `declare query_parameters`, datatable trailing commas.
 * Expected answers are computed from LOGS in TypeScript; every query runs on one worker and on
 * three (fixture.run insists both agree).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'mocha';
import { closeCluster, getCluster, LOGS, run, scalar, sortedJson } from './fixture.js';

const withLatency = LOGS.filter((l) => l.latencyMs !== null);
const errors = LOGS.filter((l) => l.level === 'Error').length;

async function refused(query: string, message: RegExp): Promise<void> {
  await assert.rejects(run(query), (err: Error) => {
    assert.match(err.message, message);
    return true;
  });
}

describe('statements: let functions, materialize, as, invoke, set, query parameters', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('a scalar function with a default parameter runs over each row', async () => {
    const r = await run(
      'let scaled = (v:long, k:long = 10) { v * k }; Logs | where isnotnull(latencyMs) | project id, a = scaled(latencyMs), b = scaled(latencyMs, 2)',
    );
    const expected = withLatency.map((l) => ({ id: l.id, a: (l.latencyMs as number) * 10, b: (l.latencyMs as number) * 2 }));
    assert.deepEqual(sortedJson(r.results), sortedJson(expected));
  });

  it('functions call functions, and a body may hold its own lets', async () => {
    const q = 'let twice = (a:long) { a * 2 }; let f = (a:long) { let b = twice(a); b + 1 }; print f(5), twice(f(1))';
    const r = await run(q);
    assert.deepEqual(r.results, [{ print_0: 11, print_1: 6 }]);
  });

  it('a real parameter takes a long argument; a string parameter refuses one', async () => {
    assert.equal(await scalar('let half = (x:real) { x / 2 }; print half(3)'), 1.5);
    await refused('let f = (a:string) { strlen(a) }; print f(1)', /The argument 'a' of 'f' must be a string; this is a long/);
  });

  it('names in a function body mean what they meant where it was declared (lexical scope)', async () => {
    assert.equal(await scalar('let k = 1; let f = (a:long) { a + k }; let k = 100; print f(1)'), 2);
    assert.equal(await scalar('let a = 50; let f = (a:long) { a * 2 }; print f(3)'), 6);
  });

  it('refuses recursion, missing and extra arguments, by name', async () => {
    await refused('let f = (a:long) { f(a) }; print f(1)', /'f'/);
    await refused(
      'let f = (a:long, b:long) { a + b }; print f(1)',
      /The argument 'b' of 'f' is missing and has no default value/,
    );
    await refused('let f = (a:long) { a }; print f(1, 2)', /takes at most 1 argument/);
  });

  it('a tabular function takes a table and a scalar', async () => {
    const r = await run(
      'let slow = (T:(latencyMs:long), k:long) { T | where latencyMs > k }; slow(Logs, 1000) | summarize n = count()',
    );
    assert.deepEqual(r.results, [{ n: withLatency.filter((l) => (l.latencyMs as number) > 1000).length }]);
  });

  it('invoke passes the input as the first argument', async () => {
    const r = await run(
      'let slow = (T:(latencyMs:long), k:long = 1500) { T | where latencyMs > k }; Logs | where level == "Error" | invoke slow() | summarize n = count()',
    );
    const n = withLatency.filter((l) => l.level === 'Error' && (l.latencyMs as number) > 1500).length;
    assert.deepEqual(r.results, [{ n }]);
  });

  it('a tabular argument must have the columns its schema names', async () => {
    await refused('let f = (T:(nosuch:long)) { T }; f(Logs)', /has no column 'nosuch'/);
    await refused('let f = (T:(level:long)) { T }; f(Logs)', /the column 'level' is a string, not a long/);
  });

  it('a function without tabular parameters may return a table', async () => {
    const r = await run('let upto = (n:long) { range x from 1 to n step 1 }; upto(4) | summarize s = sum(x)');
    assert.deepEqual(r.results, [{ s: 10 }]);
  });

  it('materialize() gives its value, also when used twice', async () => {
    const r = await run('let e = materialize(Logs | where level == "Error"); e | union e | count');
    assert.deepEqual(r.results, [{ Count: 2 * errors }]);
  });

  it('`as` names the input for the rest of the query', async () => {
    const r = await run('Logs | where level == "Error" | as E | union E | count');
    assert.deepEqual(r.results, [{ Count: 2 * errors }]);
    const hinted = await run('Logs | where level == "Error" | as hint.materialized=true E | union E | count');
    assert.deepEqual(hinted.results, r.results);
  });

  it('set statements that do not change results are accepted; others are refused by name', async () => {
    const plain = await run('Logs | count');
    const set = await run('set querytrace; set servertimeout = 1m; Logs | count');
    assert.deepEqual(set.results, plain.results);
    await refused('set notruncation; Logs | count', /The set option 'notruncation' is not supported/);
  });

  it('declare query_parameters takes values from the variables, else the default', async () => {
    const q = 'declare query_parameters(lvl:string = "Error", k:long = 0); Logs | where level == lvl and latencyMs > k | count';
    const count = (lvl: string, k: number) => withLatency.filter((l) => l.level === lvl && (l.latencyMs as number) > k).length;
    assert.deepEqual((await run(q)).results, [{ Count: count('Error', 0) }]);
    const given = await run(q, {
      parameters: new Map<string, unknown>([
        ['lvl', 'Info'],
        ['k', 500],
      ]),
    });
    assert.deepEqual(given.results, [{ Count: count('Info', 500) }]);
    await refused('declare query_parameters(n:long); print n', /The query parameter 'n' has no value/);
    await assert.rejects(
      run('declare query_parameters(n:long); print n', { parameters: new Map([['n', 'many']]) }),
      /The value of the query parameter 'n' is not a long/,
    );
  });

  it('datatable accepts a comma after the last value, and comments', async () => {
    const r = await run(`datatable(a:long, b:string) [
      1, "x", // first row
      2, "y", // a trailing comma
    ] | summarize s = sum(a), n = count()`);
    assert.deepEqual(r.results, [{ s: 3, n: 2 }]);
    const empty = await run(`datatable(a:long, b:string) [ // no rows
    ] | summarize n = count()`);
    assert.deepEqual(empty.results, [{ n: 0 }]);
  });
});
