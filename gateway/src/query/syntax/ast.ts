/**
 * The engine's own syntax tree. The parser adapter turns Microsoft's Kusto syntax tree into this
 * small, plain shape, so nothing past the adapter depends on the Kusto bridge objects. Every node
 * keeps its span into the query text for error positions.
 */
import type { Span } from '../errors.js';
import type { KqlType } from '../types.js';

/** A literal value as the engine computes with it (long as bigint, datetime as µs, timespan as ticks). */
export type LiteralValue =
  | { type: 'string'; value: string }
  | { type: 'long'; value: bigint | null }
  | { type: 'real'; value: number | null }
  /** A decimal as its DuckDB cell (common's decimal-cell.ts: value, precision and scale). */
  | { type: 'decimal'; value: string | null }
  | { type: 'bool'; value: boolean | null }
  /** `tick`: the 7th fractional digit (100 ns below the microsecond) when not 0 (decision 0036). */
  | { type: 'datetime'; value: bigint | null; tick?: number }
  | { type: 'timespan'; value: bigint | null }
  | { type: 'guid'; value: string | null }
  | { type: 'dynamic'; value: string | null }; // JSON text

export type Expr =
  | { kind: 'literal'; lit: LiteralValue; span: Span }
  | { kind: 'name'; name: string; span: Span }
  | { kind: 'member'; target: Expr; member: string; span: Span }
  | { kind: 'index'; target: Expr; index: Expr; span: Span }
  | { kind: 'call'; name: string; nameSpan: Span; args: Expr[]; span: Span }
  | { kind: 'binary'; op: string; opSpan: Span; left: Expr; right: Expr; span: Span }
  | { kind: 'unary'; op: '-' | '+'; operand: Expr; span: Span }
  | { kind: 'in'; op: string; opSpan: Span; left: Expr; list: Expr[]; span: Span }
  | { kind: 'between'; negated: boolean; left: Expr; low: Expr; high: Expr; span: Span }
  | { kind: 'star'; span: Span }
  /** `toscalar(T)`: the first column of T's first row (null without rows), computed before the query. */
  | { kind: 'toscalar'; tabular: TabularExpr; span: Span }
  /** `typeof(T)`, a type given as a function argument (`percentile_tdigest(t, 50, typeof(long))`). */
  | { kind: 'typeof'; type: KqlType; span: Span };

/** `name = expr` or a bare expression in project/extend/summarize lists. */
export interface NamedExpr {
  name?: string;
  nameSpan?: Span;
  /** `(a, b) = f(…)`: names for a function with several result columns (extend and project only). */
  names?: { name: string; span: Span }[];
  expr: Expr;
  span: Span;
}

export interface SortKey {
  expr: Expr;
  /** Undefined when the query leaves the direction to the default (descending). */
  descending?: boolean;
  nullsFirst?: boolean;
  span: Span;
}

export type ParsePatternPart =
  | { kind: 'text'; text: string; span: Span }
  /** `*`: skip any text (shortest). */
  | { kind: 'star'; span: Span }
  | { kind: 'column'; name: string; type?: KqlType; span: Span };

export type Operator =
  | { kind: 'where'; predicate: Expr; span: Span }
  | { kind: 'project'; items: NamedExpr[]; span: Span }
  | { kind: 'project-away'; names: { name: string; span: Span }[]; span: Span }
  | { kind: 'project-rename'; items: { name: string; nameSpan: Span; from: string; fromSpan: Span }[]; span: Span }
  | { kind: 'extend'; items: NamedExpr[]; span: Span }
  /** `serialize [name = expr, …]`: the rows get an order (the current one); items extend. */
  | { kind: 'serialize'; items: NamedExpr[]; span: Span }
  | { kind: 'summarize'; aggregates: NamedExpr[]; by: NamedExpr[]; span: Span }
  /**
   * `make-series agg [default = v], … on axis (from a to b step s | in range(a, b, s)) [by …]`.
   * `range` is the alternate form: its stop is inclusive.
   */
  | {
      kind: 'make-series';
      aggregates: { item: NamedExpr; defaultValue?: Expr }[];
      axis: Expr;
      from?: Expr;
      to?: Expr;
      step: Expr;
      range?: boolean;
      by: NamedExpr[];
      span: Span;
    }
  /** `count [as Name]`. */
  | { kind: 'count'; name?: string; span: Span }
  /** Column names or wildcard patterns (`a*`). */
  | { kind: 'project-keep'; patterns: { pattern: string; span: Span }[]; span: Span }
  | {
      kind: 'project-reorder';
      patterns: { pattern: string; order?: 'asc' | 'desc' | 'granny-asc' | 'granny-desc'; span: Span }[];
      span: Span;
    }
  | { kind: 'getschema'; span: Span }
  /** `sample N` and `sample-distinct N of e`: N random rows (distinct values of e). */
  | { kind: 'sample'; count: Expr; of?: Expr; span: Span }
  | { kind: 'distinct'; items: NamedExpr[]; span: Span }
  | { kind: 'take'; count: Expr; span: Span }
  | { kind: 'sort'; keys: SortKey[]; span: Span }
  | { kind: 'top'; count: Expr; key: SortKey; span: Span }
  | { kind: 'union'; tables: TabularExpr[]; options?: UnionOptions; span: Span }
  /** `parse` and `parse-where` (`where`: rows that do not parse are dropped). */
  | {
      kind: 'parse';
      mode: 'simple' | 'regex' | 'relaxed';
      /** `flags=` of kind=regex: RE2 flags (i, m, s, U) applied to the whole pattern. */
      flags?: string;
      where?: boolean;
      source: Expr;
      parts: ParsePatternPart[];
      span: Span;
    }
  /** `parse-kv source as (key: type, …) with (…)` (semantic/parse-kv.ts). */
  | {
      kind: 'parse-kv';
      source: Expr;
      keys: { name: string; type: KqlType; span: Span }[];
      options: ParseKvSpec;
      span: Span;
    }
  /** `as Name`: the input, also known as Name for the rest of the query. */
  | { kind: 'as'; name: string; nameSpan: Span; span: Span }
  /** `invoke f(args)`: f called with the input as its first (tabular) argument. */
  | { kind: 'invoke'; call: CallSource; span: Span }
  | {
      kind: 'mv-expand';
      items: { item: NamedExpr; toType?: KqlType; toTypeSpan?: Span }[];
      bagExpansion: 'bag' | 'array';
      itemIndex?: string;
      limit?: Expr;
      span: Span;
    }
  /** `evaluate plugin(args) [: (schema)]` (bag_unpack, pivot, narrow). */
  | {
      kind: 'evaluate';
      plugin: string;
      pluginSpan: Span;
      args: Expr[];
      /** `name = value` arguments (bag_unpack's columnsConflict=, ignoredProperties=, …). */
      named: { name: string; expr: Expr; span: Span }[];
      schema?: OutputSchema;
      span: Span;
    }
  /** `top-nested [N] of e [with others = v] by agg [asc|desc], …`: one level per clause. */
  | { kind: 'top-nested'; levels: TopNestedLevel[]; span: Span }
  /** `[T |] search [kind=case_sensitive] [in (T1, …)] predicate`. */
  | SearchSpec
  /**
   * `partition [hints] by Column (operators)` or `{ query over $partition }`: the subquery runs on
   * the rows of each value of the column; the results are unioned.
   */
  | {
      kind: 'partition';
      key: { name: string; span: Span };
      subquery: { kind: 'operators'; operators: Operator[] } | { kind: 'query'; tabular: TabularExpr };
      span: Span;
    }
  /** `mv-apply [with_itemindex=I] [Name =] e [to typeof(T)], … [limit N] on (operators)`. */
  | {
      kind: 'mv-apply';
      items: { item: NamedExpr; toType?: KqlType; toTypeSpan?: Span }[];
      itemIndex?: string;
      limit?: Expr;
      subquery: Operator[];
      span: Span;
    }
  /** `top-hitters N of e [by weight]`. */
  | { kind: 'top-hitters'; count: Expr; of: Expr; by?: Expr; span: Span }
  | { kind: 'join'; joinKind: JoinKind; right: TabularExpr; on: JoinCondition[]; span: Span }
  /** `lookup`: a join whose right key columns are not repeated (kind leftouter or inner). */
  | { kind: 'lookup'; joinKind: 'leftouter' | 'inner'; right: TabularExpr; on: JoinCondition[]; span: Span };

/** `search`: as an operator over its input, or as a source over tables (`in (…)`, else all). */
export interface SearchSpec {
  kind: 'search';
  caseSensitive: boolean;
  /** `in (T1, App*)`; absent: every table. Only in the source form. */
  tables?: TabularExpr[];
  predicate: Expr;
  span: Span;
}

/** A plugin's declared output: `(*, name: type, …)`; `star` keeps the input's columns first. */
export interface OutputSchema {
  star: boolean;
  columns: { name: string; type: KqlType; span: Span }[];
  span: Span;
}

export interface TopNestedLevel {
  /** Absent: every value. */
  count?: Expr;
  of: NamedExpr;
  /** `with others = v`: one more row per level aggregating the values left out, keyed v. */
  others?: Expr;
  by: NamedExpr;
  descending: boolean;
  span: Span;
}

export type JoinKind =
  | 'innerunique'
  | 'inner'
  | 'leftouter'
  | 'rightouter'
  | 'fullouter'
  | 'leftanti'
  | 'rightanti'
  | 'leftsemi'
  | 'rightsemi';

/** `on Key` (the same name on both sides) or `on $left.a == $right.b`. */
export interface JoinCondition {
  left: string;
  right: string;
  span: Span;
}

/** A call in tabular position: `materialize(T)`, a let-declared tabular function `f(T, 3)`. */
export interface CallSource {
  kind: 'call';
  name: string;
  nameSpan: Span;
  args: Value[];
  span: Span;
}

/** `union kind=inner|outer withsource=Name isfuzzy=true|false`. */
export interface UnionOptions {
  kind?: 'inner' | 'outer';
  withsource?: string;
  isfuzzy?: boolean;
}

export type Source =
  /** `pattern`: a wildcard name (`App*`) that stands for every table it matches. */
  | { kind: 'table'; name: string; pattern?: boolean; span: Span }
  | { kind: 'datatable'; columns: { name: string; type: KqlType; span: Span }[]; values: Expr[]; span: Span }
  | { kind: 'range'; column: string; from: Expr; to: Expr; step: Expr; span: Span }
  | { kind: 'print'; items: NamedExpr[]; span: Span }
  | { kind: 'union'; tables: TabularExpr[]; options?: UnionOptions; span: Span }
  | { kind: 'nested'; tabular: TabularExpr; span: Span }
  | SearchSpec
  | CallSource;

export interface TabularExpr {
  source: Source;
  operators: Operator[];
  span: Span;
}

/**
 * A let value or a function argument, which may be scalar or tabular. `name` is a bare (possibly
 * dotted) name: a table when it names one, otherwise a scalar; `call` is a function call, tabular
 * when it calls a tabular function (or materialize), otherwise scalar (`expr` is undefined when
 * the call only reads as tabular). The binder decides.
 */
export type Value =
  | { kind: 'scalar'; expr: Expr }
  | { kind: 'tabular'; tabular: TabularExpr }
  | { kind: 'name'; expr: Expr; tabular: TabularExpr }
  | { kind: 'call'; expr?: Expr; tabular: TabularExpr };

/** A parameter of a let-declared function: scalar with a type, or tabular with a schema. */
export interface FunctionParam {
  name: string;
  span: Span;
  /** A scalar type, or `tabular` for `T:(col:type, …)` and `T:(*)`. */
  type: KqlType | 'tabular';
  /** The columns a tabular argument must have (empty for `(*)`). */
  columns?: { name: string; type: KqlType; span: Span }[];
  defaultValue?: Expr;
}

/** `(params) { let …; result }`. */
export interface FunctionDecl {
  params: FunctionParam[];
  lets: LetStatement[];
  result: Value;
  span: Span;
}

export interface LetStatement {
  name: string;
  nameSpan: Span;
  value: Value | { kind: 'function'; decl: FunctionDecl };
  span: Span;
}

/** A parameter of `declare query_parameters(…)`, filled from the request's variables. */
export interface QueryParameter {
  name: string;
  span: Span;
  type: KqlType;
  defaultValue?: Expr;
}

export interface RenderHint {
  chartType: string;
  options?: Record<string, unknown>;
}

export interface QueryAst {
  /** `declare query_parameters(…)`, in order. */
  parameters?: QueryParameter[];
  lets: LetStatement[];
  body: TabularExpr;
  render?: RenderHint;
}

/** The `with (…)` options of parse-kv: delimiters, quotes, escapes and greedy, or a regex. */
export interface ParseKvSpec {
  pairDelimiter?: string;
  kvDelimiter?: string;
  quotes: string[];
  escapes: string[];
  greedy: boolean;
  /** Two capture groups: the key, then the value. */
  regex?: string;
}
