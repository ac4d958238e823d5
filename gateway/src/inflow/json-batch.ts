import { randomUUID } from 'node:crypto';
import {
  type DataType,
  type ErrorDetail,
  INFLOW_LIMITS,
  isReservedFieldName,
  isValidName,
  MAX_JSON_DEPTH,
  StrataError,
} from '@strata/common';
import { parseIsoTimestampMicros } from './iso-timestamp.js';
import { NdjsonWriter } from './ndjson-writer.js';
import { encodeValue, jsonValueType, mergeType } from './value-typing.js';

/** The rows of one schema, ready for the worker (proto SchemaBatch). */
export interface BuiltPart {
  schema: string;
  columns: { name: string; type: DataType }[];
  rows: Buffer;
  rowCount: number;
}

export interface BuiltBatch {
  parts: BuiltPart[];
  /** Entries that will be stored. */
  accepted: number;
  /** Entries dropped because their schema is outside the token's inflow scope. */
  dropped: number;
}

export interface JsonBatchOptions {
  /** False for schemas outside the caller's inflow scope (entries are dropped, not refused). */
  allowSchema: (schema: string) => boolean;
}

/** Errors listed in a 400 answer; the message gives the total. */
const MAX_LISTED_PROBLEMS = 100;

interface FieldState {
  /** Column name in this batch: the first spelling seen (names are case-insensitive). */
  name: string;
  type: DataType | undefined;
  /** A String field that also got non-string values, which must be sent as text. */
  sawNonString: boolean;
}

interface SchemaState {
  schema: string;
  /** Exact spelling → field (several spellings of one name share the state). */
  fields: Map<string, FieldState>;
  byLower: Map<string, FieldState>;
  entries: { tsUs: number; data: Record<string, unknown>; respelled: boolean }[];
}

function entryKey(key: string): 'schema' | 'timestamp' | 'data' | undefined {
  switch (key) {
    case 'schema':
    case 'Schema':
      return 'schema';
    case 'timestamp':
    case 'TimeStamp':
    case 'Timestamp':
      return 'timestamp';
    case 'data':
    case 'Data':
      return 'data';
    default: {
      const lower = key.toLowerCase();
      return lower === 'schema' || lower === 'timestamp' || lower === 'data' ? lower : undefined;
    }
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Validates a JSON inflow body and turns it into per-schema worker batches. Every entry is checked
 * before anything is built: with any malformed entry the whole batch is refused with a 400 whose
 * `errors` name each bad entry's index and reason. Entries outside the token's scope are dropped.
 *
 * Entry keys (`schema`, `timestamp`, `data`) match case-insensitively; other top-level keys are
 * ignored. Field names match case-insensitively within a schema (the first spelling is the
 * column's); a null value means the field is absent.
 */
export function buildJsonBatch(body: unknown, options: JsonBatchOptions): BuiltBatch {
  if (!Array.isArray(body)) throw new StrataError('invalid', 'The inflow body must be a JSON array of entries.');
  if (body.length > INFLOW_LIMITS.maxEntriesPerBatch)
    throw new StrataError(
      'payload_too_large',
      `The batch has ${body.length} entries; the limit is ${INFLOW_LIMITS.maxEntriesPerBatch} per request.`,
    );
  const problems: { index: number; reason: string }[] = [];
  const schemas = new Map<string, SchemaState>();
  let dropped = 0;

  for (let index = 0; index < body.length; index++) {
    const entry = body[index];
    if (!isObject(entry)) {
      problems.push({ index, reason: 'an entry must be an object with schema, timestamp and data' });
      continue;
    }
    let schema: unknown;
    let timestamp: unknown;
    let data: unknown;
    for (const key in entry) {
      const which = entryKey(key);
      if (which === 'schema') schema = entry[key];
      else if (which === 'timestamp') timestamp = entry[key];
      else if (which === 'data') data = entry[key];
    }
    if (typeof schema !== 'string' || !isValidName(schema)) {
      problems.push({
        index,
        reason:
          typeof schema !== 'string'
            ? 'schema is missing or not a string'
            : `schema '${schema.slice(0, 100)}' must be 1–${INFLOW_LIMITS.maxNameLength} letters, digits, '.', '_' or '-'`,
      });
      continue;
    }
    if (!options.allowSchema(schema)) {
      dropped++;
      continue;
    }
    const tsUs = typeof timestamp === 'string' ? parseIsoTimestampMicros(timestamp) : undefined;
    if (tsUs === undefined) {
      problems.push({
        index,
        reason:
          typeof timestamp !== 'string'
            ? 'timestamp is missing or not a string'
            : `timestamp '${timestamp.slice(0, 40)}' is not an ISO 8601 date and time`,
      });
      continue;
    }
    if (data === undefined || data === null) data = {};
    if (!isObject(data)) {
      problems.push({ index, reason: 'data must be an object' });
      continue;
    }
    let state = schemas.get(schema);
    if (!state) {
      state = { schema, fields: new Map(), byLower: new Map(), entries: [] };
      schemas.set(schema, state);
    }
    const typed = typeEntryFields(state, data);
    if ('reason' in typed) {
      problems.push({ index, reason: typed.reason });
      continue;
    }
    state.entries.push({ tsUs, data, respelled: typed.respelled });
  }

  if (problems.length > 0) {
    const details: ErrorDetail[] = problems
      .slice(0, MAX_LISTED_PROBLEMS)
      .map((p) => ({ message: `entry ${p.index}: ${p.reason}`, tokens: [] }));
    if (problems.length > MAX_LISTED_PROBLEMS)
      details.push({ message: `… and ${problems.length - MAX_LISTED_PROBLEMS} more malformed entries`, tokens: [] });
    const noun = problems.length === 1 ? 'entry' : 'entries';
    throw new StrataError(
      'invalid',
      `The batch has ${problems.length} malformed ${noun}; nothing was stored. First: entry ${problems[0]!.index}: ${problems[0]!.reason}.`,
      { details },
    );
  }

  const parts: BuiltPart[] = [];
  let accepted = 0;
  for (const state of schemas.values()) {
    parts.push(encodePart(state));
    accepted += state.entries.length;
  }
  return { parts, accepted, dropped };
}

/**
 * Checks an entry's fields and folds their types into the schema's batch state. On a problem the
 * state may hold types from this entry's earlier fields; the batch is refused then anyway.
 */
function typeEntryFields(state: SchemaState, data: Record<string, unknown>): { reason: string } | { respelled: boolean } {
  let respelled = false;
  for (const key in data) {
    const value = data[key];
    let field = state.fields.get(key);
    if (!field) {
      if (!isValidName(key))
        return {
          reason: `field name '${key.slice(0, 100)}' must be 1–${INFLOW_LIMITS.maxNameLength} letters, digits, '.', '_' or '-'`,
        };
      if (isReservedFieldName(key)) return { reason: `field name '${key}' is reserved for a stamped column` };
      const lower = key.toLowerCase();
      field = state.byLower.get(lower);
      if (!field) {
        field = { name: key, type: undefined, sawNonString: false };
        state.byLower.set(lower, field);
      }
      state.fields.set(key, field);
    }
    if (field.name !== key) respelled = true;
    const type = jsonValueType(value);
    if (type === null) continue;
    if (type === 'too_long')
      return { reason: `the value of field '${key}' is longer than ${INFLOW_LIMITS.maxValueLength} characters` };
    if (type === 'too_deep') return { reason: `the value of field '${key}' nests deeper than ${MAX_JSON_DEPTH} levels` };
    if (type === 'invalid') return { reason: `the value of field '${key}' is not a JSON value` };
    if (type === field.type) continue;
    if (type !== 'String' && type !== 'DateTime') field.sawNonString = true;
    field.type = mergeType(field.type, type);
  }
  if (respelled) {
    // Two spellings of one name in one entry would land in one column: refuse, never drop one.
    const seen = new Map<string, string>();
    for (const key in data) {
      const lower = key.toLowerCase();
      const other = seen.get(lower);
      if (other !== undefined) return { reason: `fields '${other}' and '${key}' differ only in case` };
      seen.set(lower, key);
    }
  }
  return { respelled };
}

/** Two hex digits of each byte value. */
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * `__INFLOW_ID`s for the entries of one part: a random UUID (version 4) per part whose last 32 bits
 * count up per entry. Unique like random UUIDs (90 random bits per part), at a fraction of the cost
 * of one randomUUID() per entry.
 */
export class EntryIds {
  private readonly prefix = randomUUID().slice(0, 28);
  private n = Number.parseInt(randomUUID().slice(28, 36), 16);

  private prefixBytes: Buffer | undefined;

  next(): string {
    const n = this.n++ >>> 0;
    return this.prefix + HEX2[n >>> 24]! + HEX2[(n >>> 16) & 255]! + HEX2[(n >>> 8) & 255]! + HEX2[n & 255]!;
  }

  /** The next id as 36 ASCII bytes at `pos` of `buf` (no string made). */
  writeNext(buf: Buffer, pos: number): void {
    this.prefixBytes ??= Buffer.from(this.prefix, 'latin1');
    const prefix = this.prefixBytes;
    for (let k = 0; k < 28; k++) buf[pos + k] = prefix[k]!;
    let n = this.n++ >>> 0;
    for (let k = 35; k >= 28; k--) {
      buf[pos + k] = HEX_DIGIT[n & 15]!;
      n >>>= 4;
    }
  }
}

const HEX_DIGIT = Buffer.from('0123456789abcdef', 'latin1');

function encodePart(state: SchemaState): BuiltPart {
  const columns: { name: string; type: DataType }[] = [];
  const converted = new Set<FieldState>();
  for (const field of new Set(state.fields.values())) {
    if (field.type === undefined) continue; // only nulls: no column
    columns.push({ name: field.name, type: field.type });
    if (field.type === 'DateTime' || (field.type === 'String' && field.sawNonString)) converted.add(field);
  }
  const out = new NdjsonWriter();
  const ids = new EntryIds();
  for (let i = 0; i < state.entries.length; i++) {
    const e = state.entries[i]!;
    let json: string;
    if (converted.size === 0 && !e.respelled) {
      json = JSON.stringify(e.data);
    } else {
      // Null prototype: a field named __proto__ stays an ordinary key.
      const copy: Record<string, unknown> = Object.create(null);
      for (const key in e.data) {
        const value = e.data[key];
        if (value === null) continue;
        const field = state.fields.get(key)!;
        copy[field.name] = converted.has(field) ? encodeValue(value, field.type!) : value;
      }
      json = JSON.stringify(copy);
    }
    if (i > 0) out.newline();
    out.line(`{"@ts":${e.tsUs},"@id":"${ids.next()}"`, json);
  }
  return { schema: state.schema, columns, rows: out.finish(), rowCount: state.entries.length };
}
