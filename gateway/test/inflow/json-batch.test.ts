import assert from 'node:assert/strict';
import { buildJsonBatch } from '../../src/inflow/json-batch.js';
import { refusal } from './refusal.js';

const all = { allowSchema: () => true };

function lines(part: { rows: Buffer }) {
  return part.rows
    .toString()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('JSON inflow batches', () => {
  it('binds schema/timestamp/data in any case and stamps each row with its µs timestamp and a UUID', () => {
    const built = buildJsonBatch(
      [
        { Schema: 'App.Logs', TimeStamp: '2024-01-01T00:00:00+00:00', Data: { Host: 'a', n: 1 } },
        { schema: 'App.Logs', timestamp: '2024-01-01T00:00:01.5Z', data: { Host: 'b', n: 2.5 } },
        { SCHEMA: 'Other', TIMESTAMP: '2024-01-01T00:00:02Z', DATA: {} },
        { schema: 'Other', timestamp: '2024-01-01T00:00:02Z', extra: 'ignored' },
      ],
      all,
    );
    assert.equal(built.accepted, 4);
    assert.equal(built.dropped, 0);
    const [logs, other] = built.parts;
    assert.deepEqual(logs!.columns, [
      { name: 'Host', type: 'String' },
      { name: 'n', type: 'Float64' },
    ]);
    const rows = lines(logs!);
    assert.equal(rows[0]!['@ts'], Date.UTC(2024, 0, 1) * 1000);
    assert.equal(rows[1]!['@ts'], Date.UTC(2024, 0, 1) * 1000 + 1_500_000);
    assert.match(String(rows[0]!['@id']), /^[0-9a-f-]{36}$/);
    assert.notEqual(rows[0]!['@id'], rows[1]!['@id']);
    assert.deepEqual([rows[0]!.Host, rows[0]!.n, rows[1]!.n], ['a', 1, 2.5]);
    assert.equal(other!.rowCount, 2);
    assert.deepEqual(other!.columns, []);
    assert.deepEqual(Object.keys(lines(other!)[0]!), ['@ts', '@id']);
  });

  it('infers types per field and widens within the batch, sending values in their batch type', () => {
    const built = buildJsonBatch(
      [
        {
          schema: 'T',
          timestamp: '2024-01-01T00:00:00Z',
          data: { i: 1, f: 1.5, b: true, d: '2024-05-06T07:08:09.25+02:00', o: { a: [1] }, s: 'x', mix: 1, nul: null },
        },
        {
          schema: 'T',
          timestamp: '2024-01-01T00:00:00Z',
          data: { i: 2, f: 2, b: false, d: '2024-05-06T05:08:10Z', o: [1, 2], s: 'y', mix: true },
        },
        { schema: 'T', timestamp: '2024-01-01T00:00:00Z', data: { mix: { k: 1 } } },
      ],
      all,
    );
    const part = built.parts[0]!;
    assert.deepEqual(part.columns, [
      { name: 'i', type: 'Int64' },
      { name: 'f', type: 'Float64' },
      { name: 'b', type: 'Boolean' },
      { name: 'd', type: 'DateTime' },
      { name: 'o', type: 'Dynamic' },
      { name: 's', type: 'String' },
      { name: 'mix', type: 'String' },
    ]);
    const rows = lines(part);
    assert.equal(rows[0]!.d, Date.UTC(2024, 4, 6, 5, 8, 9) * 1000 + 250_000);
    assert.deepEqual(rows[0]!.o, { a: [1] });
    assert.deepEqual(
      rows.map((r) => r.mix),
      ['1', 'true', '{"k":1}'],
    );
    assert.equal('nul' in rows[0]!, false);
  });

  it('maps other spellings of a field to the first one and refuses two spellings in one entry', () => {
    const built = buildJsonBatch(
      [
        { schema: 'C', timestamp: '2024-01-01T00:00:00Z', data: { Host: 'a' } },
        { schema: 'C', timestamp: '2024-01-01T00:00:00Z', data: { host: 'b', HOST2: 1 } },
      ],
      all,
    );
    assert.deepEqual(
      built.parts[0]!.columns.map((c) => c.name),
      ['Host', 'HOST2'],
    );
    assert.deepEqual(
      lines(built.parts[0]!).map((r) => r.Host),
      ['a', 'b'],
    );
    const err = refusal(() =>
      buildJsonBatch([{ schema: 'C', timestamp: '2024-01-01T00:00:00Z', data: { host: 'a', Host: 'b' } }], all),
    );
    assert.match(err.details[0]!.message!, /entry 0: fields 'host' and 'Host' differ only in case/);
  });

  it('refuses a batch with malformed entries whole, naming each index and reason', () => {
    const err = refusal(() =>
      buildJsonBatch(
        [
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: { a: 1 } },
          'not an object',
          { schema: 'bad name', timestamp: '2024-01-01T00:00:00Z', data: {} },
          { schema: 'ok', timestamp: 'yesterday', data: {} },
          { schema: 'ok', data: {} },
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: [1] },
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: { 'bad key': 1 } },
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: { __INFLOW_HOST: 'x' } },
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: { timestamp: 'x' } },
          { schema: 'ok', timestamp: '2024-01-01T00:00:00Z', data: { s: 'x'.repeat(1_048_577) } },
          { timestamp: '2024-01-01T00:00:00Z', data: {} },
        ],
        all,
      ),
    );
    assert.equal(err.kind, 'invalid');
    assert.match(err.message, /^The batch has 10 malformed entries; nothing was stored\. First: entry 1:/);
    assert.deepEqual(
      err.details.map((d) => d.message),
      [
        'entry 1: an entry must be an object with schema, timestamp and data',
        "entry 2: schema 'bad name' must be 1–256 letters, digits, '.', '_' or '-'",
        "entry 3: timestamp 'yesterday' is not an ISO 8601 date and time",
        'entry 4: timestamp is missing or not a string',
        'entry 5: data must be an object',
        "entry 6: field name 'bad key' must be 1–256 letters, digits, '.', '_' or '-'",
        "entry 7: field name '__INFLOW_HOST' is reserved for a stamped column",
        "entry 8: field name 'timestamp' is reserved for a stamped column",
        "entry 9: the value of field 's' is longer than 1048576 characters",
        'entry 10: schema is missing or not a string',
      ],
    );
  });

  it('drops entries whose schema is outside the scope, and refuses a non-array or too many entries', () => {
    const built = buildJsonBatch(
      [
        { schema: 'logs.app', timestamp: '2024-01-01T00:00:00Z', data: {} },
        { schema: 'secret', timestamp: '2024-01-01T00:00:00Z', data: {} },
      ],
      { allowSchema: (s) => s.startsWith('logs.') },
    );
    assert.deepEqual([built.accepted, built.dropped, built.parts.length], [1, 1, 1]);
    assert.match(refusal(() => buildJsonBatch({ schema: 'x' }, all)).message, /must be a JSON array/);
    assert.equal(refusal(() => buildJsonBatch(new Array(100_001).fill({}), all)).kind, 'payload_too_large');
    assert.deepEqual(buildJsonBatch([], all), { parts: [], accepted: 0, dropped: 0 });
  });

  it('keeps a field named __proto__ as an ordinary field', () => {
    const body = JSON.parse(
      '[{"schema":"P","timestamp":"2024-01-01T00:00:00Z","data":{"__proto__":5,"x":"2024-01-01T00:00:00Z"}}]',
    );
    const built = buildJsonBatch(body, all);
    assert.deepEqual(
      built.parts[0]!.columns.map((c) => c.name),
      ['__proto__', 'x'],
    );
    assert.equal(Object.getOwnPropertyDescriptor(lines(built.parts[0]!)[0]!, '__proto__')?.value, 5);
  });
});
