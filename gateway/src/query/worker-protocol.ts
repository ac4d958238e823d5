/**
 * The gateway's half of strata.query.v1: fragments as ExecuteFragment requests, response batches
 * as column batches, and the workers' column types as the engine's types.
 */
import { type ColumnBatch, decodeBatch, type WireType } from '@strata/common';
import {
  type ExecuteFragmentRequest,
  type ExecuteFragmentResponse,
  WireType as ProtoWireType,
  ValueType,
} from '@strata/proto/query/v1/query';
import type { SingleWorkerSpec } from './plan/planner.js';
import type { ParamValue } from './sql/sql.js';
import type { KqlType } from './types.js';

const PROTO_WIRE: Record<WireType, ProtoWireType> = {
  VARCHAR: ProtoWireType.WIRE_TYPE_VARCHAR,
  BIGINT: ProtoWireType.WIRE_TYPE_BIGINT,
  DOUBLE: ProtoWireType.WIRE_TYPE_DOUBLE,
  BOOLEAN: ProtoWireType.WIRE_TYPE_BOOLEAN,
  TIMESTAMP: ProtoWireType.WIRE_TYPE_TIMESTAMP,
};

const PROTO_VALUE: Record<KqlType, ValueType> = {
  string: ValueType.VALUE_TYPE_STRING,
  long: ValueType.VALUE_TYPE_LONG,
  real: ValueType.VALUE_TYPE_REAL,
  bool: ValueType.VALUE_TYPE_BOOL,
  datetime: ValueType.VALUE_TYPE_DATETIME,
  timespan: ValueType.VALUE_TYPE_TIMESPAN,
  guid: ValueType.VALUE_TYPE_GUID,
  dynamic: ValueType.VALUE_TYPE_DYNAMIC,
};

const KQL_OF_PROTO: Partial<Record<ValueType, KqlType>> = Object.fromEntries(
  Object.entries(PROTO_VALUE).map(([k, v]) => [v, k as KqlType]),
) as Partial<Record<ValueType, KqlType>>;

export function kqlTypeOfProto(t: ValueType): KqlType | undefined {
  return KQL_OF_PROTO[t];
}

function paramText(p: ParamValue): string {
  if (p.value === null) return '';
  if (p.type === 'BOOLEAN') return p.value ? 'true' : 'false';
  return String(p.value);
}

/**
 * Inclusive µs bounds become the storage's milliseconds, from inclusive and to exclusive, widened
 * so no row inside the bounds is left out.
 */
export function scanRangeMs(timeRange: SingleWorkerSpec['timeRange']): { fromMs?: number; toMs?: number } {
  const out: { fromMs?: number; toMs?: number } = {};
  const floorDiv = (a: bigint, b: bigint) => (a >= 0n ? a / b : -((-a + b - 1n) / b));
  if (timeRange.fromUs !== undefined) out.fromMs = Number(floorDiv(timeRange.fromUs, 1000n));
  if (timeRange.toUs !== undefined) out.toMs = Number(floorDiv(timeRange.toUs, 1000n)) + 1;
  return out;
}

export function fragmentRequest(accountId: string, fragment: SingleWorkerSpec): ExecuteFragmentRequest {
  return {
    accountId,
    schema: fragment.table,
    ...scanRangeMs(fragment.timeRange),
    sql: fragment.sql,
    params: fragment.params.map((p) => ({ type: PROTO_WIRE[p.type], value: paramText(p), isNull: p.value === null })),
    sourceColumns: fragment.sourceColumns.map((c) => ({ name: c.name, type: PROTO_VALUE[c.type] })),
    columns: fragment.columns.map((c) => ({ id: c.id, type: PROTO_WIRE[c.type] })),
    ...(fragment.limit !== undefined ? { maxRows: Number(fragment.limit) } : {}),
  };
}

export function responseBatch(message: ExecuteFragmentResponse, fragment: SingleWorkerSpec): ColumnBatch {
  return decodeBatch(
    message,
    fragment.columns.map((c) => c.type),
  );
}
