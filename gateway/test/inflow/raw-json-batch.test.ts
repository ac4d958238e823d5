import assert from 'node:assert/strict';
import { INFLOW_LIMITS } from '@strata/common';
import { type BuiltBatch, buildJsonBatch, type JsonBatchOptions } from '../../src/inflow/json-batch.js';
import { buildRawJsonBatch } from '../../src/inflow/raw-json-batch.js';
import { refusal } from './refusal.js';

/**
 * The fast path (bytes as sent) against the general path (JSON.parse + buildJsonBatch) on the same
 * body: where the fast path builds a batch, the worker must receive the same rows, columns and
 * counts; everywhere else it must give up, so the general path answers (refusals included).
 */
const all: JsonBatchOptions = { allowSchema: () => true };
const TS = '2024-01-01T00:00:00Z';

/** Every row line of a part, parsed, with the id checked and left out (ids are random per part). */
function rowsOf(part: { rows: Buffer; rowCount: number }): Record<string, unknown>[] {
  const lines = part.rows.toString('utf8').split('\n');
  assert.equal(lines.length, part.rowCount, 'one line per row');
  const ids = new Set<string>();
  return lines.map((line) => {
    const row = JSON.parse(line) as Record<string, unknown>;
    assert.match(String(row['@id']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(!ids.has(row['@id'] as string), 'ids are unique');
    ids.add(row['@id'] as string);
    delete row['@id'];
    return row;
  });
}

/** What the worker gets from a batch, ids aside. */
function content(batch: BuiltBatch) {
  return {
    accepted: batch.accepted,
    dropped: batch.dropped,
    parts: batch.parts.map((p) => ({ schema: p.schema, columns: p.columns, rowCount: p.rowCount, rows: rowsOf(p) })),
  };
}

function general(body: string | Buffer, options = all): BuiltBatch {
  return buildJsonBatch(JSON.parse(Buffer.from(body).toString('utf8')), options);
}

/** The fast path takes `body` and builds what the general path builds. */
function takes(body: string | Buffer, options = all): BuiltBatch {
  const raw = buildRawJsonBatch(Buffer.from(body), options);
  assert.ok(raw, `the fast path should take ${String(body).slice(0, 200)}`);
  assert.deepEqual(content(raw), content(general(body, options)));
  return raw;
}

/** The fast path gives up on `body` (the general path decides). */
function givesUp(body: string | Buffer, options = all): void {
  assert.equal(buildRawJsonBatch(Buffer.from(body), options), undefined, `should give up on ${String(body).slice(0, 200)}`);
}

const entries = (...data: unknown[]) => JSON.stringify(data.map((d) => ({ schema: 'T', timestamp: TS, data: d })));

describe('JSON inflow from the bytes as sent (fast path)', () => {
  it('takes every scalar type and null, keeping each value as the general path sends it', () => {
    const batch = takes(
      entries(
        { s: 'text', i: 42, neg: -7, f: 2.5, small: 1.5e-7, big: 123456789012345, safe: 9007199254740991, b: true, n: null },
        { s: '', i: 0, f: -0.25, b: false, n: null, only: null },
      ),
    );
    assert.deepEqual(batch.parts[0]!.columns, [
      { name: 's', type: 'String' },
      { name: 'i', type: 'Int64' },
      { name: 'neg', type: 'Int64' },
      { name: 'f', type: 'Float64' },
      { name: 'small', type: 'Float64' },
      { name: 'big', type: 'Int64' },
      { name: 'safe', type: 'Int64' },
      { name: 'b', type: 'Boolean' },
    ]);
    const [first] = rowsOf(batch.parts[0]!);
    assert.equal(first!['@ts'], Date.UTC(2024, 0, 1) * 1000);
    assert.equal(first!.safe, 9007199254740991);
  });

  it('takes unicode as UTF-8 and as escapes, and every JSON escape', () => {
    const batch = takes(
      entries(
        { s: 'héllo wörld ✓ 日本語 😀', k: 'snowman ☃' },
        { s: '\u00e9 \\u00e9 "quoted" back\\slash \n new\tline \u0000 \ud83d\ude00 \u2028', k: '\ud800' },
      ).replace('\\\\u00e9', '\\u00e9'),
    );
    const rows = rowsOf(batch.parts[0]!);
    assert.equal(rows[0]!.s, 'héllo wörld ✓ 日本語 😀');
    assert.equal(rows[1]!.s, 'é é "quoted" back\\slash \n new\tline \u0000 😀 \u2028');
    assert.equal(rows[1]!.k, '\ud800');
    // An escaped solidus and escaped letters in values, written by hand.
    takes(`[{"schema":"T","timestamp":"${TS}","data":{"u":"a\\/b \\u0041\\u00DF","v":"\\b\\f\\r"}}]`);
  });

  it('takes pretty-printed bodies: line breaks between tokens do not split a row', () => {
    const body = JSON.stringify(
      [
        { schema: 'T', timestamp: TS, data: { a: 1, b: 'x' } },
        { schema: 'T', timestamp: TS, data: {} },
      ],
      null,
      2,
    ).replace(/\n/g, '\r\n');
    const batch = takes(body);
    assert.equal(batch.parts[0]!.rows.toString().split('\n').length, 2);
    takes(
      `[ {"schema":"T","timestamp":"${TS}","data":{ } } , {"schema":"T","timestamp":"${TS}","data":null}, {"schema":"T","timestamp":"${TS}"} ]`,
    );
  });

  it('takes a string as long as the value limit, and gives a longer one to the general path', () => {
    const atLimit = 'x'.repeat(INFLOW_LIMITS.maxValueLength);
    takes(entries({ big: atLimit, n: 1 }));
    // More bytes than the limit but fewer characters (2 bytes each): the general path counts and takes it.
    const wide = 'é'.repeat(INFLOW_LIMITS.maxValueLength / 2 + 1);
    givesUp(entries({ big: wide }));
    assert.equal(general(entries({ big: wide })).accepted, 1);
    // Longer than the limit in characters: refused by the general path with the spec's message.
    givesUp(entries({ big: `${atLimit}y` }));
    assert.match(
      refusal(() => general(entries({ big: `${atLimit}y` }))).message,
      /entry 0: the value of field 'big' is longer than 1048576 characters/,
    );
  });

  it('widens a field within the batch as the general path does (Int64 and Float64 → Float64)', () => {
    const batch = takes(entries({ v: 1 }, { v: 2.5 }, { v: null }, { w: 3 }));
    assert.deepEqual(batch.parts[0]!.columns, [
      { name: 'v', type: 'Float64' },
      { name: 'w', type: 'Int64' },
    ]);
  });

  it('takes mixed schemas in one batch, one part each in first-seen order, and drops out-of-scope schemas', () => {
    const body = JSON.stringify([
      { schema: 'B', timestamp: TS, data: { x: 1 } },
      { schema: 'A', timestamp: '2024-01-01T00:00:01.5Z', data: { y: 'a' } },
      { schema: 'Secret', timestamp: 'not checked for dropped entries', data: { z: 1 } },
      { schema: 'B', timestamp: '2024-01-01T00:00:02.123456Z', data: { x: 2, extra: true } },
    ]);
    const scoped = { allowSchema: (s: string) => s !== 'Secret' };
    const batch = takes(body, scoped);
    assert.deepEqual(
      batch.parts.map((p) => [p.schema, p.rowCount]),
      [
        ['B', 2],
        ['A', 1],
      ],
    );
    assert.equal(batch.dropped, 1);
    assert.equal(rowsOf(batch.parts[0]!)[1]!['@ts'], Date.UTC(2024, 0, 1) * 1000 + 2_123_456);
  });

  it('matches entry keys in any case, ignores other scalar keys, and parses every timestamp form', () => {
    takes(
      JSON.stringify([
        { SCHEMA: 'T', TimeStamp: '2024-02-29T23:59:59.999Z', Data: { a: 1 }, other: 'x', n: 5, t: true, z: null },
        { schema: 'T', timestamp: '2024-01-01T01:00:00+01:00', data: { a: 2 } },
        { schema: 'T', timestamp: '0099-12-31T00:00:00Z', data: { a: 3 } },
        { schema: 'T', timestamp: '2024-01-01 00:00:00,123456789', data: { a: 4 } },
        { schema: 'T', timestamp: '1969-12-31T23:59:59.5Z', data: { a: 5 } },
      ]),
    );
  });

  it('gives up on values the general path rewrites: nested dynamic, timestamps, mixed strings, number spellings', () => {
    givesUp(entries({ o: { a: [1, { b: null }] } }));
    givesUp(entries({ arr: [] }));
    givesUp(entries({ when: '2024-05-06T07:08:09Z' }));
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"when":"2024-05-06T07:08:09\\u005a"}}]`);
    givesUp(entries({ mix: 'a' }, { mix: 1 }));
    givesUp(entries({ mix: true }, { mix: 'b' }));
    for (const n of ['1.0', '1e3', '-0', '1.5E+2', '9007199254740993', '1e400']) {
      givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"n":${n}}}]`);
      general(`[{"schema":"T","timestamp":"${TS}","data":{"n":${n}}}]`); // and the general path takes it
    }
    // More digits than a double holds, not an integer: the same Float64 either way.
    takes(`[{"schema":"T","timestamp":"${TS}","data":{"n":0.10000000000000000001}}]`);
    // Each of these, in a batch that also holds plain rows, goes the general way as a whole.
    const nested = entries({ a: 1 }, { a: 2, o: { deep: true } });
    givesUp(nested);
    assert.deepEqual(general(nested).parts[0]!.columns, [
      { name: 'a', type: 'Int64' },
      { name: 'o', type: 'Dynamic' },
    ]);
  });

  it('gives up on keys JSON.parse would merge and on names that differ only in case', () => {
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"a":1,"a":"x"}}]`);
    givesUp(`[{"schema":"T","Schema":"U","timestamp":"${TS}","data":{}}]`);
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{},"DATA":{"a":1}}]`);
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"a\\u0062":1}}]`);
    givesUp(entries({ Host: 'a' }, { host: 'b' }));
    givesUp(`[{"schema":"T","timestamp":"${TS}","meta":{"x":1},"data":{}}]`);
  });

  it('gives up on every malformed body, so refusals and their messages stay the general path’s', () => {
    const bad = [
      '',
      '{}',
      '[',
      `[{"schema":"T","timestamp":"${TS}","data":{}}] x`,
      `[{"schema":"T","timestamp":"${TS}","data":{},}]`,
      `[{"schema":"T","timestamp":"${TS}","data":{"a":01}}]`,
      `[{"schema":"T","timestamp":"${TS}","data":{"a":"tab\there"}}]`,
      `[{"schema":"T","timestamp":"${TS}","data":{"a":"\\x"}}]`,
      `[{"schema":"T","timestamp":"${TS}","data":{"a":tru}}]`,
      `[{"schema":"T","timestamp":"${TS}","data":[]}]`,
      '[1]',
    ];
    for (const body of bad) givesUp(body);
    givesUp(
      Buffer.concat([Buffer.from(`[{"schema":"T","timestamp":"${TS}","data":{"a":"`), Buffer.from([0xff]), Buffer.from('"}}]')]),
    );
  });

  it('a bad entry in the middle of a batch: the general path refuses the batch naming that entry', () => {
    const body = JSON.stringify([
      { schema: 'T', timestamp: TS, data: { a: 1 } },
      { schema: 'T', timestamp: 'yesterday', data: { a: 2 } },
      { schema: 'T', timestamp: TS, data: { a: 3 } },
    ]);
    givesUp(body);
    const err = refusal(() => general(body));
    assert.equal(
      err.message,
      "The batch has 1 malformed entry; nothing was stored. First: entry 1: timestamp 'yesterday' is not an ISO 8601 date and time.",
    );
    givesUp(entries({ a: 1 }, { 'bad name': 1 }, { a: 2 }));
    givesUp(entries({ a: 1 }, { __inflow_id: 'x' }));
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"a":1}},{"schema":"no spaces","timestamp":"${TS}"}]`);
    givesUp(`[{"schema":"T","timestamp":"${TS}","data":{"a":1}},{"timestamp":"${TS}"}]`);
  });

  it('agrees with the general path on generated batches (seeded, bounded)', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const values = [
      () => Math.floor(random() * 1e6) - 5e5,
      () => Math.round(random() * 1e6) / 100,
      () => random() < 0.5,
      () => null,
      () => pick(['', 'plain', 'ünï', '"q"', 'a\\b', 'line\nbreak', '2024-01-01', 'x'.repeat(40)]),
      () => ({ nested: 1 }),
      () => '2024-01-01T00:00:00Z',
    ];
    const names = ['a', 'b', 'c', 'Level', 'level', 'msg.text', 'x_y-z'];
    let taken = 0;
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(random() * 6);
      const batch = [];
      for (let e = 0; e < n; e++) {
        const data: Record<string, unknown> = {};
        const fields = Math.floor(random() * 4);
        for (let f = 0; f < fields; f++) data[pick(names)] = pick(values.slice(0, round % 3 === 0 ? 7 : 5))();
        batch.push({ schema: pick(['S1', 'S2']), timestamp: TS, data });
      }
      const body = round % 2 === 0 ? JSON.stringify(batch) : JSON.stringify(batch, null, 1);
      const raw = buildRawJsonBatch(Buffer.from(body), all);
      if (raw === undefined) continue;
      taken++;
      assert.deepEqual(content(raw), content(general(body)), body);
    }
    assert.ok(taken > 100, `the fast path took ${taken} of 300 generated batches`);
  });
});
