import assert from 'node:assert/strict';
import { DuckDBInstance } from '@duckdb/node-api';
import { DATA_TYPES, INFLOW_LIMITS, widen } from '@strata/common';
import { convertSql } from '../src/storage/column-sql.js';
import { planEvolution } from '../src/storage/schema-evolution.js';

describe('column types and schema evolution', () => {
  it('widens Int64 and Float64 to Float64 and every other conflict to String, never narrowing', () => {
    assert.equal(widen('Int64', 'Float64'), 'Float64');
    assert.equal(widen('Float64', 'Int64'), 'Float64');
    assert.equal(widen('Float64', 'String'), 'String');
    assert.equal(widen('Int64', 'Boolean'), 'String');
    assert.equal(widen('DateTime', 'String'), 'String');
    assert.equal(widen('Dynamic', 'Int64'), 'String');
    for (const a of DATA_TYPES) {
      assert.equal(widen(a, a), a);
      assert.equal(widen(a, 'String'), 'String');
      for (const b of DATA_TYPES) assert.equal(widen(a, b), widen(b, a));
    }
  });

  it('converts values of each type to wider types without losing them', async () => {
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const one = async (expr: string) => Object.values((await c.runAndReadAll(`SELECT ${expr} AS v`)).getRowObjectsJson()[0]!)[0];
    assert.equal(await one(convertSql('42::BIGINT', 'Int64', 'Float64')), 42);
    assert.equal(await one(convertSql('42::BIGINT', 'Int64', 'String')), '42');
    assert.equal(await one(convertSql('0.1::DOUBLE', 'Float64', 'String')), '0.1');
    assert.equal(await one(convertSql('7::DOUBLE', 'Float64', 'String')), '7');
    assert.equal(await one(convertSql('-2.5e20::DOUBLE', 'Float64', 'String')), '-2.5e+20');
    assert.equal(await one(convertSql('NULL::DOUBLE', 'Float64', 'String')), null);
    assert.equal(await one(convertSql('true', 'Boolean', 'String')), 'true');
    assert.equal(await one(convertSql(`'{"a":[1,2]}'::JSON`, 'Dynamic', 'String')), '{"a":[1,2]}');
    assert.equal(
      await one(convertSql('make_timestamp(1700000000123456::BIGINT)', 'DateTime', 'String')),
      '2023-11-14T22:13:20.123456Z',
    );
    c.closeSync();
    db.closeSync();
  });

  it('plans new columns after the stamped ones, widenings, and case-insensitive matches', () => {
    const first = planEvolution('Logs', undefined, [
      { name: 'Host', type: 'String' },
      { name: 'n', type: 'Int64' },
    ]);
    assert.deepEqual(
      first.columns.map((c) => c.name),
      [
        'timestamp',
        '__INFLOW_ID',
        '__INFLOW_TIMESTAMP',
        '__INFLOW_HOST',
        '__INFLOW_SOURCE_ADDRESS',
        '__INFLOW_AGENT',
        'Host',
        'n',
      ],
    );
    const second = planEvolution('Logs', first.columns, [
      { name: 'host', type: 'String' },
      { name: 'n', type: 'Float64' },
      { name: 'extra', type: 'Dynamic' },
    ]);
    assert.deepEqual(second.changes, [
      { kind: 'widen', name: 'n', from: 'Int64', to: 'Float64' },
      { kind: 'add', column: { name: 'extra', type: 'Dynamic' } },
    ]);
    assert.deepEqual(second.mappings[0], { batchName: 'host', batchType: 'String', tableName: 'Host', tableType: 'String' });
    const third = planEvolution('Logs', second.columns, [{ name: 'n', type: 'Boolean' }]);
    assert.deepEqual(third.changes, [{ kind: 'widen', name: 'n', from: 'Float64', to: 'String' }]);
    // Narrower values go into the wider column; nothing narrows.
    const fourth = planEvolution('Logs', third.columns, [{ name: 'n', type: 'Int64' }]);
    assert.deepEqual(fourth.changes, []);
    assert.equal(fourth.mappings[0]!.tableType, 'String');
  });

  it('refuses reserved, invalid and duplicate names and too many columns', () => {
    assert.throws(() => planEvolution('L', undefined, [{ name: 'Timestamp', type: 'String' }]), /reserved/);
    assert.throws(() => planEvolution('L', undefined, [{ name: '__inflow_x', type: 'String' }]), /reserved/);
    assert.throws(() => planEvolution('L', undefined, [{ name: 'a b', type: 'String' }]), /invalid field name/);
    assert.throws(
      () =>
        planEvolution('L', undefined, [
          { name: 'a', type: 'String' },
          { name: 'A', type: 'Int64' },
        ]),
      /occurs twice/,
    );
    const many = Array.from({ length: INFLOW_LIMITS.maxColumnsPerSchema }, (_, i) => ({ name: `f${i}`, type: 'Int64' as const }));
    assert.throws(() => planEvolution('L', undefined, many), /the limit is 1000/);
  });
});
