import { ColumnType } from '@strata/proto/ingest/v1/ingest';
import type { DataType } from './column-types.js';

/** Storage type names ↔ the ColumnType enum of the ingest contract. */
const TO_PROTO: Record<DataType, ColumnType> = {
  Int64: ColumnType.COLUMN_TYPE_INT64,
  Float64: ColumnType.COLUMN_TYPE_FLOAT64,
  Boolean: ColumnType.COLUMN_TYPE_BOOLEAN,
  DateTime: ColumnType.COLUMN_TYPE_DATETIME,
  String: ColumnType.COLUMN_TYPE_STRING,
  Dynamic: ColumnType.COLUMN_TYPE_DYNAMIC,
};

const FROM_PROTO = new Map<ColumnType, DataType>(Object.entries(TO_PROTO).map(([k, v]) => [v, k as DataType]));

export function columnTypeToProto(type: DataType): ColumnType {
  return TO_PROTO[type];
}

/** undefined for UNSPECIFIED and unknown values. */
export function columnTypeFromProto(type: ColumnType): DataType | undefined {
  return FROM_PROTO.get(type);
}
