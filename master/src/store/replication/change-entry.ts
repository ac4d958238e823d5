import { gunzipSync, gzipSync } from 'node:zlib';
import type { RecordedStatement, SqlParam } from '../relational-store.js';

/** One committed write transaction of the leader, as the database log carries it. */
export interface ChangeEntry {
  /** Fencing term of the leader that committed it (for operators reading the log). */
  term: number;
  statements: RecordedStatement[];
}

/** Entries above this many bytes of JSON are gzipped (etcd refuses values above ~1.5 MB). */
const COMPRESS_ABOVE = 16 * 1024;
const JSON_TAG = 0x6a; // 'j'
const GZIP_TAG = 0x7a; // 'z'

/**
 * Parameters keep their JS type through JSON, because DuckDB binds by it (a bigint as BIGINT, a
 * number as DOUBLE/INTEGER): bigints and the numbers JSON cannot carry are tagged objects.
 */
function encodeParam(p: SqlParam): unknown {
  if (typeof p === 'bigint') return { $bigint: p.toString() };
  if (typeof p === 'number' && !Number.isFinite(p)) return { $number: String(p) };
  return p;
}

function decodeParam(p: unknown): SqlParam {
  if (p !== null && typeof p === 'object') {
    const o = p as { $bigint?: string; $number?: string };
    if (o.$bigint !== undefined) return BigInt(o.$bigint);
    if (o.$number !== undefined) return Number(o.$number);
    throw new Error(`unknown parameter in a database log entry: ${JSON.stringify(p)}`);
  }
  return p as SqlParam;
}

export function encodeChangeEntry(entry: ChangeEntry): Buffer {
  const json = Buffer.from(
    JSON.stringify({
      term: entry.term,
      statements: entry.statements.map((s) => ({ sql: s.sql, params: s.params.map(encodeParam) })),
    }),
  );
  if (json.length <= COMPRESS_ABOVE) return Buffer.concat([Buffer.from([JSON_TAG]), json]);
  return Buffer.concat([Buffer.from([GZIP_TAG]), gzipSync(json)]);
}

export function decodeChangeEntry(value: Buffer): ChangeEntry {
  const tag = value[0];
  const body = value.subarray(1);
  const json = tag === GZIP_TAG ? gunzipSync(body) : tag === JSON_TAG ? body : undefined;
  if (!json) throw new Error(`a database log entry has an unknown format (first byte ${tag})`);
  const raw = JSON.parse(json.toString()) as { term: number; statements: { sql: string; params: unknown[] }[] };
  return { term: raw.term, statements: raw.statements.map((s) => ({ sql: s.sql, params: s.params.map(decodeParam) })) };
}
