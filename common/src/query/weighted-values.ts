/**
 * The state behind percentilew/percentilesw and tdigest (decision 0021): a list of
 * [value, weight] pairs, sorted by value, each value once, weights summed. It is exact, so the
 * answer does not depend on how the rows were spread over workers or in which order partial
 * states were merged (a real t-digest's centroids do depend on it), and a percentile read from it
 * is the same nearest-rank percentile that `percentile()` gives when every weight is 1.
 * Values are numbers: longs and reals as themselves, datetimes as microseconds since the epoch,
 * timespans as ticks (the engine converts at the boundary).
 */

export type WeightedValues = [number, number][];

/**
 * Parses a JSON list of [value, weight] pairs into the sorted, merged form. Pairs whose value is
 * not a finite number or whose weight is not a positive finite number are left out (Kusto skips
 * null values and weights); text that is not such a list gives the empty list.
 */
export function compactWeighted(json: string): WeightedValues {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  const pairs: [number, number][] = [];
  for (const item of parsed) {
    if (!Array.isArray(item) || item.length !== 2) continue;
    const [v, w] = item as unknown[];
    if (typeof v !== 'number' || !Number.isFinite(v) || typeof w !== 'number' || !Number.isFinite(w) || w <= 0) continue;
    pairs.push([v, w]);
  }
  pairs.sort((a, b) => a[0] - b[0]);
  const out: WeightedValues = [];
  for (const [v, w] of pairs) {
    const last = out[out.length - 1];
    if (last && last[0] === v) last[1] += w;
    else out.push([v, w]);
  }
  return out;
}

/**
 * The nearest-rank percentile of the values, each counted `weight` times: the first value whose
 * running weight reaches rank = max(1, ceil(p / 100 × total weight)) — the rule `percentile()`
 * applies to a sorted list (rank computed the same way, so the two agree when weights are 1).
 * Null for no values or a percentile outside 0..100.
 */
export function weightedPercentile(values: WeightedValues, p: number): number | null {
  if (values.length === 0 || !(p >= 0 && p <= 100)) return null;
  const total = values.reduce((sum, [, w]) => sum + w, 0);
  const rank = Math.max(1, Math.ceil((p / 100) * total));
  let running = 0;
  for (const [v, w] of values) {
    running += w;
    if (running >= rank) return v;
  }
  return (values[values.length - 1] as [number, number])[0];
}
