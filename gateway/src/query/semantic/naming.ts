/**
 * Kusto's rules for naming result columns that the query does not name. Verified against
 * Microsoft's analyzer in the tests (test/query/naming.test.ts):
 * - a column reference keeps its name; `d.a.b` → `d_a_b`, `d["c"]` → `d_c`, `d[0]` → `d_0`;
 * - a function call is named by its registry declaration's naming rule: the first argument's
 *   name (`bin(timestamp, 1h)` → `timestamp`), `prefix_argument` (`strlen(s)` → `strlen_s`),
 *   `argument_suffix` (`array_sort_asc(d)` → `d_sorted`), a fixed name (`hll_merged_result`), or none;
 * - aggregates are `prefix_argument` (`avg_latencyMs`, `count_`, `percentile_x_95`);
 * - what has no name becomes `Column1`, `Column2` …; clashes get a number suffix (`x1`, `count_1`).
 */
import type { Expr } from '../syntax/ast.js';
import { SCALAR_FUNCTIONS } from './registry/scalar-functions.js';

/** Each scalar function's naming rule, from its declaration in the registry. */
const SCALAR_NAMING = new Map(SCALAR_FUNCTIONS.map((f) => [f.name, f.naming]));

/** The several-column functions' column rules, from the registry. */
const SEVERAL_COLUMNS = new Map(SCALAR_FUNCTIONS.flatMap((f) => (f.columns ? [[f.name, f.columns] as const] : [])));

/**
 * The name of column i of a several-column call the query does not name: argument i and the
 * suffix (`a_sorted`, `array{i}_sorted` for an argument without a name) for per-argument columns,
 * else `fn_arg_field` with the first argument's name (empty for an expression).
 */
export function severalColumnName(call: Extract<Expr, { kind: 'call' }>, i: number, field: string): string {
  const name = call.name.toLowerCase();
  const suffix = SEVERAL_COLUMNS.get(name)?.perArgumentSuffix;
  if (suffix !== undefined) {
    const arg = call.args[i];
    return `${(arg && expressionName(arg)) ?? `array${i}`}_${suffix}`;
  }
  const first = call.args[0];
  return `${name}_${first?.kind === 'name' ? first.name : ''}_${field}`;
}

/** The name an expression carries, or undefined when Kusto would call it ColumnN. */
export function expressionName(expr: Expr): string | undefined {
  switch (expr.kind) {
    case 'name':
      return expr.name;
    case 'member': {
      const base = expressionName(expr.target);
      return base === undefined ? undefined : `${base}_${expr.member}`;
    }
    case 'index': {
      // A column picked from a several-column call (`array_sort_asc(a, b)[1]` → `b_sorted`).
      if (expr.target.kind === 'call' && expr.index.kind === 'literal' && expr.index.lit.type === 'long') {
        const columns = SEVERAL_COLUMNS.get(expr.target.name.toLowerCase());
        const i = expr.index.lit.value;
        if (columns && typeof i === 'bigint' && i >= 0n) {
          const fields = typeof columns.fields === 'function' ? undefined : columns.fields;
          return severalColumnName(expr.target, Number(i), fields?.[Number(i)]?.name ?? '');
        }
      }
      const base = expressionName(expr.target);
      if (base === undefined || expr.index.kind !== 'literal') return undefined;
      const lit = expr.index.lit;
      if (lit.type === 'string') return `${base}_${lit.value}`;
      if (lit.type === 'long' && lit.value !== null) return `${base}_${lit.value}`;
      return undefined;
    }
    case 'call': {
      const name = expr.name.toLowerCase();
      const first = expr.args[0];
      const rule = SCALAR_NAMING.get(name);
      if (rule?.kind === 'fixed') return rule.name;
      if (first === undefined) return undefined;
      if (rule?.kind === 'suffix') {
        const arg = expressionName(first);
        return arg === undefined ? undefined : `${arg}_${rule.suffix}`;
      }
      if (rule?.kind === 'first-argument') return expressionName(first);
      if (rule?.kind === 'prefix') {
        const arg = expressionName(first);
        return arg === undefined ? undefined : `${rule.prefix}_${arg}`;
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

/** Kusto formats percentile values into names with `.` replaced by `_` (`percentile_x_99_9`). */
export function numberForName(value: number | bigint | string): string {
  return String(value).replaceAll('.', '_').replaceAll('-', '_');
}

/**
 * Hands out result names within one operator: explicit names must be unique, generated names get
 * the first free numeric suffix, unnamed expressions become ColumnN.
 */
export class NameAllocator {
  private readonly used: Set<string>;

  constructor(existing: Iterable<string> = []) {
    this.used = new Set(existing);
  }

  has(name: string): boolean {
    return this.used.has(name);
  }

  /** Reserves a name exactly; false when it is taken. */
  claim(name: string): boolean {
    if (this.used.has(name)) return false;
    this.used.add(name);
    return true;
  }

  /** A derived name, suffixed with 1, 2 … while taken. */
  derive(base: string): string {
    if (this.claim(base)) return base;
    for (let i = 1; ; i++) {
      if (this.claim(`${base}${i}`)) return `${base}${i}`;
    }
  }

  /** The next free ColumnN. */
  column(): string {
    for (let i = 1; ; i++) {
      if (this.claim(`Column${i}`)) return `Column${i}`;
    }
  }

  release(name: string): void {
    this.used.delete(name);
  }
}
