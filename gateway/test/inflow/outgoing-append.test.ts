import assert from 'node:assert/strict';
import { AppendRequest, ColumnType } from '@strata/proto/ingest/v1/ingest';
import { outgoingAppend } from '../../src/inflow/outgoing-append.js';

/**
 * What the inflow routes hand the worker router (outgoing-append.ts): an unkeyed batch as its
 * wire encoding, made once, and the names the schema catalog needs; a keyed one as its request,
 * encoded per attempt with the key view's revision.
 */
describe('outgoing inflow batches', () => {
  const request = (idempotencyKey: string): AppendRequest => ({
    accountId: '00000000-0000-0000-0000-000000000000',
    parts: [
      {
        schema: 'App.Logs',
        columns: [
          { name: 'message', type: ColumnType.COLUMN_TYPE_STRING },
          { name: 'n', type: ColumnType.COLUMN_TYPE_INT64 },
        ],
        rows: Buffer.from('{"@ts":1,"@id":"00000000-0000-4000-8000-000000000001","message":"é \\"x\\"","n":1}\n'),
        rowCount: 1,
      },
      {
        schema: 'App.Other',
        columns: [{ name: 'ok', type: ColumnType.COLUMN_TYPE_BOOLEAN }],
        rows: Buffer.from('{}'),
        rowCount: 1,
      },
    ],
    inflowTimestampUs: 1_764_000_000_000_000,
    inflowHost: 'gateway-1',
    sourceAddress: '10.0.0.7',
    agent: 'device-1',
    idempotencyKey,
    contentHash: idempotencyKey ? 'ab'.repeat(32) : '',
    keyViewRevision: 0,
  });

  it('encodes an unkeyed batch once: the bytes decode to the very request', () => {
    const sent = request('');
    const out = outgoingAppend(sent);
    assert.equal(out.keyed, false);
    if (out.keyed) return;
    assert.ok(Buffer.isBuffer(out.encoded));
    assert.deepEqual(out.encoded, Buffer.from(AppendRequest.encode(sent).finish()));
    assert.deepEqual(AppendRequest.decode(out.encoded), sent);
  });

  it('keeps a keyed batch as its request, for a revision per attempt', () => {
    const sent = request('key-1');
    const out = outgoingAppend(sent);
    assert.equal(out.keyed, true);
    assert.equal(out.keyed && out.request, sent);
  });

  it('names the written schemas and columns without the rows, for the schema catalog', () => {
    for (const key of ['', 'key-2']) {
      assert.deepEqual(outgoingAppend(request(key)).written, [
        { schema: 'App.Logs', columns: [{ name: 'message' }, { name: 'n' }] },
        { schema: 'App.Other', columns: [{ name: 'ok' }] },
      ]);
    }
  });
});
