/**
 * The inflow rules the gateway shares with the worker, without the storage engine (importing this
 * entry point loads no DuckDB): `@strata/worker/inflow-rules`.
 */
export { columnTypeFromProto, columnTypeToProto } from './ingest/column-type-codec.js';
export { type ColumnSchema, type ColumnTypeName, DATA_TYPES, type DataType, widen } from './storage/column-types.js';
export { INFLOW_LIMITS, isValidName, NAME_PATTERN } from './storage/limits.js';
export { isReservedFieldName, STAMPED_COLUMNS } from './storage/stamped-columns.js';
