/**
 * The parse-kv operator and parse's flags= (issue 16, item 5). Expected values are Kusto's
 * documented answers written by hand, or computed from LOGS in TypeScript; every query runs on
 * one worker and on three. A property writes random pairs as text and reads them back.
 */
import assert from 'node:assert/strict';
import { isStrataError } from '@strata/common';
import fc from 'fast-check';
import { after, before, describe, it } from 'mocha';
import { approx, closeCluster, getCluster, LOGS, run } from './fixture.js';

const rows = async (q: string) => (await run(q, { ordered: true })).results;

async function refused(query: string, message: RegExp): Promise<void> {
  await assert.rejects(run(query), (err: unknown) => isStrataError(err) && message.test((err as Error).message));
}

describe('parse-kv and parse flags', () => {
  before(async function () {
    this.timeout(60_000);
    await getCluster();
  });
  after(closeCluster);

  it('specified delimiters, with quotes, escapes and greedy values', async () => {
    assert.deepEqual(
      await rows(
        'print str="ThreadId:458745723, Machine:Node001, Text: The service is up, Level: Info" | parse-kv str as (Text: string, ThreadId:long, Machine: string) with (pair_delimiter=",", kv_delimiter=":") | project-away str',
      ),
      [{ Text: 'The service is up', ThreadId: 458745723, Machine: 'Node001' }],
    );
    const expected = {
      'event time': '2021-01-01T10:00:54.0000000Z',
      src: '10.1.1.123',
      dst: '10.1.1.124',
      bytes: 125,
      failure: 'connection aborted',
    };
    const keys = "(['event time']:datetime, src:string, dst:string, bytes:long, failure:string)";
    assert.deepEqual(
      await rows(
        `print str='src=10.1.1.123 dst=10.1.1.124 bytes=125 failure="connection aborted" "event time"=2021-01-01T10:00:54' | parse-kv str as ${keys} with (pair_delimiter=' ', kv_delimiter='=', quote='"') | project-away str`,
      ),
      [expected],
    );
    assert.deepEqual(
      await rows(
        `print str='src=10.1.1.123 dst=10.1.1.124 bytes=125 failure=(connection aborted) (event time)=(2021-01-01 10:00:54)' | parse-kv str as ${keys} with (pair_delimiter=' ', kv_delimiter='=', quote='()') | project-away str`,
      ),
      [expected],
    );
    assert.deepEqual(
      await rows(
        `print str='bytes=125 failure="the remote host sent \\\\"bye!\\\\"" src=x' | parse-kv str as (bytes:long, failure:string, src:string, absent:long, gone:string) with (pair_delimiter=' ', kv_delimiter='=', quote='"', escape='\\\\') | project-away str`,
      ),
      [{ bytes: 125, failure: 'the remote host sent "bye!"', src: 'x', absent: null, gone: '' }],
    );
    const text = "print str='name=John Doe phone=555 5555 city=New York'";
    const cols = '(name:string, phone:string, city:string)';
    assert.deepEqual(
      await rows(`${text} | parse-kv str as ${cols} with (pair_delimiter=' ', kv_delimiter='=') | project-away str`),
      [{ name: 'John', phone: '555', city: 'New' }],
    );
    assert.deepEqual(
      await rows(`${text} | parse-kv str as ${cols} with (pair_delimiter=' ', kv_delimiter='=', greedy=true) | project-away str`),
      [{ name: 'John Doe', phone: '555 5555', city: 'New York' }],
    );
  });

  it('no delimiters (any non-alphanumeric character delimits) and the regex mode', async () => {
    assert.deepEqual(
      await rows(
        'print str="2021-01-01T10:00:34 [INFO] ThreadId:458745723, Machine:Node001, Text: Started" | parse-kv str as (Text: string, ThreadId:long, Machine: string) | project-away str',
      ),
      [{ Text: 'Started', ThreadId: 458745723, Machine: 'Node001' }],
    );
    assert.deepEqual(
      await rows(
        `print str="ThreadId:458745723, Text: 'The service \\\\' is up'" | parse-kv str as (Text: string, ThreadId:long) with (quote="'", escape='\\\\') | project-away str`,
      ),
      [{ Text: "The service ' is up", ThreadId: 458745723 }],
    );
    assert.deepEqual(
      await rows(
        `print str=@'["referer url: https://h.com/r?d=/?h=1", "advertiser id: 24fefbca-cf27-4d62-a623-249c2ad30c73", "referer url: second"]' | parse-kv str as (['referer url']:string, ['advertiser id']: guid) with (regex=@'"([\\w ]+)\\s*:\\s*([^"]*)"') | project-away str`,
      ),
      [{ 'referer url': 'https://h.com/r?d=/?h=1', 'advertiser id': '24fefbca-cf27-4d62-a623-249c2ad30c73' }],
    );
  });

  it('over the data: ratio=… in the messages', async () => {
    const r = await run(
      'Logs | parse-kv message as (ratio:real, GET:string) with (pair_delimiter=" ", kv_delimiter="=") | summarize n = countif(isnotnull(ratio)), s = sum(ratio), g = countif(GET != "")',
    );
    const withRatio = LOGS.filter((l) => /(^| )ratio=/.test(l.message));
    const row = r.results[0] as Record<string, unknown>;
    assert.equal(row.n, withRatio.length);
    assert.equal(row.g, 0);
    approx(row.s, withRatio.length * 0.93, 1e-12);
  });

  it('parse kind=regex flags= applies RE2 flags to the whole pattern', async () => {
    assert.deepEqual(await rows('print s = "Key=VALUE x" | parse kind=regex flags=i s with "key=" v:string " " * | project v'), [
      { v: 'VALUE' },
    ]);
    assert.deepEqual(await rows('print s = "Key=VALUE x" | parse kind=regex s with "key=" v:string " " * | project v'), [
      { v: '' },
    ]);
    assert.deepEqual(await rows('print s = "a1b22b" | parse kind=regex flags=U s with "a" v:string "b" * | project v'), [
      { v: '1b22' },
    ]);
  });

  it('refuses bad options by name', async () => {
    await refused(
      'print s="a=1" | parse-kv s as (a:long) with (pair_delimiter=" ")',
      /needs both pair_delimiter and kv_delimiter/,
    );
    await refused('print s="a=1" | parse-kv s as (a:long) with (regex="(a)")', /exactly two capture groups/);
    await refused('print s="a=1" | parse-kv s as (a:long) with (quote="abc")', /quote is one or two characters/);
    await refused('print s="a=1" | parse-kv s as (a:long) with (foo="x")', /Expected/);
    await refused('print s="a" | parse s with flags=i "a" v:string', /./);
    await refused('print s="a" | parse kind=regex flags=x s with "a" v:string', /flags=x is not supported/);
  });

  it('property: random pairs written as text read back as written', async function () {
    this.timeout(120_000);
    const word = fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/);
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(word, fc.oneof(word, fc.integer({ min: -9999, max: 9999 }).map(String))), {
          minLength: 1,
          maxLength: 5,
          selector: ([k]) => k,
        }),
        async (pairs) => {
          const text = pairs.map(([k, v]) => `${k}=${v}`).join(';');
          const cols = pairs.map(([k]) => `['${k}']:string`).join(', ');
          const out = await rows(
            `print src_ = "${text}" | parse-kv src_ as (${cols}) with (pair_delimiter=";", kv_delimiter="=") | project-away src_`,
          );
          assert.deepEqual(out, [Object.fromEntries(pairs)]);
        },
      ),
      { numRuns: 25 },
    );
  });
});
