/**
 * The dynamic values that `hll()` and `tdigest()` return and that `hll_merge`, `dcount_hll`,
 * `tdigest_merge` and `percentile_tdigest` read (decision 0021). Kusto calls both values opaque;
 * here they are exact, so that hll → hll_merge → dcount_hll gives what dcount() gives and
 * tdigest → tdigest_merge → percentile_tdigest what percentile() gives, on one worker or many:
 *
 *   {"sketch":"hll","v":1,"values":[…]}                the distinct values, sorted by JSON text
 *   {"sketch":"tdigest","v":1,"type":"long","values":[[value, weight], …]}
 *                                                      sorted by value, each value once
 *                                                      (common/src/query/weighted-values.ts)
 *
 * "v" is the format version (1), so that a later format can be told apart.
 * A dynamic value of any other shape is not a sketch: readers give null for it (merges skip it).
 */
import { dbl, join, type Sql, sql, str } from '../sql/sql.js';
import type { KqlType } from '../types.js';
import { type Bound, convert } from './bound.js';

/** The value types a tdigest holds (the numbers in it are converted at this boundary). */
export const TDIGEST_TYPES = ['long', 'real', 'datetime', 'timespan'] as const;
export type TdigestType = (typeof TDIGEST_TYPES)[number];

export const isHll = (v: Sql): Sql =>
  sql`coalesce(json_extract_string(${v}, '$.sketch') = 'hll' AND json_type(${v}, '$.values') = 'ARRAY', false)`;

export const isTdigest = (v: Sql): Sql =>
  sql`coalesce(json_extract_string(${v}, '$.sketch') = 'tdigest' AND json_type(${v}, '$.values') = 'ARRAY', false)`;

/** The values of an hll, as a JSON[] list (null for a non-hll). */
export const hllValues = (v: Sql): Sql => sql`(CASE WHEN ${isHll(v)} THEN CAST(json_extract(${v}, '$.values') AS JSON[]) END)`;

/** An hll from a JSON[] list of values (duplicates removed, sorted so the value is canonical). */
export const hllFromList = (l: Sql): Sql =>
  sql`json_object('sketch', 'hll', 'v', 1, 'values', coalesce(to_json(list_sort(list_distinct(${l}))), CAST('[]' AS JSON)))`;

/** The [value, weight] pairs of a tdigest, as JSON text (null for a non-tdigest). */
export const tdigestValuesText = (v: Sql): Sql =>
  sql`(CASE WHEN ${isTdigest(v)} THEN CAST(json_extract(${v}, '$.values') AS VARCHAR) END)`;

/** A tdigest from compacted pair text and its value type (a VARCHAR expression). */
export const tdigestFrom = (pairsText: Sql, type: Sql): Sql =>
  sql`json_object('sketch', 'tdigest', 'v', 1, 'type', ${type}, 'values', CAST(coalesce(${pairsText}, '[]') AS JSON))`;

/** A value as the number a tdigest holds: datetimes as microseconds since the epoch. */
export function tdigestNumber(x: Bound): Sql {
  return x.type === 'datetime' ? sql`epoch_us(${x.sql})` : x.sql;
}

/** The number a tdigest holds, back as a value of `type`. */
export function fromTdigestNumber(n: Sql, type: TdigestType): Sql {
  switch (type) {
    case 'long':
    case 'timespan':
      return sql`TRY_CAST(round(${n}) AS BIGINT)`;
    case 'real':
      return n;
    case 'datetime':
      return sql`make_timestamp(TRY_CAST(round(${n}) AS BIGINT))`;
  }
}

/** The nearest-rank weighted percentile of a pair list (JSON text), as the number held. */
export const weightedPercentileNumber = (pairsText: Sql, p: number): Sql => sql`kql_weighted_percentile(${pairsText}, ${dbl(p)})`;

/**
 * The percentile as a dynamic value, typed by the tdigest's own "type" (Kusto's
 * percentile_tdigest without a type argument returns dynamic): a number for long and real, Kusto's
 * text for datetime and timespan.
 */
export function percentileAsDynamic(digest: Sql, p: number, span: Bound['span']): Sql {
  const n = weightedPercentileNumber(tdigestValuesText(digest), p);
  const branches = TDIGEST_TYPES.map((t) => {
    const typed: Bound = { type: t as KqlType, sql: fromTdigestNumber(n, t), span };
    return sql`WHEN ${str(t)} THEN ${convert(typed, 'dynamic', 'percentile_tdigest').sql}`;
  });
  return sql`(CASE json_extract_string(${digest}, '$.type') ${join(branches, ' ')} END)`;
}
