import type { EntryIds } from './json-batch.js';

const TS_KEY = Buffer.from('{"@ts":', 'latin1');
const ID_KEY = Buffer.from(',"@id":"', 'latin1');
/** Copies a few constant bytes (a loop beats Buffer#copy's set-up for these sizes); the end position. */
export function putBytes(buf: Buffer, pos: number, bytes: Buffer): number {
  for (let k = 0; k < bytes.length; k++) buf[pos + k] = bytes[k]!;
  return pos + bytes.length;
}

/** Longest stamp head: the keys, a 21-character number, a 36-character id and its quotes. */
const STAMP_HEAD_MAX = TS_KEY.length + 21 + ID_KEY.length + 37;

/**
 * Writes NDJSON lines straight into Buffers (off the V8 heap): no per-line concatenation and no
 * megabyte-sized joined string, which would land in V8's large-object space and drive full GCs.
 */
export class NdjsonWriter {
  private static readonly CHUNK = 256 * 1024;
  private readonly chunks: Buffer[] = [];
  private buf: Buffer;

  /**
   * `capacity`: bytes of the first chunk. A writer that knows its output's size takes one chunk
   * and finishes without a copy: every megabyte Buffer counts towards V8's external memory, and
   * each ~64 MB of it starts a full collection of the heap (measured in the gateway: ~50 of them
   * per million rows, most of its CPU time after the parse).
   */
  constructor(capacity = NdjsonWriter.CHUNK) {
    this.buf = Buffer.allocUnsafe(capacity);
  }
  private pos = 0;

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.buf = Buffer.allocUnsafe(Math.max(NdjsonWriter.CHUNK, bytes));
    this.pos = 0;
  }

  newline(): void {
    this.ensure(1);
    this.buf[this.pos++] = 0x0a;
  }

  /** `head` (an unclosed object) followed by the members of the object text `json`. */
  line(head: string, json: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 code unit.
    this.ensure((head.length + json.length) * 3 + 1);
    this.pos += this.buf.write(head, this.pos);
    if (json.length > 2) {
      const brace = this.pos;
      this.pos += this.buf.write(json, this.pos);
      this.buf[brace] = 0x2c; // the data object's '{' becomes the ',' after the stamps
    } else {
      this.buf[this.pos++] = 0x7d; // '}'
    }
  }

  /**
   * `{"@ts":<tsUs>,"@id":"<next id>"` followed by the members of the object whose text is
   * `source[open..close]` (`{` at `open`, `}` at `close`; `open === close` for an object without
   * members, which may hold whitespace), copied byte for byte. The text must be
   * a checked JSON object: line breaks in it can only be whitespace between tokens (JSON strings
   * cannot hold them raw), so they become spaces and the row stays one line.
   */
  stampedLineFromSource(tsUs: number, ids: EntryIds, source: Buffer, open: number, close: number, hasLineBreaks: boolean): void {
    this.ensure(STAMP_HEAD_MAX + (close - open) + 2);
    this.writeStamps(tsUs, ids);
    if (close === open) {
      this.buf[this.pos++] = 0x7d; // '}'
      return;
    }
    const start = this.pos;
    source.copy(this.buf, start, open, close + 1);
    this.buf[start] = 0x2c; // the data object's '{' becomes the ',' after the stamps
    this.pos += close + 1 - open;
    if (hasLineBreaks)
      for (let i = start; i < this.pos; i++) if (this.buf[i] === 0x0a || this.buf[i] === 0x0d) this.buf[i] = 0x20;
  }

  /** `{"@ts":<tsUs>,"@id":"<next id>"`, written as bytes; room for STAMP_HEAD_MAX was ensured. */
  private writeStamps(tsUs: number, ids: EntryIds): void {
    const buf = this.buf;
    let pos = putBytes(buf, this.pos, TS_KEY);
    if (tsUs >= 0 && tsUs <= Number.MAX_SAFE_INTEGER) {
      // Two parts below 2^31 keep the digit loops in integer arithmetic.
      const high = Math.floor(tsUs / 1e8);
      let low = tsUs - high * 1e8;
      if (high > 0) {
        let digits = 0;
        for (let t = high; t > 0; t = (t / 10) | 0) digits++;
        let t = high;
        for (let k = pos + digits - 1; k >= pos; k--) {
          buf[k] = 0x30 + (t % 10);
          t = (t / 10) | 0;
        }
        pos += digits;
        for (let k = pos + 7; k >= pos; k--) {
          buf[k] = 0x30 + (low % 10);
          low = (low / 10) | 0;
        }
        pos += 8;
      } else pos += buf.write(String(tsUs), pos, 'latin1');
    } else pos += buf.write(String(tsUs), pos, 'latin1');
    pos = putBytes(buf, pos, ID_KEY);
    ids.writeNext(buf, pos);
    pos += 36;
    buf[pos++] = 0x22; // '"'
    this.pos = pos;
  }

  finish(): Buffer {
    this.chunks.push(this.buf.subarray(0, this.pos));
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}
