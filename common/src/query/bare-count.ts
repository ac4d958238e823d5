import { FRAGMENT_SOURCE, type FragmentStatement } from './fragment-exec.js';

/**
 * The exact text of the fragment a planner writes for the number of rows of its source and
 * nothing else (`T | count`, `T | summarize count()`, and either with `where` conditions on the
 * time column only, when those travel as scan bounds: decision 0018). Matched as text, so it can
 * only recognise a statement whose meaning is that count: a planner writing another shape loses
 * the shortcut, never the right answer (gateway/test/query/bare-count-shape.test.ts checks the
 * planner still writes it).
 */
const COUNT_CTES = `WITH "s0" AS \\(SELECT NULL AS "__none" FROM "${FRAGMENT_SOURCE}"\\), "s1" AS \\(SELECT count\\(\\*\\) AS "(c\\d+)" FROM "s0"\\)`;
/** The fragment of a multi-worker plan: the count. */
const BARE_COUNT = new RegExp(`^${COUNT_CTES} SELECT "\\1" AS "\\1" FROM "s1"$`);
/**
 * The whole query on one worker (the planner's single-worker statement): the merge's sum over the
 * one count row and the result limit ($1, checked to be at least 1) — still that one count.
 */
const BARE_COUNT_SINGLE = new RegExp(
  `^${COUNT_CTES}, "s2" AS \\(SELECT CAST\\(coalesce\\(sum\\("\\1"\\), 0\\) AS BIGINT\\) AS "(c\\d+)" FROM "s1"\\), "s3" AS \\(SELECT "\\2" AS "(c\\d+)" FROM "s2"\\), "s4" AS \\(SELECT \\* FROM "s3" LIMIT \\$1\\) SELECT "\\3" AS "\\3" FROM "s4"$`,
);

/**
 * Whether a fragment answers exactly one BIGINT: the count of the rows its source holds. A worker
 * may then answer it from its catalog's row counts for the segments wholly inside the scan's
 * range, counting only the rest (docs/decisions/0025-segment-format.md).
 */
export function isBareCount(statement: FragmentStatement): boolean {
  if (statement.columns.length !== 1 || statement.columns[0]!.type !== 'BIGINT' || statement.branchTopN !== undefined)
    return false;
  if (statement.params.length === 0) return BARE_COUNT.test(statement.sql);
  const [limit, ...more] = statement.params;
  return (
    more.length === 0 &&
    limit!.type === 'BIGINT' &&
    typeof limit!.value === 'bigint' &&
    limit!.value >= 1n &&
    BARE_COUNT_SINGLE.test(statement.sql)
  );
}
