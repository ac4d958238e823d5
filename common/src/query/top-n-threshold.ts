/**
 * A top-N over a worker's scan parts that first cuts every part to the rows whose first key can
 * still be among the first N (decision 0038). Why: over the parts one by one, each part's top-N
 * starts with no threshold and reads most of its key column; DuckDB on one native table reaches a
 * high threshold after a few row groups and skips the rest by their zone maps (top 10 of 10 M rows:
 * ~7 ms against ~45 ms over 20 segment parts). Given a good threshold, a plain filter on the key
 * column lets DuckDB skip the row groups (and whole segment files) whose statistics cannot pass it,
 * and the few rows left are cheap to order whole.
 *
 * How, with the first key's source column `k` (BranchTopN.source) and the limit N:
 *
 * 1. A guess G from the minima, maxima and row counts of `k` over the parts that are whole segment
 *    files (see `guess`), which DuckDB answers from each file's statistics without reading it.
 *    Unfiltered, those parts hold at least N rows at or beyond G, so the guess usually holds.
 * 2. The rows of every part at or beyond G (`k >= G`, and `k IS NULL` when nulls sort first) are
 *    counted; fewer than N: the guess failed. Skipped when G is one part's maximum that no other
 *    part reaches (`alone`, decision 0043): that is the bench's `top 10 by latencyMs`, where the
 *    count was the largest of the three statements, and ties at G (the case the count guards
 *    against) need another part at G.
 * 3. The statement runs over the union of those rows when there are few (at most UNION_MAX_ROWS:
 *    their other columns are read for those rows only); more, and it runs as before.
 * 4. When it answers N rows, that is the answer; otherwise the statement runs over the parts
 *    unfiltered (the path before this one).
 *
 * Exact whatever G is: a returned set of N rows all at or beyond G, from the statement over every
 * row at or beyond G, is the statement's answer over all rows, because every row left out has a
 * first key strictly behind G (and not null where nulls come first), so it sorts after each of
 * those N rows whatever the other keys say. The guess only decides how fast; nothing here trusts
 * a statistic for correctness.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { quoteIdentifier, quoteLiteral } from '../sql/quoting.js';
import type { ColumnBatch } from './column-batch.js';
import type { BranchTopN, FragmentStatement } from './fragment-exec.js';

/** Key types a threshold is written for: DuckDB keeps exact min/max statistics of them. */
const THRESHOLD_TYPES: Record<string, string> = { BIGINT: 'BIGINT', DOUBLE: 'DOUBLE', TIMESTAMP: 'TIMESTAMP' };

/**
 * Up to this many rows past the threshold are ordered as one union (their columns read for those
 * rows only). More (ties at the guess: a key with few values, such as a status code) and the
 * statement runs per part unfiltered: each part's own top-N then skips the rows equal to its
 * running N-th value, which an inclusive filter cannot (measured: per part with the filter was
 * 1.2–1.8× per part without it for `top 10 by status` at 10 M rows).
 */
const UNION_MAX_ROWS = 65_536n;

/**
 * Fewer whole segment files than this and the statement runs per part as before: a few parts are
 * a few plans, and their statistics make a weak guess. Measured at 1 M rows (two segments): the
 * guess statement alone made the top 10 1.15–1.9× slower (load ~10).
 */
const MIN_WHOLE_PARTS = 4;

/** Results are held until they are known to be whole: bounded like a materialized result. */
const MAX_LIMIT = 100_000n;

/** The scan parts of a relation, as runFragment receives them. */
export interface ScanParts {
  /** Each a parenthesised SELECT of the relation's columns; their UNION ALL is the relation. */
  branches: readonly string[];
  /** The branches that are whole segment files: min/max come from their statistics. */
  whole: readonly string[];
}

/** Runs the statement over a relation (fragment-exec's runStatement). */
export type RunStatement = (relation: string) => AsyncIterable<ColumnBatch>;

export interface ThresholdPlan {
  /** The source column as the relation spells it, quoted. */
  column: string;
  /** DuckDB type of the key. */
  type: string;
  topN: BranchTopN;
}

/** Whether a statement can be cut by a threshold over these parts, and how. */
export function thresholdPlan(
  statement: FragmentStatement,
  available: readonly string[],
  parts: ScanParts | undefined,
): ThresholdPlan | undefined {
  const topN = statement.branchTopN;
  if (!topN?.source || !parts || parts.whole.length < MIN_WHOLE_PARTS || parts.branches.length < 2) return undefined;
  if (topN.limit <= 0n || topN.limit > MAX_LIMIT) return undefined;
  const first = topN.keys[0];
  const keyType = first === undefined ? undefined : statement.columns[first.column]?.type;
  const type = keyType === undefined ? undefined : THRESHOLD_TYPES[keyType];
  // The source column must be read with the key's type, and exist in the relation (a column the
  // relation lacks reads as null: nothing to prune by).
  const source = statement.sourceColumns.find((c) => c.name.toLowerCase() === topN.source?.toLowerCase());
  // The relation's column the statement binds the source to (boundStatement: by lower case, the last).
  const actual = new Map(available.map((n) => [n.toLowerCase(), n] as const)).get(topN.source.toLowerCase());
  if (type === undefined || source === undefined || actual === undefined) return undefined;
  if (SOURCE_TYPES[source.type] !== type) return undefined;
  return { column: quoteIdentifier(actual), type, topN };
}

/** Query value types (value-types.ts) whose scan column reads as the key's DuckDB type. */
const SOURCE_TYPES: Record<string, string> = { long: 'BIGINT', real: 'DOUBLE', datetime: 'TIMESTAMP' };

/**
 * The guess G as DuckDB's text of the value, or undefined: no whole part has a non-null key, or
 * none has a row behind G (the filter would leave every row in). Two candidates, the more
 * selective taken (for a descending key, the larger):
 *
 * - by maxima: the N-th largest maximum of the whole parts (each has a row at its maximum);
 *   none when fewer than N parts have one.
 * - by minima and row counts: the largest minimum m such that the parts whose minimum is at least
 *   m hold N rows (all their rows are at least m). Good where parts hold disjoint ranges of the
 *   key (the timestamp: `top 100 by timestamp` reads the newest parts only).
 *
 * DuckDB answers max, min and count(*) of a whole segment file from its statistics. Null keys and
 * the statement's own filters can make a candidate wrong: then fewer than N rows pass and the
 * caller falls back (a guess is never trusted for the answer).
 *
 * `alone`: G is the maxima's candidate and exactly one whole part has its maximum at G. Then no
 * key value is shared by the parts' extremes at the cut, so the rows past G are the tails of the
 * N parts that reach it — not the pile of ties (a status code at every part's maximum) that
 * makes a filtered union slower than the plain path. Only a hint for speed (see runWithThreshold).
 */
async function guess(
  connection: DuckDBConnection,
  plan: ThresholdPlan,
  whole: readonly string[],
): Promise<{ g: string; alone: boolean } | undefined> {
  const first = plan.topN.keys[0]!;
  // For an ascending key, the same with the order reversed: minima first, maxima for the counts.
  const [near, far, dir, pick, behind] = first.descending
    ? ['max', 'min', 'DESC', 'greatest', '<']
    : ['min', 'max', 'ASC', 'least', '>'];
  const n = plan.topN.limit.toString();
  const extremes = whole
    .map((b) => `SELECT ${near}(${plan.column}) AS near, ${far}(${plan.column}) AS far, count(*) AS n FROM ${b}`)
    .join(' UNION ALL ');
  const sql = `WITH e AS (${extremes}),
    by_near AS (SELECT near AS v FROM e WHERE near IS NOT NULL ORDER BY near ${dir} LIMIT 1 OFFSET ${BigInt(n) - 1n}),
    by_far AS (SELECT far AS v FROM (SELECT far, sum(n) OVER (ORDER BY far ${dir} ROWS UNBOUNDED PRECEDING) AS rows FROM e WHERE far IS NOT NULL) WHERE rows >= ${n} ORDER BY far ${dir} LIMIT 1)
    SELECT CAST(g AS VARCHAR), (SELECT count(*) FROM e WHERE far IS NULL OR far ${behind} g),
      g IS NOT DISTINCT FROM (SELECT v FROM by_near) AND (SELECT count(*) FROM e WHERE near = g) = 1
    FROM (SELECT ${pick}((SELECT v FROM by_near), (SELECT v FROM by_far)) AS g)`;
  const [value, cut, alone] = (await connection.runAndReadAll(sql)).getRows()[0] ?? [];
  // No whole part has a row behind G: the filter would keep every row (keys of one small range,
  // two segments of random keys at 1 M rows), so it would only cost the count.
  if (value === null || value === undefined || BigInt(cut as bigint) === 0n) return undefined;
  return { g: String(value), alone: alone === true };
}

/** The condition a row's key must meet to stay: at or beyond G, or null where nulls sort first. */
function keepCondition(plan: ThresholdPlan, g: string): string {
  const first = plan.topN.keys[0]!;
  const at = `${plan.column} ${first.descending ? '>=' : '<='} CAST(${quoteLiteral(g)} AS ${plan.type})`;
  return first.nullsFirst ? `(${at} OR ${plan.column} IS NULL)` : at;
}

/**
 * The statement's answer over `parts` through a threshold (see the file comment), or undefined
 * when the threshold did not give it (the caller runs the statement over the parts unfiltered).
 */
export async function runWithThreshold(
  connection: DuckDBConnection,
  plan: ThresholdPlan,
  parts: ScanParts,
  run: RunStatement,
): Promise<ColumnBatch[] | undefined> {
  const guessed = await guess(connection, plan, parts.whole);
  if (guessed === undefined) return undefined;
  const keep = keepCondition(plan, guessed.g);
  const filtered = parts.branches.map((b) => `(SELECT * FROM ${b} WHERE ${keep})`);
  const union = `(${filtered.map((b) => `SELECT * FROM ${b}`).join(' UNION ALL ')})`;
  // Counted up to one past the bound: with many ties at G the count need not read them all. Not
  // when the guess stands alone at its maximum (see guess): the union's own answer then says
  // whether the guess held (N rows), and a failed guess costs that statement instead of the count.
  if (!guessed.alone) {
    const counted = (
      await connection.runAndReadAll(`SELECT count(*) FROM (SELECT 1 FROM ${union} LIMIT ${UNION_MAX_ROWS + 1n})`)
    ).getRows()[0]?.[0];
    const passing = BigInt(counted as bigint);
    if (passing < plan.topN.limit || passing > UNION_MAX_ROWS) return undefined;
  }
  const batches: ColumnBatch[] = [];
  let rows = 0n;
  for await (const batch of run(union)) {
    batches.push(batch);
    rows += BigInt(batch.rowCount);
  }
  return rows === plan.topN.limit ? batches : undefined;
}
