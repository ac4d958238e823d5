import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import {
  type DataType,
  INFLOW_LIMITS,
  isReservedFieldName,
  isValidName,
  STAMPED_COLUMNS,
  StrataError,
  widen,
} from '@strata/common';
import { CsvError, parse } from 'csv-parse';
import { parseIsoTimestampMicros } from './iso-timestamp.js';
import { type BuiltPart, EntryIds } from './json-batch.js';

/** One chunk of a delimited upload, sent to a worker as one Append. */
export interface DelimitedChunk {
  part: BuiltPart;
  /** 1-based line number of the chunk's first record in the file (header is line 1). */
  firstLine: number;
  /** Hash of the chunk's values, for idempotent retries of the chunk. */
  contentHash: string;
}

export interface DelimitedOptions {
  schema: string;
  delimiter: ',' | '\t';
  /** A chunk closes at this many rows… */
  maxChunkRows?: number;
  /** …or this many bytes of encoded rows. */
  maxChunkBytes?: number;
}

const INT64 = /^-?(0|[1-9]\d{0,18})$/;
const FLOAT = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;
const BOOL = /^(true|false)$/i;
const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

function isInt64(v: string): boolean {
  if (!INT64.test(v)) return false;
  if (v.length < 18) return true;
  const n = BigInt(v);
  return n <= INT64_MAX && n >= INT64_MIN;
}

function isFloat(v: string): boolean {
  return FLOAT.test(v) && Number.isFinite(Number(v));
}

/**
 * The type of one delimited value: integers (no leading zeros, within Int64) → Int64, decimal
 * numbers → Float64, true/false (any case) → Boolean, ISO 8601 date and time → DateTime, anything
 * else → String. Empty values are nulls.
 */
export function delimitedValueType(v: string): DataType {
  if (isInt64(v)) return 'Int64';
  if (isFloat(v)) return 'Float64';
  if (BOOL.test(v)) return 'Boolean';
  if (parseIsoTimestampMicros(v) !== undefined) return 'DateTime';
  return 'String';
}

function conforms(v: string, type: DataType): boolean {
  switch (type) {
    case 'Int64':
      return isInt64(v);
    case 'Float64':
      return isFloat(v);
    case 'Boolean':
      return BOOL.test(v);
    case 'DateTime':
      return parseIsoTimestampMicros(v) !== undefined;
    default:
      return true;
  }
}

/** The JSON text of a value of `type` (numbers keep their exact digits: DuckDB parses them). */
function encode(v: string, type: DataType): string {
  switch (type) {
    case 'Int64':
    case 'Float64':
      return v;
    case 'Boolean':
      return v.length === 4 ? 'true' : 'false';
    case 'DateTime':
      return String(parseIsoTimestampMicros(v));
    default:
      return JSON.stringify(v);
  }
}

function csvProblem(err: unknown, line: number): StrataError {
  if (err instanceof StrataError) return err;
  if (err instanceof CsvError) {
    const at = (err as CsvError & { lines?: number }).lines ?? line;
    return new StrataError('invalid', `Line ${at}: ${err.message}`);
  }
  return new StrataError('invalid', 'The delimited request body could not be read.');
}

/**
 * Streams a CSV or TSV upload into worker chunks without holding the file in memory: records are
 * parsed as they arrive (csv-parse, RFC 4180 quoting) and emitted in chunks of at most
 * `maxChunkRows` rows or `maxChunkBytes` bytes; the consumer's pace throttles the parser.
 *
 * The first line is the header: names follow the field-name rules and must be unique
 * (case-insensitively) and not reserved. Column types come from the first row of values (a column
 * empty there takes the type of its first non-empty value). A later value that does not fit its
 * column widens the column by the storage rules (Int64 → Float64 → String), so nothing is
 * dropped. Each row's `timestamp` is the moment the gateway read it.
 *
 * Throws 'invalid' with the line number for malformed input; chunks before it were already given
 * to the consumer.
 */
export async function* delimitedChunks(input: Readable, options: DelimitedOptions): AsyncGenerator<DelimitedChunk> {
  const maxRows = options.maxChunkRows ?? 50_000;
  const maxBytes = options.maxChunkBytes ?? 8 * 1024 * 1024;
  const parser = parse({
    delimiter: options.delimiter,
    bom: true,
    skip_empty_lines: true,
    max_record_size: INFLOW_LIMITS.maxValueLength * 4,
    relax_quotes: false,
    info: true,
  });
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);

  let header: string[] | undefined;
  let names: string[] = [];
  let baseTypes: (DataType | undefined)[] = [];
  let rows: { tsUs: number; id: string; values: string[] }[] = [];
  // Entry ids as on the JSON path: unique like random UUIDs, without one randomUUID() per row.
  const ids = new EntryIds();
  let bytes = 0;
  let firstLine = 2;
  let line = 1;

  const flush = (): DelimitedChunk => {
    const chunkTypes = baseTypes.map((t) => t);
    for (const r of rows)
      for (let c = 0; c < names.length; c++) {
        const v = r.values[c]!;
        if (v === '') continue;
        const t = chunkTypes[c];
        if (t === undefined) chunkTypes[c] = delimitedValueType(v);
        else if (!conforms(v, t)) chunkTypes[c] = widen(t, delimitedValueType(v));
      }
    const keys = names.map((n) => `,${JSON.stringify(n)}:`);
    const hash = createHash('sha256');
    const lines: string[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      let out = `{"@ts":${r.tsUs},"@id":"${r.id}"`;
      for (let c = 0; c < names.length; c++) {
        const v = r.values[c]!;
        if (v !== '') out += keys[c] + encode(v, chunkTypes[c]!);
      }
      lines[i] = `${out}}`;
      hash.update(r.values.join('\u0001')).update('\n');
    }
    const columns = names.flatMap((name, c) => (chunkTypes[c] ? [{ name, type: chunkTypes[c]! }] : []));
    const chunk: DelimitedChunk = {
      part: { schema: options.schema, columns, rows: Buffer.from(lines.join('\n')), rowCount: rows.length },
      firstLine,
      contentHash: hash.digest('hex'),
    };
    firstLine += rows.length;
    rows = [];
    bytes = 0;
    return chunk;
  };

  try {
    for await (const item of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      line = item.info.lines;
      const record = item.record;
      if (!header) {
        header = record;
        names = validateHeader(record);
        baseTypes = new Array(names.length).fill(undefined);
        firstLine = line + 1;
        continue;
      }
      if (record.length !== names.length)
        throw new StrataError('invalid', `Line ${line}: ${record.length} values for ${names.length} columns.`);
      for (let c = 0; c < names.length; c++) {
        const v = record[c]!;
        if (v.length > INFLOW_LIMITS.maxValueLength)
          throw new StrataError(
            'invalid',
            `Line ${line}: the value of column '${names[c]}' is longer than ${INFLOW_LIMITS.maxValueLength} characters.`,
          );
        if (baseTypes[c] === undefined && v !== '') baseTypes[c] = delimitedValueType(v);
      }
      rows.push({ tsUs: Date.now() * 1000, id: ids.next(), values: record });
      bytes += 64;
      for (const v of record) bytes += v.length + 8;
      if (rows.length >= maxRows || bytes >= maxBytes) yield flush();
    }
  } catch (err) {
    throw csvProblem(err, line);
  }
  if (!header) throw new StrataError('invalid', 'The upload is empty: the first line must be the header.');
  if (rows.length > 0) yield flush();
}

function validateHeader(record: string[]): string[] {
  const seen = new Map<string, string>();
  const max = INFLOW_LIMITS.maxColumnsPerSchema - STAMPED_COLUMNS.length;
  if (record.length > max) throw new StrataError('invalid', `Line 1: ${record.length} columns; the limit is ${max}.`);
  for (const name of record) {
    if (!isValidName(name))
      throw new StrataError(
        'invalid',
        `Line 1: column name '${name.slice(0, 100)}' must be 1–${INFLOW_LIMITS.maxNameLength} letters, digits, '.', '_' or '-'.`,
      );
    if (isReservedFieldName(name))
      throw new StrataError(
        'invalid',
        `Line 1: column name '${name}' is reserved for a stamped column (rows are timestamped on arrival); rename the column.`,
      );
    const lower = name.toLowerCase();
    const other = seen.get(lower);
    if (other !== undefined) throw new StrataError('invalid', `Line 1: columns '${other}' and '${name}' differ only in case.`);
    seen.set(lower, name);
  }
  return record;
}
