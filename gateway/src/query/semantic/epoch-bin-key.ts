/**
 * Summarize keys grouped by their BIGINT microseconds (decision 0043). A datetime bin is
 * `make_timestamp(<floored epoch µs>)`; grouped as written, DuckDB turns every row's floor into a
 * TIMESTAMP before hashing it. Grouped by the floored BIGINT and turned into a TIMESTAMP once per
 * group afterwards, the same groups come out (make_timestamp is one-to-one) and a 5-minute-bin
 * summarize's statement costs ~15 % less (measured on 1.43 M rows, one thread).
 *
 * The expression that made a key's SQL says so here, keyed by that very Sql object: SQL made
 * from it (a bin plus an hour, a comparison) is another object, so it is grouped as written.
 */
import type { Sql } from '../sql/sql.js';

const epochMicros = new WeakMap<Sql, Sql>();

/** Marks `timestamp` (a TIMESTAMP) as `make_timestamp(micros)`; answers `timestamp`. */
export function withEpochMicros(timestamp: Sql, micros: Sql): Sql {
  epochMicros.set(timestamp, micros);
  return timestamp;
}

/** The BIGINT microseconds a TIMESTAMP key was made from, when withEpochMicros marked it. */
export function epochMicrosOf(timestamp: Sql): Sql | undefined {
  return epochMicros.get(timestamp);
}
