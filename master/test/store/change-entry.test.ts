import assert from 'node:assert/strict';
import { decodeChangeEntry, encodeChangeEntry } from '../../src/store/replication/change-entry.js';

describe('database log entries', () => {
  it('keep every parameter with its JS type (DuckDB binds by it), small entries as JSON and large ones gzipped', () => {
    const statements = [
      { sql: 'INSERT INTO t VALUES ($1, $2, $3, $4, $5, $6)', params: ['text', 42, 1.5, true, null, 9007199254740993n] },
      { sql: 'UPDATE t SET v = $1', params: [Number.NaN] },
    ];
    const small = encodeChangeEntry({ term: 7, statements });
    assert.equal(small[0], 'j'.charCodeAt(0));
    const back = decodeChangeEntry(small);
    assert.equal(back.term, 7);
    assert.deepEqual(back.statements[0], statements[0]);
    assert.equal(typeof back.statements[0]!.params[5], 'bigint');
    assert.ok(Number.isNaN(back.statements[1]!.params[0]));

    const large = {
      term: 1,
      statements: Array.from({ length: 500 }, (_, i) => ({
        sql: `INSERT INTO t VALUES ($1)`,
        params: [`row ${i} ${'x'.repeat(100)}`],
      })),
    };
    const packed = encodeChangeEntry(large);
    assert.equal(packed[0], 'z'.charCodeAt(0));
    assert.ok(packed.length < 20_000, `gzipped to ${packed.length} bytes`);
    assert.deepEqual(decodeChangeEntry(packed), large);
  });

  it('refuses an entry of an unknown format instead of guessing', () => {
    assert.throws(() => decodeChangeEntry(Buffer.from('?{}')), /unknown format/);
  });
});
