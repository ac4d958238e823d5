/**
 * The query fragment's wire format (strata.query.v1 ExecuteFragmentRequest), both directions: the
 * gateway encodes a planned fragment, the worker decodes it into the statement it runs. Schema
 * listings use the same value type codes. Result rows travel as column batches
 * (column-batch.ts), which has its own encoder and decoder.
 *
 * Parameter values travel as text (`Param.value`): booleans as `true`/`false`, numbers and
 * integers (BIGINT, TIMESTAMP µs) in their decimal form, with `isNull` marking a null.
 */
import { type ExecuteFragmentRequest, WireType as ProtoWireType, ValueType } from '@strata/proto/query/v1/query';
import { StrataError } from '../errors.js';
import type { WireType } from './column-batch.js';
import type { BranchTopN, FragmentStatement, ParamValue } from './fragment-exec.js';
import { checkedTermHints, type TermHint } from './term-hints.js';
import type { QueryValueType } from './value-types.js';

const PROTO_WIRE: Record<WireType, ProtoWireType> = {
  VARCHAR: ProtoWireType.WIRE_TYPE_VARCHAR,
  BIGINT: ProtoWireType.WIRE_TYPE_BIGINT,
  DOUBLE: ProtoWireType.WIRE_TYPE_DOUBLE,
  BOOLEAN: ProtoWireType.WIRE_TYPE_BOOLEAN,
  TIMESTAMP: ProtoWireType.WIRE_TYPE_TIMESTAMP,
};

const WIRE_OF_PROTO = new Map<ProtoWireType, WireType>(Object.entries(PROTO_WIRE).map(([k, v]) => [v, k as WireType]));

const PROTO_VALUE: Record<QueryValueType, ValueType> = {
  string: ValueType.VALUE_TYPE_STRING,
  long: ValueType.VALUE_TYPE_LONG,
  real: ValueType.VALUE_TYPE_REAL,
  decimal: ValueType.VALUE_TYPE_DECIMAL,
  bool: ValueType.VALUE_TYPE_BOOL,
  datetime: ValueType.VALUE_TYPE_DATETIME,
  timespan: ValueType.VALUE_TYPE_TIMESPAN,
  guid: ValueType.VALUE_TYPE_GUID,
  dynamic: ValueType.VALUE_TYPE_DYNAMIC,
};

const VALUE_OF_PROTO = new Map<ValueType, QueryValueType>(Object.entries(PROTO_VALUE).map(([k, v]) => [v, k as QueryValueType]));

export function valueTypeToProto(type: QueryValueType): ValueType {
  return PROTO_VALUE[type];
}

/** undefined for UNSPECIFIED and codes this version does not know. */
export function valueTypeFromProto(type: ValueType): QueryValueType | undefined {
  return VALUE_OF_PROTO.get(type);
}

/** A request's wire type; an unknown code is the caller's error. */
export function wireTypeFromProto(type: ProtoWireType): WireType {
  const w = WIRE_OF_PROTO.get(type);
  if (!w) throw new StrataError('invalid', 'A fragment uses an unknown wire type.');
  return w;
}

function paramText(p: ParamValue): string {
  if (p.value === null) return '';
  if (p.type === 'BOOLEAN') return p.value ? 'true' : 'false';
  return String(p.value);
}

function paramValue(p: ExecuteFragmentRequest['params'][number]): ParamValue {
  const type = wireTypeFromProto(p.type);
  if (p.isNull) return { type, value: null };
  switch (type) {
    case 'VARCHAR':
      return { type, value: p.value };
    case 'BOOLEAN':
      return { type, value: p.value === 'true' };
    case 'DOUBLE':
      return { type, value: Number(p.value) };
    default:
      if (!/^-?\d+$/.test(p.value)) throw new StrataError('invalid', 'A fragment parameter is not an integer.');
      return { type, value: BigInt(p.value) };
  }
}

/**
 * The account view a query resolved at its start, as its fragments carry it: the coordinator
 * revision of the read and the owner of every segment in a handoff between workers
 * (docs/decisions/0016-drain-and-replication.md).
 */
export interface FragmentView {
  revision: number;
  owners: { segmentId: string; workerId: string }[];
}

/** Which rows a fragment reads: account, schema, and a time range in ms (from inclusive, to exclusive). */
export interface FragmentTarget {
  accountId: string;
  schema: string;
  fromMs?: number;
  toMs?: number;
  /** Absent: the caller read no view (a worker then reads no incoming segment). */
  view?: FragmentView;
  /**
   * Exact bounds in µs, both inclusive, that the storage applies itself because the statement
   * does not repeat them (the planner's storage-applied time conjuncts, decision 0018).
   */
  fromUs?: number;
  toUs?: number;
  /** Constant `has` terms the statement's filter requires, for the scan's term index (decision 0026). */
  terms?: TermHint[];
}

export function encodeFragmentRequest(target: FragmentTarget, statement: FragmentStatement): ExecuteFragmentRequest {
  return {
    accountId: target.accountId,
    schema: target.schema,
    ...(target.fromMs !== undefined ? { fromMs: target.fromMs } : {}),
    ...(target.toMs !== undefined ? { toMs: target.toMs } : {}),
    ...(target.fromUs !== undefined ? { fromUs: target.fromUs } : {}),
    ...(target.toUs !== undefined ? { toUs: target.toUs } : {}),
    sql: statement.sql,
    params: statement.params.map((p) => ({ type: PROTO_WIRE[p.type], value: paramText(p), isNull: p.value === null })),
    sourceColumns: statement.sourceColumns.map((c) => ({ name: c.name, type: PROTO_VALUE[c.type] })),
    columns: statement.columns.map((c) => ({ id: c.id, type: PROTO_WIRE[c.type] })),
    ...(statement.maxRows !== undefined ? { maxRows: Number(statement.maxRows) } : {}),
    viewRevision: target.view?.revision ?? 0,
    segmentOwners: target.view?.owners.map((o) => ({ segmentId: o.segmentId, workerId: o.workerId })) ?? [],
    termHints: (target.terms ?? []).map((h) => ({ column: h.column, anyOf: h.anyOf.map((keys) => ({ keys })) })),
    ...(statement.branchLimit !== undefined ? { branchLimit: Number(statement.branchLimit) } : {}),
    ...(statement.branchTopN
      ? {
          branchTopN: {
            keys: statement.branchTopN.keys.map((k) => ({
              column: k.column,
              descending: k.descending,
              nullsFirst: k.nullsFirst,
            })),
            limit: Number(statement.branchTopN.limit),
            sourceColumn: statement.branchTopN.source ?? '',
          },
        }
      : {}),
  };
}

/** The statement of a request; a malformed one is refused with an `invalid` StrataError. */
export function decodeFragmentStatement(req: ExecuteFragmentRequest): FragmentStatement {
  return {
    sql: req.sql,
    params: req.params.map(paramValue),
    sourceColumns: req.sourceColumns.map((c) => {
      const type = valueTypeFromProto(c.type);
      if (!type) throw new StrataError('invalid', `The column '${c.name}' has an unknown type.`);
      return { name: c.name, type };
    }),
    columns: req.columns.map((c) => ({ id: c.id, type: wireTypeFromProto(c.type) })),
    ...(req.maxRows !== undefined ? { maxRows: BigInt(req.maxRows) } : {}),
    ...(req.branchTopN ? { branchTopN: branchTopNOf(req.branchTopN, req.columns.length) } : {}),
    ...(req.branchLimit !== undefined ? { branchLimit: branchLimitOf(req.branchLimit) } : {}),
  };
}

function branchLimitOf(limit: number): bigint {
  if (!Number.isSafeInteger(limit) || limit < 0)
    throw new StrataError('invalid', 'A branch limit must be a non-negative integer.');
  return BigInt(limit);
}

function branchTopNOf(t: NonNullable<ExecuteFragmentRequest['branchTopN']>, columns: number): BranchTopN {
  if (!Number.isSafeInteger(t.limit) || t.limit < 0)
    throw new StrataError('invalid', 'A top-N limit must be a non-negative integer.');
  if (t.keys.length === 0 || t.keys.some((k) => !Number.isInteger(k.column) || k.column < 0 || k.column >= columns))
    throw new StrataError('invalid', 'A top-N key must name an output column.');
  return {
    keys: t.keys.map((k) => ({ column: k.column, descending: k.descending, nullsFirst: k.nullsFirst })),
    limit: BigInt(t.limit),
    ...(t.sourceColumn ? { source: t.sourceColumn } : {}),
  };
}

/** The target of a request (its time range exactly as sent). */
export function decodeFragmentTarget(req: ExecuteFragmentRequest): FragmentTarget {
  return {
    accountId: req.accountId,
    schema: req.schema,
    ...(req.fromMs !== undefined ? { fromMs: req.fromMs } : {}),
    ...(req.toMs !== undefined ? { toMs: req.toMs } : {}),
    ...(req.viewRevision > 0 || req.segmentOwners.length > 0
      ? { view: { revision: req.viewRevision, owners: req.segmentOwners.map((o) => ({ ...o })) } }
      : {}),
    ...(req.fromUs !== undefined ? { fromUs: req.fromUs } : {}),
    ...(req.toUs !== undefined ? { toUs: req.toUs } : {}),
    ...(req.termHints.length > 0
      ? { terms: checkedTermHints(req.termHints.map((h) => ({ column: h.column, anyOf: h.anyOf.map((a) => a.keys) }))) }
      : {}),
  };
}
