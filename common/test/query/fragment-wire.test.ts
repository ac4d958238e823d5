import assert from 'node:assert/strict';
import { WireType as ProtoWireType, ValueType } from '@strata/proto/query/v1/query';
import fc from 'fast-check';
import { describe, it } from 'mocha';
import { WIRE_TYPES } from '../../src/query/column-batch.js';
import type { FragmentStatement, ParamValue } from '../../src/query/fragment-exec.js';
import {
  decodeFragmentStatement,
  decodeFragmentTarget,
  encodeFragmentRequest,
  valueTypeFromProto,
  valueTypeToProto,
} from '../../src/query/fragment-wire.js';
import type { QueryValueType } from '../../src/query/value-types.js';

const VALUE_TYPES: QueryValueType[] = ['string', 'long', 'real', 'bool', 'datetime', 'timespan', 'guid', 'dynamic'];

const statement: FragmentStatement = {
  sql: 'WITH "s0" AS (SELECT "host" AS "c0" FROM "__strata_source__" WHERE "n" > $1) SELECT "c0" FROM "s0" LIMIT $2',
  params: [
    { type: 'VARCHAR', value: "it's ünïcødé" },
    { type: 'VARCHAR', value: '' },
    { type: 'BIGINT', value: -(2n ** 63n) },
    { type: 'BIGINT', value: 2n ** 63n - 1n },
    { type: 'DOUBLE', value: 0.1 },
    { type: 'DOUBLE', value: Number.NEGATIVE_INFINITY },
    { type: 'BOOLEAN', value: true },
    { type: 'BOOLEAN', value: false },
    { type: 'TIMESTAMP', value: 1_700_000_000_123_456n },
    ...WIRE_TYPES.map((type): ParamValue => ({ type, value: null })),
  ],
  sourceColumns: VALUE_TYPES.map((type, i) => ({ name: `col ${i}`, type })),
  columns: WIRE_TYPES.map((type, i) => ({ id: `c${i}`, type })),
  maxRows: 100_001n,
};

describe('query fragment wire format', () => {
  it('round-trips a statement with every parameter, value and wire type, nulls and a row bound', () => {
    const req = encodeFragmentRequest({ accountId: 'a1', schema: 'web.logs', fromMs: -5, toMs: 1_700_000_000_001 }, statement);
    assert.deepEqual(decodeFragmentStatement(req), statement);
    assert.deepEqual(decodeFragmentTarget(req), { accountId: 'a1', schema: 'web.logs', fromMs: -5, toMs: 1_700_000_000_001 });
  });

  it('round-trips exact storage-applied time bounds and a top-N, and refuses a top-N key outside the output', () => {
    const topN = { keys: [{ column: 1, descending: true, nullsFirst: false }], limit: 10n };
    const target = {
      accountId: 'a1',
      schema: 's',
      fromMs: 1,
      toMs: 3,
      fromUs: 1_700_000_000_000_001,
      toUs: 1_700_000_000_002_000,
    };
    const req = encodeFragmentRequest(target, { ...statement, branchTopN: topN });
    assert.deepEqual(decodeFragmentTarget(req), target);
    assert.deepEqual(decodeFragmentStatement(req).branchTopN, topN);
    // The source column of the first key (decision 0038), when known.
    const sourced = { ...topN, source: 'latencyMs' };
    assert.deepEqual(
      decodeFragmentStatement(encodeFragmentRequest(target, { ...statement, branchTopN: sourced })).branchTopN,
      sourced,
    );
    for (const bad of [
      { keys: [], limit: 10, sourceColumn: '' },
      { keys: [{ column: statement.columns.length, descending: false, nullsFirst: false }], limit: 10, sourceColumn: '' },
      { keys: [{ column: -1, descending: false, nullsFirst: false }], limit: 10, sourceColumn: '' },
      { keys: [{ column: 0, descending: false, nullsFirst: false }], limit: -1, sourceColumn: '' },
    ])
      assert.throws(() => decodeFragmentStatement({ ...req, branchTopN: bad }), /top-N/);
  });

  it('round-trips the limit of a take without an order, and refuses a negative one', () => {
    const req = encodeFragmentRequest({ accountId: 'a1', schema: 's' }, { ...statement, branchLimit: 100n });
    assert.equal(decodeFragmentStatement(req).branchLimit, 100n);
    assert.equal(
      decodeFragmentStatement(encodeFragmentRequest({ accountId: 'a1', schema: 's' }, statement)).branchLimit,
      undefined,
    );
    assert.throws(() => decodeFragmentStatement({ ...req, branchLimit: -1 }), /branch limit/);
  });

  it('leaves out an open time range and a missing row bound', () => {
    const { maxRows: _, ...unbounded } = statement;
    const req = encodeFragmentRequest({ accountId: 'a1', schema: 's' }, unbounded);
    assert.equal(req.fromMs, undefined);
    assert.equal(req.toMs, undefined);
    assert.equal(req.maxRows, undefined);
    assert.deepEqual(decodeFragmentTarget(req), { accountId: 'a1', schema: 's' });
    assert.deepEqual(decodeFragmentStatement(req), unbounded);
  });

  it('round-trips random parameters (property)', () => {
    const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
    const param: fc.Arbitrary<ParamValue> = fc.oneof(
      fc.record({ type: fc.constant('VARCHAR' as const), value: fc.option(fc.string(), { nil: null }) }),
      fc.record({ type: fc.constant('BIGINT' as const), value: fc.option(int64, { nil: null }) }),
      fc.record({ type: fc.constant('TIMESTAMP' as const), value: fc.option(int64, { nil: null }) }),
      // -0 travels as "0": SQL compares it equal to 0, so the wire format does not keep the sign.
      fc.record({
        type: fc.constant('DOUBLE' as const),
        value: fc.option(
          fc.double().map((d) => d || 0),
          { nil: null },
        ),
      }),
      fc.record({ type: fc.constant('BOOLEAN' as const), value: fc.option(fc.boolean(), { nil: null }) }),
    );
    fc.assert(
      fc.property(fc.array(param, { maxLength: 20 }), (params) => {
        const s: FragmentStatement = { sql: 'WITH x AS (SELECT 1) SELECT 1', params, sourceColumns: [], columns: [] };
        // fc.record builds null-prototype objects; the decoder builds plain ones.
        assert.deepEqual(
          decodeFragmentStatement(encodeFragmentRequest({ accountId: 'a', schema: 's' }, s)).params,
          params.map((p) => ({ ...p })),
        );
      }),
      { numRuns: 200 },
    );
  });

  it('maps every value type to its own proto code and back', () => {
    const codes = VALUE_TYPES.map(valueTypeToProto);
    assert.equal(new Set(codes).size, VALUE_TYPES.length);
    assert.deepEqual(codes.map(valueTypeFromProto), VALUE_TYPES);
    assert.equal(valueTypeFromProto(ValueType.VALUE_TYPE_UNSPECIFIED), undefined);
  });

  it('refuses requests with unknown types or a non-integer integer parameter as invalid', () => {
    const req = encodeFragmentRequest({ accountId: 'a', schema: 's' }, statement);
    const invalid = (message: RegExp) => (err: unknown) =>
      (err as { kind?: string }).kind === 'invalid' && message.test((err as Error).message);
    assert.throws(
      () => decodeFragmentStatement({ ...req, columns: [{ id: 'c0', type: ProtoWireType.WIRE_TYPE_UNSPECIFIED }] }),
      invalid(/unknown wire type/),
    );
    assert.throws(
      () => decodeFragmentStatement({ ...req, sourceColumns: [{ name: 'x', type: ValueType.VALUE_TYPE_UNSPECIFIED }] }),
      invalid(/'x' has an unknown type/),
    );
    assert.throws(
      () => decodeFragmentStatement({ ...req, params: [{ type: ProtoWireType.WIRE_TYPE_BIGINT, value: '1e3', isNull: false }] }),
      invalid(/not an integer/),
    );
  });
});
