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

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * True when no line of newline-delimited JSON nests more than `limit` levels (the same measure:
 * `{"a":[1]}` is depth 2), read from the bytes without parsing: brackets count outside strings.
 * For text that is not valid JSON the answer means nothing, and the JSON reader refuses it anyway.
 * The worker checks the rows it is sent with it (a row object is one level above its values), as
 * any gRPC caller may send what the gateway would have refused.
 */
export function ndjsonDepthWithin(bytes: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) inString = true;
    else if (b === OPEN_BRACE || b === OPEN_BRACKET) {
      if (++depth > limit) return false;
    } else if (b === CLOSE_BRACE || b === CLOSE_BRACKET) depth--;
  }
  return true;
}
