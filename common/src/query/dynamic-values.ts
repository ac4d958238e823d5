/**
 * Kusto's functions over dynamic arrays and bags that DuckDB's list functions express poorly
 * (issue 16, item 7), written over parsed JSON. Each takes and returns plain JSON values; `undefined`
 * means "not applicable" (the argument is not an array or bag) and becomes null. They run as JS
 * scalar functions (kusto-udfs.ts), the same code on every worker and in the gateway's merge.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const isBag = (v: unknown): v is { [key: string]: Json } => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The order of array_sort_asc/desc: numbers first (datetimes and timespans are text inside
 * dynamic values here, so they sort with the strings), then strings (ordinal), then everything
 * else in its original order; nulls last unless `nullsLast` is false. Descending reverses the
 * order within numbers and within strings only, so the groups keep their places.
 */
export function arraySort(array: unknown, descending: boolean, nullsLast: boolean): Json[] | undefined {
  const order = sortOrder(array, descending, nullsLast);
  return order?.map((i) => (array as Json[])[i] as Json);
}

/**
 * array_sort_asc/desc over several arrays: the first sorted, every other one reordered the same
 * way; an array whose length differs from the first's (or a non-array) gives null, and all are
 * null when the first is not an array (Kusto's documented rule).
 */
export function arraySortMany(arrays: unknown[], descending: boolean, nullsLast: boolean): (Json[] | null)[] {
  const order = sortOrder(arrays[0], descending, nullsLast);
  return arrays.map((a) => (order && Array.isArray(a) && a.length === order.length ? order.map((i) => a[i] as Json) : null));
}

/** The places of the array's elements in sorted order (a stable sort), or undefined for a non-array. */
function sortOrder(array: unknown, descending: boolean, nullsLast: boolean): number[] | undefined {
  if (!Array.isArray(array)) return undefined;
  const group = (v: Json): number => (v === null ? -1 : typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  const items = (array as Json[]).map((v, i) => ({ v, i }));
  const sign = descending ? -1 : 1;
  items.sort((a, b) => {
    const [ga, gb] = [group(a.v), group(b.v)];
    if (ga !== gb) {
      if (ga === -1) return nullsLast ? 1 : -1;
      if (gb === -1) return nullsLast ? -1 : 1;
      return ga - gb;
    }
    if (ga === 0) return sign * ((a.v as number) - (b.v as number)) || a.i - b.i;
    if (ga === 1) {
      const [x, y] = [a.v as string, b.v as string];
      return x === y ? a.i - b.i : sign * (x < y ? -1 : 1);
    }
    return a.i - b.i;
  });
  return items.map((x) => x.i);
}

/** array_split: the pieces [0..i1), [i1..i2), … [iN..length); negative indexes count from the end, out of range ones are clamped. */
export function arraySplit(array: unknown, indexes: unknown): Json[] | undefined {
  if (!Array.isArray(array)) return undefined;
  const list = Array.isArray(indexes) ? indexes : [indexes];
  if (!list.every((i) => typeof i === 'number' && Number.isInteger(i))) return undefined;
  const n = array.length;
  const cuts = (list as number[]).map((i) => Math.min(n, Math.max(0, i < 0 ? n + i : i)));
  const out: Json[] = [];
  let from = 0;
  for (const c of cuts) {
    const to = Math.max(from, c);
    out.push(array.slice(from, to) as Json[]);
    from = to;
  }
  out.push(array.slice(from) as Json[]);
  return out;
}

/** array_rotate_left (a negative count rotates right). */
export function arrayRotateLeft(array: unknown, count: number): Json[] | undefined {
  if (!Array.isArray(array)) return undefined;
  const n = array.length;
  if (n === 0) return [];
  const k = ((count % n) + n) % n;
  return [...array.slice(k), ...array.slice(0, k)] as Json[];
}

/** array_shift_left (a negative count shifts right); vacated places take `fill`. */
export function arrayShiftLeft(array: unknown, count: number, fill: Json): Json[] | undefined {
  if (!Array.isArray(array)) return undefined;
  const n = array.length;
  return Array.from({ length: n }, (_, i) => {
    const from = i + count;
    return from >= 0 && from < n ? (array[from] as Json) : fill;
  });
}

/**
 * array_iff: per element of the condition array, the element of `whenTrue` or `whenFalse` at the
 * same place (or the scalar itself); numbers are true when not 0; a condition that is neither a
 * bool nor a number, or a missing element, gives null.
 */
export function arrayIff(conditions: unknown, whenTrue: unknown, whenFalse: unknown): Json[] | undefined {
  if (!Array.isArray(conditions)) return undefined;
  const pick = (v: unknown, i: number): Json => (Array.isArray(v) ? ((v[i] as Json | undefined) ?? null) : (v as Json));
  return conditions.map((c, i) => {
    if (typeof c === 'boolean') return pick(c ? whenTrue : whenFalse, i);
    if (typeof c === 'number') return pick(c !== 0 ? whenTrue : whenFalse, i);
    return null;
  });
}

/** bag_merge: the keys of every bag; a key in several bags keeps the first bag's value. Non-bags are skipped. */
export function bagMerge(bags: unknown[]): Json | undefined {
  const out: { [key: string]: Json } = {};
  let any = false;
  for (const b of bags) {
    if (!isBag(b)) continue;
    any = true;
    for (const [k, v] of Object.entries(b)) if (!(k in out)) out[k] = v;
  }
  return any ? out : undefined;
}

/**
 * treepath: every path below the root, in the order met: `['key']` for a bag's key, `[0]` once
 * for all elements of an array (their paths merged), as Kusto enumerates them.
 */
export function treepath(value: unknown): Json[] | undefined {
  if (!isBag(value) && !Array.isArray(value)) return undefined;
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (p: string) => {
    if (!seen.has(p)) {
      seen.add(p);
      out.push(p);
    }
  };
  const walk = (v: unknown, path: string) => {
    if (Array.isArray(v)) {
      if (v.length === 0) return;
      add(`${path}[0]`);
      for (const e of v) walk(e, `${path}[0]`);
    } else if (isBag(v)) {
      for (const [k, e] of Object.entries(v)) {
        const p = `${path}['${k.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}']`;
        add(p);
        walk(e, p);
      }
    }
  };
  walk(value, '');
  return out;
}

/** JSON text with every bag's keys sorted, so that two bags with the same slots read the same. */
function canonical(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isBag(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k] as Json)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/**
 * `==` between two dynamic values: null when either is null (as for other types); otherwise equal
 * when they hold the same value — numbers by value (1 == 1.0), arrays element by element in order,
 * bags slot by slot whatever the order of their keys (Kusto keeps no key order).
 */
export function dynamicEquals(a: unknown, b: unknown): boolean | null {
  if (a === null || b === null || a === undefined || b === undefined) return null;
  return canonical(a as Json) === canonical(b as Json);
}
