/**
 * The shape of one entry in the function registry, after Microsoft's Kusto.Language
 * (`Functions.cs`, `Aggregates.cs`): every scalar function and aggregate is declared once with
 * its signatures, its return type rule, the rule that names its result column, and how it runs.
 * The binder, the summarize partial/merge split, `/kusto/parse` completions and docs/query.md
 * all read these entries (see registry.ts).
 */
import type { KqlType } from '../../types.js';
import type { AggregateDef } from '../aggregates.js';
import type { Bound } from '../bound.js';
import type { ScalarFn } from './scalar-impl.js';

/**
 * How Kusto names the result column of a call the query does not name (checked against
 * Microsoft's analyzer in gateway/test/query/naming.test.ts):
 * - `none`: ColumnN;
 * - `first-argument`: the name of the first argument (`toint(y)` → `y`);
 * - `prefix`: `prefix_` and the first argument's name (`strlen(s)` → `strlen_s`, `avg(x)` →
 *   `avg_x`); for an aggregate whose argument has no name, just `prefix_` (`count()` → `count_`);
 * - `suffix`: the first argument's name and `_suffix` (`array_sort_asc(d)` → `d_sorted`);
 * - `fixed`: always the same name (`hll_merge(a, b)` → `hll_merged_result`);
 * - `own`: the aggregate names its several columns itself (arg_max, percentiles).
 */
export type NamingRule =
  | { kind: 'none' }
  | { kind: 'first-argument' }
  | { kind: 'prefix'; prefix: string }
  | { kind: 'suffix'; suffix: string }
  | { kind: 'fixed'; name: string }
  | { kind: 'own'; describe: string };

interface EntryBase {
  /** Lower-case name as written in queries. */
  name: string;
  /** Kusto-style signatures, for docs and completions: `strlen(source: string): long`. */
  signatures: string[];
  /** The return type rule in words, when the signatures alone do not say it. */
  returns: string;
  naming: NamingRule;
  /** A name the product (Logship) accepts but Kusto does not, or a spelling Kusto keeps for compatibility. */
  origin?: 'product' | 'alias';
}

export interface ScalarFunctionEntry extends EntryBase {
  kind: 'scalar';
  bind: ScalarFn;
  /**
   * A function with several result columns (series_stats, series_fit_line): allowed only as a
   * whole extend/project item, where `bag` binds the call to a property bag and each field
   * becomes a column (semantic/multi-column.ts); `bind` refuses it anywhere else.
   */
  columns?: SeveralColumns;
}

/** One result column of a several-column function: its field in the bag, and its type. */
export interface ResultField {
  name: string;
  type: KqlType;
  /** Where the value sits in the bag (a JSON path); `$.name` unless given. */
  path?: string;
}

/** How a several-column function's call becomes columns (semantic/multi-column.ts). */
export interface SeveralColumns {
  /**
   * The result columns: fixed, or from the call's bound arguments, where undefined means this
   * call gives one column and binds as an ordinary scalar (`array_sort_asc(a)` against
   * `array_sort_asc(a, b)`).
   */
  fields: readonly ResultField[] | ((args: readonly Bound[]) => readonly ResultField[] | undefined);
  bag: ScalarFn;
  /**
   * Column i named after argument i and `_suffix` (`array_sort_asc(a, b)` → `a_sorted`,
   * `b_sorted`; `array{i}_suffix` for an argument without a name), when the item does not name it;
   * `fn_arg_field` (arg: the first argument) unless given.
   */
  perArgumentSuffix?: string;
}

export interface AggregateEntry extends EntryBase {
  kind: 'aggregate';
  /** Binds a call into a partial state per worker and a merge at the gateway. */
  run: AggregateDef;
  /** Produces several columns, so it must stand alone in a summarize item. */
  multiColumn?: boolean;
  /** The value on empty input without keys, in words. */
  empty: string;
}

export type RegistryEntry = ScalarFunctionEntry | AggregateEntry;
