import { type DataType, INFLOW_LIMITS, jsonDepthWithin, MAX_JSON_DEPTH, widen } from '@strata/common';
import { mightBeIsoTimestamp, parseIsoTimestampMicros } from './iso-timestamp.js';

/**
 * Type inference of JSON data values (docs/api.md "Ingest types"):
 * - integers within ±2^53 → Int64; other numbers → Float64
 * - true/false → Boolean
 * - strings in the ISO 8601 timestamp form → DateTime; other strings → String
 * - objects and arrays → Dynamic (nesting at most MAX_JSON_DEPTH levels)
 * - null → no value (the field is absent in that entry)
 * Within a batch, a field's type is the widening of its values' types (Int64+Float64 → Float64,
 * other mixes → String); the worker widens further against the stored column.
 */
export function jsonValueType(value: unknown): DataType | null | 'too_long' | 'too_deep' | 'invalid' {
  switch (typeof value) {
    case 'string':
      if (value.length > INFLOW_LIMITS.maxValueLength) return 'too_long';
      return mightBeIsoTimestamp(value) && parseIsoTimestampMicros(value) !== undefined ? 'DateTime' : 'String';
    case 'number':
      return Number.isInteger(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER ? 'Int64' : 'Float64';
    case 'boolean':
      return 'Boolean';
    case 'object':
      if (value === null) return null;
      // Checked first: serializing a deeper value could overflow the stack.
      if (!jsonDepthWithin(value, MAX_JSON_DEPTH)) return 'too_deep';
      return JSON.stringify(value).length > INFLOW_LIMITS.maxValueLength ? 'too_long' : 'Dynamic';
    default:
      return 'invalid';
  }
}

export function mergeType(current: DataType | undefined, next: DataType): DataType {
  return current === undefined ? next : widen(current, next);
}

/**
 * The JSON value a field's value takes in the worker batch once the batch type of the field is
 * known: DateTime as microseconds, String as text (numbers and booleans as their text, objects and
 * arrays as their JSON), everything else unchanged.
 */
export function encodeValue(value: unknown, type: DataType): unknown {
  if (type === 'DateTime') return parseIsoTimestampMicros(value as string);
  if (type === 'String' && typeof value !== 'string') return typeof value === 'object' ? JSON.stringify(value) : String(value);
  return value;
}
