import { isUtf8 } from 'node:buffer';
import { type DataType, INFLOW_LIMITS, isReservedFieldName, isValidName } from '@strata/common';
import { mightBeIsoTimestamp, parseIsoTimestampMicros, parseIsoTimestampMicrosOfBytes } from './iso-timestamp.js';
import { type BuiltBatch, type BuiltPart, EntryIds, type JsonBatchOptions } from './json-batch.js';
import { NdjsonWriter } from './ndjson-writer.js';
import { mergeType } from './value-typing.js';

/**
 * The fast path of JSON inflow (decision 0028): builds the worker batch straight from the request
 * bytes, without `JSON.parse` and without `JSON.stringify` of every entry's data again. The
 * data object of an entry is valid JSON already, so its bytes are copied into the row line as they
 * came; the scan only checks the syntax, finds the entry keys and types every field.
 *
 * It takes only what it can store exactly as `buildJsonBatch` would, and answers `undefined` for
 * anything else, which then goes the general way (JSON.parse + buildJsonBatch), where every refusal
 * and its message come from. So the fast path never refuses and never decides an error message; it
 * gives up on:
 * - anything that is not well-formed JSON, or not valid UTF-8 (JSON.parse would replace bytes);
 * - an entry that is not an object, a missing or non-string schema, a schema name that is not
 *   valid, a timestamp that does not parse, data that is not an object or null, more entries than
 *   the limit, a string longer in bytes than the value limit (its length in characters is then
 *   for the general path to count);
 * - escapes in keys, in the schema or in the timestamp; a key twice in one entry or one data
 *   object (JSON.parse keeps the last value); field names that differ only in case;
 * - values the general path rewrites: nested objects and arrays (Dynamic, stored as re-serialized
 *   JSON), strings that are timestamps (DateTime, sent as microseconds), fields that mix strings
 *   with other types (String, sent as text), numbers whose JSON.stringify differs in value class
 *   (`1.0`, `1e3`, `-0`, integers beyond 2^53, numbers that overflow to Infinity);
 * - an invalid or reserved field name.
 * Objects or arrays under ignored top-level keys are refused here too (their depth is not checked).
 */
export function buildRawJsonBatch(raw: Buffer, options: JsonBatchOptions): BuiltBatch | undefined {
  if (raw.length === 0 || !isUtf8(raw)) return undefined;
  return new RawBatchScanner(raw, options).scan();
}

const VALUE_LIMIT = INFLOW_LIMITS.maxValueLength;

/** Byte classes. */
const WS = 1;
const QUOTE = 34;
const BACKSLASH = 92;
const IS_WS = new Uint8Array(256);
IS_WS[0x20] = WS;
IS_WS[0x09] = WS;
IS_WS[0x0a] = WS;
IS_WS[0x0d] = WS;
/** Bytes that end a plain run inside a string: quote, backslash and control characters. */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;
/** Characters allowed after a backslash (JSON escapes), `u` followed by 4 hex digits. */
const ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrtu') ESCAPE[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;

/** Value kinds the scan reports for a data member. */
const K_NULL = 0;
const K_STRING = 1;
const K_INT = 2;
const K_FLOAT = 3;
const K_BOOL = 4;
const K_DATETIME = 5;
const KIND_TYPE: (DataType | null)[] = [null, 'String', 'Int64', 'Float64', 'Boolean', 'DateTime'];

/** Entry keys, matched case-insensitively on ASCII bytes (as entryKey() does on strings). */
const KEY_OTHER = 0;
const KEY_SCHEMA = 1;
const KEY_TIMESTAMP = 2;
const KEY_DATA = 3;

interface RawField {
  name: string;
  /** The name's bytes, to recognise it without making a string. */
  bytes: Buffer;
  type: DataType | undefined;
  sawNonString: boolean;
  /** The entry that last held this field: a second time in one entry means a repeated key. */
  lastEntry: number;
}

interface RawSchema {
  name: string;
  bytes: Buffer;
  allowed: boolean;
  fields: Map<string, RawField>;
  lowerNames: Set<string>;
  /** Fields in the order the previous entry held them: the next entry usually has the same. */
  order: RawField[];
  out: NdjsonWriter;
  ids: EntryIds;
  rows: number;
}

/** Sentinel position: the fast path gives up. */
const GIVE_UP = -1;

class RawBatchScanner {
  private readonly b: Buffer;
  private readonly end: number;
  private readonly schemas = new Map<string, RawSchema>();
  private lastSchema: RawSchema | undefined;
  private dropped = 0;
  /** Set by string(): the string held an escape. */
  private escaped = false;
  /** Set by skipWs(): whitespace held a line break. */
  private lineBreak = false;
  /** Set by number(): K_INT or K_FLOAT. */
  private numberKind = K_INT;
  /** Set by dataObject(): how many members it recorded. */
  private memberCount = 0;
  /** Members of the current entry's data object: key start, key end, value start, value end, kind. */
  private members = new Int32Array(5 * 64);

  constructor(
    raw: Buffer,
    private readonly options: JsonBatchOptions,
  ) {
    this.b = raw;
    this.end = raw.length;
  }

  scan(): BuiltBatch | undefined {
    const b = this.b;
    let i = this.skipWs(0);
    if (b[i] !== 0x5b /* [ */) return undefined;
    i = this.skipWs(i + 1);
    if (b[i] === 0x5d /* ] */) return this.finishAt(i + 1);
    for (let index = 0; ; index++) {
      if (index >= INFLOW_LIMITS.maxEntriesPerBatch) return undefined;
      i = this.entry(i, index);
      if (i === GIVE_UP) return undefined;
      i = this.skipWs(i);
      if (b[i] === 0x2c /* , */) {
        i = this.skipWs(i + 1);
        continue;
      }
      if (b[i] === 0x5d) return this.finishAt(i + 1);
      return undefined;
    }
  }

  /** After the closing bracket: only whitespace may follow. Builds the parts. */
  private finishAt(i: number): BuiltBatch | undefined {
    if (this.skipWs(i) !== this.end) return undefined;
    const parts: BuiltPart[] = [];
    let accepted = 0;
    for (const s of this.schemas.values()) {
      if (!s.allowed) continue;
      const columns: { name: string; type: DataType }[] = [];
      for (const f of s.fields.values()) {
        if (f.type === undefined) continue; // only nulls: no column
        // The general path rewrites these values; the bytes as sent would not do.
        if (f.type === 'DateTime' || (f.type === 'String' && f.sawNonString)) return undefined;
        columns.push({ name: f.name, type: f.type });
      }
      parts.push({ schema: s.name, columns, rows: s.out.finish(), rowCount: s.rows });
      accepted += s.rows;
    }
    return { parts, accepted, dropped: this.dropped };
  }

  private skipWs(i: number): number {
    const b = this.b;
    while (i < this.end && IS_WS[b[i]!] === WS) {
      if (b[i] === 0x0a || b[i] === 0x0d) this.lineBreak = true;
      i++;
    }
    return i;
  }

  /** A string starting at the quote at `i`: the position after its closing quote. */
  private string(i: number): number {
    const b = this.b;
    const end = this.end;
    this.escaped = false;
    i++;
    for (;;) {
      while (i < end && STRING_STOP[b[i]!] === 0) i++;
      if (i >= end) return GIVE_UP;
      const c = b[i]!;
      if (c === QUOTE) return i + 1;
      if (c !== BACKSLASH) return GIVE_UP; // a raw control character
      const e = b[i + 1]!;
      if (ESCAPE[e] !== 1) return GIVE_UP;
      this.escaped = true;
      if (e === 0x75 /* u */) {
        if (HEX[b[i + 2]!] !== 1 || HEX[b[i + 3]!] !== 1 || HEX[b[i + 4]!] !== 1 || HEX[b[i + 5]!] !== 1) return GIVE_UP;
        i += 6;
      } else i += 2;
    }
  }

  /**
   * A number starting at `i` (JSON grammar): the position after it, with its kind in `numberKind`
   * (as jsonValueType would type the parsed value), or GIVE_UP.
   */
  private number(i: number): number {
    const b = this.b;
    const start = i;
    if (b[i] === 0x2d /* - */) i++;
    const intStart = i;
    if (b[i] === 0x30 /* 0 */) i++;
    else if (b[i]! >= 0x31 && b[i]! <= 0x39) while (b[i]! >= 0x30 && b[i]! <= 0x39) i++;
    else return GIVE_UP;
    const intDigits = i - intStart;
    let plain = true;
    let exponent = false;
    const fractionStart = i + 1;
    if (b[i] === 0x2e /* . */) {
      plain = false;
      i++;
      const from = i;
      while (b[i]! >= 0x30 && b[i]! <= 0x39) i++;
      if (i === from) return GIVE_UP;
    }
    if (b[i] === 0x65 || b[i] === 0x45 /* e E */) {
      plain = false;
      exponent = true;
      i++;
      if (b[i] === 0x2b || b[i] === 0x2d) i++;
      const from = i;
      while (b[i]! >= 0x30 && b[i]! <= 0x39) i++;
      if (i === from) return GIVE_UP;
    }
    if (!plain && !exponent && intDigits + (i - fractionStart) <= 15) {
      // At most 15 significant digits survive as a double, so a fraction without exponent is an
      // integer (`1.0`) only when every fraction digit is 0.
      for (let k = fractionStart; k < i; k++)
        if (b[k] !== 0x30) {
          this.numberKind = K_FLOAT;
          return i;
        }
      return GIVE_UP;
    }
    if (plain && intDigits <= 15) {
      // |n| < 10^15 < 2^53: an Int64, and JSON.stringify writes the same digits (but `0` for `-0`).
      if (intDigits === 1 && start !== intStart && b[intStart] === 0x30) return GIVE_UP;
      this.numberKind = K_INT;
      return i;
    }
    const n = Number(this.b.toString('latin1', start, i));
    if (!Number.isFinite(n)) return GIVE_UP; // JSON.stringify would write null
    if (Number.isInteger(n) && Math.abs(n) <= Number.MAX_SAFE_INTEGER) {
      // `1.0` or `1e3` is an Int64 the general path sends as `1` / `1000`.
      if (!plain) return GIVE_UP;
      this.numberKind = K_INT;
      return i;
    }
    // Integers past 2^53 are Float64 to the general path, which sends them in exponent form; the
    // worker's JSON reader might take the digits as a 64-bit integer or not at all.
    if (plain) return GIVE_UP;
    this.numberKind = K_FLOAT;
    return i;
  }

  /** `true`, `false` or `null` at `i`: the position after it, or GIVE_UP. */
  private literal(i: number): number {
    const b = this.b;
    const c = b[i];
    if (c === 0x74 && b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65) return i + 4;
    if (c === 0x6e && b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c) return i + 4;
    if (c === 0x66 && b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65) return i + 5;
    return GIVE_UP;
  }

  /** A scalar value at `i` (objects and arrays give up): the position after it. */
  private scalar(i: number): number {
    const c = this.b[i];
    if (c === QUOTE) return this.string(i);
    if (c === 0x2d || (c! >= 0x30 && c! <= 0x39)) return this.number(i);
    return this.literal(i);
  }

  /** Which entry key the (escape-free) key bytes [s, e) are. */
  private entryKey(s: number, e: number): number {
    const len = e - s;
    if (len === 6) return matchesLower(this.b, s, SCHEMA_KEY) ? KEY_SCHEMA : KEY_OTHER;
    if (len === 9) return matchesLower(this.b, s, TIMESTAMP_KEY) ? KEY_TIMESTAMP : KEY_OTHER;
    if (len === 4) return matchesLower(this.b, s, DATA_KEY) ? KEY_DATA : KEY_OTHER;
    return KEY_OTHER;
  }

  /**
   * One entry object at `i`: checks it, types its data and writes its row line. The position after
   * the entry, or GIVE_UP.
   */
  private entry(i: number, index: number): number {
    const b = this.b;
    if (b[i] !== 0x7b /* { */) return GIVE_UP;
    let schemaS = -1;
    let schemaE = -1;
    let tsS = -1;
    let tsE = -1;
    let dataOpen = -1;
    let dataClose = -1;
    let dataSeen = false;
    let memberCount = 0;
    let dataLineBreaks = false;
    i = this.skipWs(i + 1);
    if (b[i] === 0x7d) i++;
    else
      for (;;) {
        if (b[i] !== QUOTE) return GIVE_UP;
        const keyS = i + 1;
        i = this.string(i);
        if (i === GIVE_UP || this.escaped) return GIVE_UP;
        const which = this.entryKey(keyS, i - 1);
        i = this.skipWs(i);
        if (b[i] !== 0x3a /* : */) return GIVE_UP;
        i = this.skipWs(i + 1);
        if (which === KEY_SCHEMA || which === KEY_TIMESTAMP) {
          // A second spelling of the key would make the last one count: the general path decides.
          if ((which === KEY_SCHEMA ? schemaS : tsS) !== -1 || b[i] !== QUOTE) return GIVE_UP;
          const s = i + 1;
          i = this.string(i);
          if (i === GIVE_UP || this.escaped) return GIVE_UP;
          if (which === KEY_SCHEMA) {
            schemaS = s;
            schemaE = i - 1;
          } else {
            tsS = s;
            tsE = i - 1;
          }
        } else if (which === KEY_DATA) {
          if (dataSeen) return GIVE_UP;
          dataSeen = true;
          if (b[i] === 0x7b) {
            this.lineBreak = false;
            dataOpen = i;
            i = this.dataObject(i);
            if (i === GIVE_UP) return GIVE_UP;
            memberCount = this.memberCount;
            dataClose = i - 1;
            dataLineBreaks = this.lineBreak;
          } else {
            i = this.literal(i);
            if (i === GIVE_UP || b[i - 1] !== 0x6c /* null */) return GIVE_UP;
          }
        } else {
          i = this.scalar(i);
          if (i === GIVE_UP) return GIVE_UP;
        }
        i = this.skipWs(i);
        if (b[i] === 0x2c) {
          i = this.skipWs(i + 1);
          continue;
        }
        if (b[i] === 0x7d) {
          i++;
          break;
        }
        return GIVE_UP;
      }

    if (schemaS === -1) return GIVE_UP;
    const schema = this.schemaOf(schemaS, schemaE);
    if (schema === undefined) return GIVE_UP;
    if (!schema.allowed) {
      this.dropped++;
      return i;
    }
    if (tsS === -1) return GIVE_UP;
    const tsUs = parseIsoTimestampMicrosOfBytes(b, tsS, tsE);
    if (tsUs === undefined) return GIVE_UP;
    if (!this.typeMembers(schema, index, memberCount)) return GIVE_UP;
    if (schema.rows > 0) schema.out.newline();
    schema.out.stampedLineFromSource(tsUs, schema.ids, b, dataOpen, memberCount === 0 ? dataOpen : dataClose, dataLineBreaks);
    schema.rows++;
    return i;
  }

  /** The data object at `i`: records its members in `members`; the position after it, or GIVE_UP. */
  private dataObject(i: number): number {
    const b = this.b;
    let n = 0;
    i = this.skipWs(i + 1);
    if (b[i] === 0x7d) {
      this.memberCount = 0;
      return i + 1;
    }
    for (;;) {
      if (b[i] !== QUOTE) return GIVE_UP;
      const keyS = i + 1;
      i = this.string(i);
      if (i === GIVE_UP || this.escaped) return GIVE_UP;
      const keyE = i - 1;
      i = this.skipWs(i);
      if (b[i] !== 0x3a) return GIVE_UP;
      i = this.skipWs(i + 1);
      const valueS = i;
      const c = b[i];
      let kind: number;
      if (c === QUOTE) {
        i = this.string(i);
        if (i === GIVE_UP) return GIVE_UP;
        kind = this.stringKind(valueS + 1, i - 1);
        if (kind === GIVE_UP) return GIVE_UP;
      } else if (c === 0x2d || (c! >= 0x30 && c! <= 0x39)) {
        i = this.number(i);
        if (i === GIVE_UP) return GIVE_UP;
        kind = this.numberKind;
      } else {
        i = this.literal(i);
        if (i === GIVE_UP) return GIVE_UP; // objects and arrays included
        kind = c === 0x6e ? K_NULL : K_BOOL;
      }
      if (5 * n + 5 > this.members.length) {
        const grown = new Int32Array(this.members.length * 2);
        grown.set(this.members);
        this.members = grown;
      }
      const m = this.members;
      m[5 * n] = keyS;
      m[5 * n + 1] = keyE;
      m[5 * n + 2] = valueS;
      m[5 * n + 3] = i;
      m[5 * n + 4] = kind;
      n++;
      i = this.skipWs(i);
      if (b[i] === 0x2c) {
        i = this.skipWs(i + 1);
        continue;
      }
      if (b[i] === 0x7d) {
        this.memberCount = n;
        return i + 1;
      }
      return GIVE_UP;
    }
  }

  /** String or DateTime for the string content [s, e) (escapes included), or GIVE_UP. */
  private stringKind(s: number, e: number): number {
    const len = e - s;
    if (len > VALUE_LIMIT) return GIVE_UP; // characters may be fewer than bytes: the general path counts
    if (len < 19) return K_STRING; // shorter than any timestamp, escapes or not
    if (this.escaped) {
      const text = JSON.parse(this.b.toString('utf8', s - 1, e + 1)) as string;
      return mightBeIsoTimestamp(text) && parseIsoTimestampMicros(text) !== undefined ? K_DATETIME : K_STRING;
    }
    const b = this.b;
    // mightBeIsoTimestamp on bytes; a timestamp is ASCII, so bytes and characters agree when it is one.
    if (len > 35 || b[s + 4] !== 0x2d || b[s + 7] !== 0x2d || b[s + 13] !== 0x3a || b[s]! < 0x30 || b[s]! > 0x39) return K_STRING;
    return parseIsoTimestampMicrosOfBytes(b, s, e) !== undefined ? K_DATETIME : K_STRING;
  }

  /** The schema named by the bytes [s, e), undefined when the name is not valid. */
  private schemaOf(s: number, e: number): RawSchema | undefined {
    const last = this.lastSchema;
    if (last !== undefined && sameBytes(this.b, s, e, last.bytes)) return last;
    const name = this.b.toString('latin1', s, e);
    let schema = this.schemas.get(name);
    if (schema === undefined) {
      if (!isValidName(name)) return undefined;
      schema = {
        name,
        bytes: Buffer.from(name, 'latin1'),
        allowed: this.options.allowSchema(name),
        fields: new Map(),
        lowerNames: new Set(),
        order: [],
        // The first schema's rows are about the size of the body (the stamps take about the room
        // of the entry keys they replace): one chunk, no copy at the end.
        out: new NdjsonWriter(this.schemas.size === 0 ? this.end + 64 * 1024 : undefined),
        ids: new EntryIds(),
        rows: 0,
      };
      this.schemas.set(name, schema);
    }
    this.lastSchema = schema;
    return schema;
  }

  /** Folds the data members' types into the schema's fields; false to give up. */
  private typeMembers(schema: RawSchema, index: number, count: number): boolean {
    const m = this.members;
    const b = this.b;
    const order = schema.order;
    for (let k = 0; k < count; k++) {
      const s = m[5 * k]!;
      const e = m[5 * k + 1]!;
      let field: RawField | undefined = order[k];
      if (field === undefined || !sameBytes(b, s, e, field.bytes)) {
        field = this.fieldOf(schema, s, e);
        if (field === undefined) return false;
        order[k] = field;
      }
      if (field.lastEntry === index) return false; // the key twice in one object
      field.lastEntry = index;
      const kind = m[5 * k + 4]!;
      if (kind === K_NULL) continue;
      const type = KIND_TYPE[kind]!;
      if (type === field.type) continue;
      if (type !== 'String' && type !== 'DateTime') field.sawNonString = true;
      field.type = mergeType(field.type, type);
    }
    return true;
  }

  private fieldOf(schema: RawSchema, s: number, e: number): RawField | undefined {
    const name = this.b.toString('latin1', s, e);
    let field = schema.fields.get(name);
    if (field !== undefined) return field;
    if (!isValidName(name) || isReservedFieldName(name)) return undefined;
    const lower = name.toLowerCase();
    if (schema.lowerNames.has(lower)) return undefined; // another spelling of a field: the general path merges them
    schema.lowerNames.add(lower);
    field = { name, bytes: Buffer.from(name, 'latin1'), type: undefined, sawNonString: false, lastEntry: -1 };
    schema.fields.set(name, field);
    return field;
  }
}

const SCHEMA_KEY = Buffer.from('schema');
const TIMESTAMP_KEY = Buffer.from('timestamp');
const DATA_KEY = Buffer.from('data');

/** The bytes at `s` are `lower` (lower-case ASCII letters) in any case. */
function matchesLower(b: Buffer, s: number, lower: Buffer): boolean {
  for (let k = 0; k < lower.length; k++) if ((b[s + k]! | 0x20) !== lower[k]) return false;
  return true;
}

function sameBytes(b: Buffer, s: number, e: number, name: Buffer): boolean {
  if (e - s !== name.length) return false;
  for (let k = 0; k < name.length; k++) if (b[s + k] !== name[k]) return false;
  return true;
}
