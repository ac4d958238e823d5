/**
 * How deeply a parsed JSON value nests. JSON.parse accepts any depth, but JSON.stringify and
 * every recursive walk over the value overflow the stack somewhere past ~5,000 levels (a 10,000-
 * level inflow `data` answered 500). The walk here is iterative, so measuring cannot overflow.
 */

/** Nesting limit of request bodies and of inflow field values (docs/api.md). */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests at most `limit` levels: a scalar is depth 0, `{}`/`[]` depth 1,
 * `{"a":[1]}` depth 2. Stops at the first container beyond the limit.
 */
export function jsonDepthWithin(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return true;
  const stack: { v: object; depth: number }[] = [{ v: value, depth: 1 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop() as { v: object; depth: number };
    if (depth > limit) return false;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const c of children) if (typeof c === 'object' && c !== null) stack.push({ v: c, depth: depth + 1 });
  }
  return true;
}
