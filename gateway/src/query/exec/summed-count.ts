/**
 * The merge of a count over several workers, done in JS: each worker answers one BIGINT (its
 * count) and the merge statement only sums them. Going through the merge database cost a DuckDB
 * statement per query for two numbers, 1–3 ms of a ~10 ms two-worker count on this machine (its
 * hand-offs between threads weigh most under load; docs/decisions/0046-fixed-costs-on-one-segment.md).
 *
 * Matched as text, like the workers' bare count (common/src/query/bare-count.ts): the exact merge
 * the planner writes for `count` / `summarize count()` over one fragment, whatever the fragment
 * filters; computed here with that text's meaning (the sum of the non-null values of the
 * fragment's one BIGINT column, 0 for none, as a BIGINT; one row, the limit being at least 1). A
 * planner writing another shape loses the shortcut, never the right answer
 * (gateway/test/query/summed-count.test.ts keeps the two in step).
 */
import { StrataError } from '@strata/common';
import type { FragmentSpec, QueryPlan } from '../plan/planner.js';
import type { FragmentRunner } from './executor.js';

const SUM_MERGE =
  /^WITH "s0" AS \(SELECT "(c\d+)" AS "\1" FROM "f0"\), "s1" AS \(SELECT CAST\(coalesce\(sum\("\1"\), 0\) AS BIGINT\) AS "(c\d+)" FROM "s0"\), "s2" AS \(SELECT "\2" AS "(c\d+)" FROM "s1"\), "s3" AS \(SELECT \* FROM "s2" LIMIT \$1\) SELECT "\3" AS "\3" FROM "s3"$/;

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** The plan's one fragment when its merge only sums that fragment's one BIGINT column, else undefined. */
export function summedCountFragment(plan: QueryPlan): FragmentSpec | undefined {
  if (plan.fragments.length !== 1 || plan.columns.length !== 1) return undefined;
  const match = SUM_MERGE.exec(plan.merge.text);
  if (!match) return undefined;
  const [limit, ...more] = plan.merge.params;
  if (more.length > 0 || limit?.type !== 'BIGINT' || typeof limit.value !== 'bigint' || limit.value < 1n) return undefined;
  const fragment = plan.fragments[0]!;
  const [column, ...others] = fragment.columns;
  if (fragment.index !== 0 || others.length > 0 || column?.id !== match[1] || column.type !== 'BIGINT') return undefined;
  if (plan.columns[0]!.id !== match[3]) return undefined;
  return fragment;
}

/** The sum of the workers' counts (one column of one row), or undefined when the plan is no such merge. */
export async function summedCount(
  plan: QueryPlan,
  runner: FragmentRunner,
  signal: AbortSignal,
): Promise<unknown[][] | undefined> {
  const fragment = summedCountFragment(plan);
  if (!fragment) return undefined;
  let sum = 0n;
  for await (const batch of runner(fragment, signal)) {
    signal.throwIfAborted();
    const values = batch.columns[0] as unknown[];
    for (let r = 0; r < batch.rowCount; r++) {
      const v = values[r];
      if (v === null || v === undefined) continue;
      sum += typeof v === 'bigint' ? v : BigInt(v as number);
    }
  }
  // As the merge's CAST to BIGINT would refuse it.
  if (sum < INT64_MIN || sum > INT64_MAX)
    throw new StrataError('invalid', 'The sum of the counts is out of the range of a long.');
  return [[sum]];
}
