/**
 * Binds a parsed query to the caller's schema catalog and produces the relational form (`Rel`):
 * one node per pipeline step, so the order of steps is kept, with every expression already SQL.
 * Result column names and types follow Kusto (see naming.ts); the row cap is applied as a final
 * limit of cap + 1 rows so that truncation can be reported.
 */

import { queryError, type Span } from '../errors.js';
import { ident, int, join, readsColumns, type Sql, sql, str, ts } from '../sql/sql.js';
import type {
  CallSource,
  Expr,
  FunctionDecl,
  JoinCondition,
  JoinKind,
  LetStatement,
  LiteralValue,
  NamedExpr,
  Operator,
  QueryAst,
  QueryParameter,
  SearchSpec,
  Source,
  TabularExpr,
  UnionOptions,
  Value,
} from '../syntax/ast.js';
import type { CatalogTable, KqlType, SchemaCatalog } from '../types.js';
import { AggregateCollector } from './aggregate-collector.js';
import { type Bound, coerce, constant, convert, literalSql, nullOf, strSql } from './bound.js';
import { BUILTIN_TABLES } from './builtin-tables.js';
import { columnMarks } from './column-marks.js';
import { refusedTicksUse, tickDatetime, ticksFlag, ticksOfMicros, ticksSql } from './datetime-ticks.js';
import { decimalKey } from './decimal-operators.js';
import { ExprBinder, type ExprContext, escapeRegex, identOf } from './expr-binder.js';
import { filterTermHints } from './filter-term-hints.js';
import { INT32_SCHEMA, int32Flag } from './int-columns.js';
import { bindMakeSeries } from './make-series.js';
import { expandMultiColumn } from './multi-column.js';
import { bindMvApply } from './mv-apply.js';
import { expressionName, NameAllocator } from './naming.js';
import { bindParseKv } from './parse-kv.js';
import { MAX_PHASES, NeedsAnswer, type PhaseAnswer } from './phases.js';
import { bindEvaluate } from './plugins.js';
import { parameterLiteral } from './query-parameters.js';
import { aggregateFunction, scalarFunction } from './registry/registry.js';
import {
  type Column,
  IdAllocator,
  type Output,
  type Rel,
  ROW_ORDER,
  relColumns,
  type SortSpec,
  type StorageTime,
  type TimeBounds,
} from './rel.js';
import { type ScalarQuery, scalarQuery } from './scalar-query.js';
import { declare, EMPTY_SCOPE, type FunctionBinding, type Scope, type TabularBinding } from './scope.js';
import { searchPredicate } from './search.js';
import { foldableColumns } from './term-fold-subject.js';
import { bindTopNested } from './top-nested.js';

export interface BindOptions {
  /** The query's `now()`, µs since the Unix epoch. */
  nowUs: bigint;
  /** The column whose filters prune segments by time. */
  timeColumn: string;
  /** Values of `declare query_parameters(…)`, by name (the request's variables). */
  parameters?: ReadonlyMap<string, unknown>;
  /**
   * Rows every table read is limited to, before any step of the query sees them: timeColumn in
   * [fromUs, toUs). Alert rules evaluate their query over their lookback window this way.
   */
  window?: { fromUs: bigint; toUs: bigint };
  /** Answers of earlier phases, in the order the binder asked (phases.ts). */
  answers?: readonly PhaseAnswer[];
}

export interface BoundQuery {
  rel: Rel;
  columns: Column[];
  /** `toscalar()` subqueries, inner ones first: each runs before the query and fills its parameter. */
  scalars: ScalarQuery[];
}

/** How deep let uses and function calls may nest (recursion is impossible, chains are not). */
const MAX_CALL_DEPTH = 32;

/** Most table sources (scans, datatables, ranges …) one query may read. */
const MAX_SOURCES = 64;

/** Most distinct values `partition by` splits into (each is a read of the input; MAX_SOURCES bounds them too). */
const MAX_PARTITIONS = 32;

/** Sort keys whose scan column a worker may prune a top-N by (SortSpec.origin): stored as themselves. */
const PRUNING_KEY_TYPES: ReadonlySet<KqlType> = new Set(['long', 'real', 'datetime']);

/** A first-phase value (readable form) as the literal of its column type. */
function partitionLiteral(type: KqlType, v: unknown): LiteralValue {
  switch (type) {
    case 'long':
    case 'datetime':
    case 'timespan':
      return { type, value: BigInt(v as bigint) };
    case 'real':
      return { type, value: Number(v) };
    case 'bool':
      return { type, value: Boolean(v) };
    default:
      return { type, value: String(v) } as LiteralValue;
  }
}

/** Most toscalar() subqueries in one query (each is a round of worker calls before the query). */
const MAX_SCALAR_QUERIES = 16;

export class QueryBinder {
  private readonly ids = new IdAllocator();
  /** Relations whose rows have an order (sort, top, serialize, range, datatable and what keeps it). */
  private readonly serialized = new WeakSet<Rel>();
  /** Whether the input of the operator being bound is serialized (for row functions). */
  private inputSerialized = false;
  /** What names mean here: changes with each let, function call and `as`. */
  private scope: Scope = EMPTY_SCOPE;
  private letDepth = 0;
  /** Relations read so far: each let use binds again, so repeated lets could multiply them. */
  private sources = 0;
  /** toscalar() subqueries met so far, in the order they must run. */
  private readonly scalars: ScalarQuery[] = [];
  /** First-phase questions asked so far (phases.ts). */
  private questions = 0;

  constructor(
    private readonly catalog: SchemaCatalog,
    private readonly options: BindOptions,
  ) {}

  bindQuery(ast: QueryAst): BoundQuery {
    for (const p of ast.parameters ?? []) this.declareParameter(p);
    for (const let_ of ast.lets) this.declareLet(let_);
    const rel = this.tabular(ast.body);
    return { rel, columns: relColumns(rel), scalars: this.scalars };
  }

  /**
   * The answer to a first-phase question: `rel`'s rows (at most maxRows, else truncated). Known
   * from an earlier phase, or binding stops here and the plan runs `rel` first (phases.ts).
   */
  answer(rel: Rel, maxRows: number): PhaseAnswer {
    const i = this.questions++;
    const known = this.options.answers?.[i];
    if (known) return known;
    if (i >= MAX_PHASES)
      throw queryError(`A query may need at most ${MAX_PHASES} first phases (evaluate bag_unpack, pivot).`, { start: 0, end: 0 });
    throw new NeedsAnswer(rel, maxRows, [...this.scalars]);
  }

  /**
   * `toscalar(T)`: T is bound here (in the current scope, without the row's columns) and becomes
   * a subquery that runs before the query (its own fragments and merge); its first value fills a
   * bound parameter of the query's statements — a value, never SQL text. The type is T's first
   * column's, known now, so the query's columns do not depend on the answer.
   */
  private toScalar(expr: Extract<Expr, { kind: 'toscalar' }>): Bound {
    if (this.scalars.length >= MAX_SCALAR_QUERIES)
      throw queryError(`A query may use at most ${MAX_SCALAR_QUERIES} toscalar() subqueries.`, expr.span);
    const serialized = this.inputSerialized;
    // Names bound to a value of the caller's row (a function argument) cannot be read here.
    let scope = this.scope;
    for (const [name, value] of this.scope.scalars) {
      if (readsColumns(value.sql)) scope = declare(scope, name, { kind: 'scalar', value: { ...value, outsideRowContext: true } });
    }
    const rel = this.inScope(scope, expr.span, () => this.tabular(expr.tabular));
    this.inputSerialized = serialized;
    const column = relColumns(rel)[0];
    if (!column) throw queryError('toscalar() needs a tabular expression with at least one column.', expr.span);
    // A datetime carried as ticks travels as its BIGINT ticks (a long column of its own), not as
    // the TIMESTAMP parameter a datetime uses, and comes back marked (decision 0044).
    if (column.ticks) {
      const ticks: Column = this.newColumn(column.name, 'long');
      const query = scalarQuery(
        { kind: 'project', input: rel, outputs: [{ col: ticks, sql: identOf(column) }], columns: [ticks] },
        ticks,
      );
      this.scalars.push(query);
      return tickDatetime(query.sql, expr.span);
    }
    const query = scalarQuery(rel, column);
    this.scalars.push(query);
    return { type: column.type, sql: query.sql, span: expr.span };
  }

  // ------------------------------------------------------------------ statements and functions

  private declareParameter(p: QueryParameter): void {
    const given = this.options.parameters?.get(p.name);
    let value: Bound;
    if (given !== undefined) value = constant(parameterLiteral(p, given), p.span);
    else if (p.defaultValue) value = this.scalarValue(p.defaultValue, p.type, `the query parameter '${p.name}'`);
    else throw queryError(`The query parameter '${p.name}' has no value: pass it in the request's variables.`, p.span);
    this.scope = declare(this.scope, p.name, { kind: 'scalar', value });
  }

  private declareLet(let_: LetStatement): void {
    const v = let_.value;
    if (v.kind === 'function') {
      const fn: FunctionBinding = { name: let_.name, decl: v.decl, scope: this.scope };
      this.scope = declare(this.scope, let_.name, { kind: 'function', value: fn });
      return;
    }
    const resolved = this.resolve(v);
    this.scope = declare(
      this.scope,
      let_.name,
      resolved.kind === 'tabular'
        ? { kind: 'tabular', value: { tabular: resolved.tabular, scope: this.scope } }
        : { kind: 'scalar', value: resolved.bound },
    );
  }

  /** A let value or argument as scalar (bound here, without columns) or tabular (bound at use). */
  private resolve(v: Value): { kind: 'scalar'; bound: Bound } | { kind: 'tabular'; tabular: TabularExpr } {
    if (v.kind === 'tabular') return { kind: 'tabular', tabular: v.tabular };
    if (v.kind === 'name' && this.isTableName(v.tabular)) return { kind: 'tabular', tabular: v.tabular };
    if (v.kind === 'call' && this.isTabularCall(v.tabular.source as CallSource)) return { kind: 'tabular', tabular: v.tabular };
    if (!v.expr) {
      const call = (v as Extract<Value, { kind: 'call' }>).tabular.source as CallSource;
      throw queryError(`'${call.name}' is not a tabular function.`, call.nameSpan);
    }
    return { kind: 'scalar', bound: this.exprBinder([]).bind(v.expr) };
  }

  /** A scalar of a declared type (long widens to real; dynamic converts). */
  private scalarValue(expr: Expr, type: KqlType, what: string): Bound {
    return this.ofType(this.exprBinder([]).bind(expr), type, what);
  }

  private ofType(b: Bound, type: KqlType, what: string): Bound {
    if (b.type === type) return b;
    if (b.value?.value === null) return constant({ type, value: null } as Bound['value'] & object, b.span);
    if ((b.type === 'long' && type === 'real') || b.type === 'dynamic') return convert(b, type, what);
    throw queryError(`${what} must be a ${type}; this is a ${b.type}.`, b.span);
  }

  private isTabularCall(call: CallSource): boolean {
    if (call.name === 'materialize') return true;
    const fn = this.scope.functions.get(call.name);
    return fn !== undefined && this.returnsTable(fn);
  }

  /** Whether a function's result is tabular, judged from its declaration. */
  private returnsTable(fn: FunctionBinding, depth = 0): boolean {
    const r = fn.decl.result;
    if (r.kind === 'tabular') return true;
    if (r.kind === 'scalar') return false;
    if (depth > MAX_CALL_DEPTH) return false;
    if (r.kind === 'call') {
      const callee = (r.tabular.source as CallSource).name;
      if (callee === 'materialize') return true;
      const inner = this.functionVisibleIn(fn, callee);
      return inner !== undefined && this.returnsTable(inner, depth + 1);
    }
    // A name: a tabular parameter, a tabular let of the body, or a table where it was declared.
    const name = r.tabular.source.kind === 'table' && r.tabular.operators.length === 0 ? r.tabular.source.name : '';
    if (fn.decl.params.some((p) => p.name === name)) return fn.decl.params.some((p) => p.name === name && p.type === 'tabular');
    const bodyLet = [...fn.decl.lets].reverse().find((l) => l.name === name);
    if (bodyLet) return bodyLet.value.kind === 'tabular' || bodyLet.value.kind === 'name';
    return fn.scope.tabulars.has(name) || Object.hasOwn(BUILTIN_TABLES, name) || this.findTable(name) !== undefined;
  }

  private functionVisibleIn(fn: FunctionBinding, name: string): FunctionBinding | undefined {
    const bodyLet = [...fn.decl.lets].reverse().find((l) => l.name === name);
    if (bodyLet) return bodyLet.value.kind === 'function' ? { name, decl: bodyLet.value.decl, scope: fn.scope } : undefined;
    return fn.scope.functions.get(name);
  }

  /** Runs `body` in `scope`, then restores the current scope. */
  private inScope<T>(scope: Scope, span: Span, body: () => T): T {
    if (++this.letDepth > MAX_CALL_DEPTH) throw queryError('Let statements and functions call each other too deeply.', span);
    const saved = this.scope;
    this.scope = scope;
    try {
      return body();
    } finally {
      this.scope = saved;
      this.letDepth--;
    }
  }

  /**
   * The scope of a function's body for one call: its declaration scope, the parameters bound to
   * the arguments (defaults filled in), then the body's own lets.
   */
  private callScope(fn: FunctionBinding, args: Value[], span: Span, scalarArg: (v: Value, i: number) => Bound): Scope {
    const params = fn.decl.params;
    if (args.length > params.length) {
      throw queryError(`The function '${fn.name}' takes at most ${params.length} argument(s), not ${args.length}.`, span);
    }
    let scope = fn.scope;
    params.forEach((p, i) => {
      const arg = args[i];
      const what = `The argument '${p.name}' of '${fn.name}'`;
      if (p.type === 'tabular') {
        if (!arg) throw queryError(`${what} is missing.`, span);
        const r = this.resolve(arg);
        if (r.kind !== 'tabular') throw queryError(`${what} must be a table.`, span);
        this.checkSchema(r.tabular, p, what);
        scope = declare(scope, p.name, { kind: 'tabular', value: { tabular: r.tabular, scope: this.scope } });
        return;
      }
      let value: Bound;
      if (arg) value = this.ofType(scalarArg(arg, i), p.type, what);
      else if (p.defaultValue)
        value = this.inScope(fn.scope, span, () => this.scalarValue(p.defaultValue as Expr, p.type as KqlType, what));
      else throw queryError(`${what} is missing and has no default value.`, span);
      scope = declare(scope, p.name, { kind: 'scalar', value });
    });
    return this.inScope(scope, span, () => {
      for (const let_ of fn.decl.lets) this.declareLet(let_);
      return this.scope;
    });
  }

  /** A tabular argument must have the columns its parameter's schema names, with their types. */
  private checkSchema(tabular: TabularExpr, p: FunctionDecl['params'][0], what: string): void {
    if (!p.columns || p.columns.length === 0) return;
    const sources = this.sources;
    const columns = relColumns(this.tabular(tabular));
    this.sources = sources; // only looked at, not read
    for (const c of p.columns) {
      const found = columns.find((x) => x.name === c.name);
      if (!found) throw queryError(`${what} has no column '${c.name}'.`, c.span);
      if (found.type !== c.type) throw queryError(`${what}: the column '${c.name}' is a ${found.type}, not a ${c.type}.`, c.span);
    }
  }

  /** A call of a let-declared scalar function inside an expression (the caller's row in scope). */
  private userScalarCall(call: Extract<Expr, { kind: 'call' }>, caller: ExprBinder): Bound | undefined {
    const fn = this.scope.functions.get(call.name);
    if (!fn) return undefined;
    if (this.returnsTable(fn))
      throw queryError(`'${call.name}' returns a table and cannot be used in an expression.`, call.nameSpan);
    const args: Value[] = call.args.map((expr) => ({ kind: 'scalar', expr }));
    const scope = this.callScope(fn, args, call.span, (_v, i) => caller.bind(call.args[i] as Expr));
    const result = fn.decl.result;
    const expr = result.kind === 'tabular' ? undefined : result.expr;
    if (!expr) throw queryError(`'${call.name}' does not return a scalar.`, call.nameSpan);
    return this.inScope(scope, call.span, () => ({ ...this.exprBinder([]).bind(expr), span: call.span }));
  }

  /** A call in tabular position: materialize(…) or a let-declared tabular function. */
  private callSource(call: CallSource): Rel {
    if (call.name === 'materialize') {
      // Kusto caches the value for the query; the answer is the value itself.
      const arg = call.args[0];
      if (call.args.length !== 1 || !arg) throw queryError("'materialize' takes one tabular argument.", call.span);
      const r = this.resolve(arg);
      if (r.kind !== 'tabular') throw queryError("'materialize' takes a tabular argument.", call.span);
      return this.tabular(r.tabular);
    }
    const fn = this.scope.functions.get(call.name);
    if (!fn) {
      if (scalarFunction(call.name)) throw queryError(`'${call.name}' is a scalar function, not a table.`, call.nameSpan);
      throw queryError(`The name '${call.name}' does not refer to any known function.`, call.nameSpan);
    }
    if (!this.returnsTable(fn)) throw queryError(`'${call.name}' returns a scalar, not a table.`, call.nameSpan);
    const scope = this.callScope(fn, call.args, call.span, (v) => {
      const r = this.resolve(v);
      if (r.kind !== 'scalar') throw queryError(`A table was passed where '${call.name}' takes a scalar.`, call.span);
      return r.bound;
    });
    const result = fn.decl.result as Exclude<Value, { kind: 'scalar' }>;
    return this.inScope(scope, call.span, () => this.tabular(result.tabular));
  }

  private isTableName(t: TabularExpr): boolean {
    if (t.operators.length > 0 || t.source.kind !== 'table') return false;
    const name = t.source.name;
    return this.scope.tabulars.has(name) || Object.hasOwn(BUILTIN_TABLES, name) || this.findTable(name) !== undefined;
  }

  private findTable(name: string): CatalogTable | undefined {
    return this.catalog.tables.find((t) => t.name === name);
  }

  /**
   * A binder over the input columns. `sameOperator` names the columns that earlier items of the
   * same extend/project define: Kusto evaluates every item over the input row, so those names are
   * not in scope (and an input column of the same name reads its input value).
   */
  exprBinder(columns: Column[], sameOperator?: SameOperatorNames): ExprBinder {
    const map = new Map<string, Column>();
    for (const c of columns) map.set(c.name, c);
    const ctx: ExprContext = {
      columns: map,
      lets: this.scope.scalars,
      nowUs: this.options.nowUs,
      userFunction: (call, caller) => this.userScalarCall(call, caller),
      toscalar: (e) => this.toScalar(e),
      // extend/project/serialize items may use row functions over the input's order.
      ...(sameOperator
        ? {
            rowFunctions: {
              serialized: this.inputSerialized || sameOperator.serializes === true,
              restart: (flag: Bound) => {
                const segment = { flag: flag.sql, flagId: this.ids.column(), id: this.ids.column() };
                sameOperator.segments.push(segment);
                return sql`${ident(segment.id)}`;
              },
            },
          }
        : {}),
    };
    if (sameOperator && sameOperator.names.size > 0) return new SameOperatorBinder(ctx, sameOperator);
    if (sameOperator) return new ExprBinder(ctx);
    return new ExprBinder(ctx);
  }

  // ------------------------------------------------------------------ tabular expressions

  tabular(t: TabularExpr): Rel {
    let rel = this.source(t.source);
    t.operators.forEach((op, i) => {
      const before = (): TabularExpr => ({ source: t.source, operators: t.operators.slice(0, i), span: t.span });
      if (op.kind === 'as') {
        // The input is also known by this name for the rest of the query.
        const value: TabularBinding = { tabular: before(), scope: this.scope };
        this.scope = declare(this.scope, op.name, { kind: 'tabular', value });
      } else if (op.kind === 'partition') {
        rel = this.partition(rel, before(), op);
      } else if (op.kind === 'search') {
        // $table names the source table when the input is one (Kusto tracks it through the pipe).
        const source = t.source.kind === 'table' && !t.source.pattern ? t.source.name : '';
        rel = this.search([{ rel, name: source }], op);
      } else if (op.kind === 'invoke') {
        rel = this.callSource({ ...op.call, args: [{ kind: 'tabular', tabular: before() }, ...op.call.args] });
      } else {
        const input = rel;
        this.inputSerialized = this.serialized.has(input);
        rel = this.operator(input, op);
        if (keepsOrder(op, this.inputSerialized)) this.serialized.add(rel);
      }
    });
    return rel;
  }

  private source(src: Source): Rel {
    const rel = this.sourceRel(src);
    if (src.kind === 'range' || src.kind === 'datatable' || src.kind === 'print') this.serialized.add(rel);
    return rel;
  }

  private sourceRel(src: Source): Rel {
    if (++this.sources > MAX_SOURCES) throw queryError(`The query reads more than ${MAX_SOURCES} tables.`, src.span);
    switch (src.kind) {
      case 'table':
        return this.tableSource(src.name, src.span);
      case 'nested':
        return this.tabular(src.tabular);
      case 'datatable':
        return this.datatable(src);
      case 'range':
        return this.range(src);
      case 'print':
        return this.print(src);
      case 'union':
        return this.unionOf(undefined, src.tables, src.options ?? {}, src.span);
      case 'call':
        return this.callSource(src);
      case 'search':
        return this.search(this.searchTables(src), src);
    }
  }

  /**
   * `partition by Column (subquery)`: the distinct values of the column are a first-phase answer
   * (phases.ts; at most MAX_PARTITIONS), then the subquery is bound once per value over the input
   * filtered to that value (`$partition` in the braces form) and the results are unioned. Every
   * value's rows are a query of their own, so the answer does not depend on how rows are spread.
   */
  private partition(rel: Rel, input: TabularExpr, op: Extract<Operator, { kind: 'partition' }>): Rel {
    const columns = relColumns(rel);
    const key = columns.find((c) => c.name === op.key.name);
    if (!key) throw queryError(`The column '${op.key.name}' does not exist.`, op.key.span);
    if (key.type === 'dynamic')
      throw queryError('partition by a dynamic column is not supported; convert it first.', op.key.span);
    const span = op.span;
    const keyExpr: Expr = { kind: 'name', name: key.name, span: op.key.span };
    const distinct = this.summarize(rel, columns, [], [{ expr: keyExpr, span }], span);
    const answer = this.answer(distinct, MAX_PARTITIONS);
    if (answer.truncated)
      throw queryError(
        `partition supports at most ${MAX_PARTITIONS} distinct values of '${key.name}'; filter or summarize first.`,
        op.key.span,
      );
    const values = (answer.values[0] ?? []).slice(0, answer.rowCount);
    const predicates: Expr[] =
      values.length === 0
        ? [{ kind: 'literal', lit: { type: 'bool', value: false }, span }] // no rows: the subquery's columns
        : values.map((v) =>
            v === null
              ? { kind: 'call', name: 'isnull', nameSpan: span, args: [keyExpr], span }
              : {
                  kind: 'binary',
                  op: '==',
                  opSpan: span,
                  left: keyExpr,
                  right: { kind: 'literal', lit: partitionLiteral(key.type, v), span },
                  span,
                },
          );
    const legs = predicates.map((predicate, i) => {
      const part: TabularExpr = { ...input, operators: [...input.operators, { kind: 'where', predicate, span }] };
      if (op.subquery.kind === 'operators')
        return this.tabular({ ...part, operators: [...part.operators, ...op.subquery.operators] });
      const subquery = op.subquery.tabular;
      // The braces form reads the partition as $partition and the key column's name as its value.
      let scope = declare(this.scope, '$partition', { kind: 'tabular', value: { tabular: part, scope: this.scope } });
      const v = values[i];
      const missing: LiteralValue =
        key.type === 'string' ? { type: 'string', value: '' } : ({ type: key.type, value: null } as LiteralValue);
      const value = constant(v === undefined || v === null ? missing : partitionLiteral(key.type, v), op.key.span);
      scope = declare(scope, key.name, { kind: 'scalar', value });
      return this.inScope(scope, span, () => this.tabular(subquery));
    });
    if (values.length === 0) {
      // No partition: no rows, with the subquery's columns.
      const leg = legs[0] as Rel;
      return { kind: 'limit', input: leg, count: 0n, columns: relColumns(leg) };
    }
    return legs.length === 1 ? (legs[0] as Rel) : this.union(legs);
  }

  /** The tables `search` reads without input: its `in (…)` list (wildcards allowed), else every table. */
  private searchTables(spec: SearchSpec): { rel: Rel; name: string }[] {
    if (!spec.tables) {
      const names = this.catalog.tables.map((t) => t.name).sort();
      if (names.length === 0) throw queryError('There is no table to search.', spec.span);
      return names.map((name) => ({ rel: this.tableSource(name, spec.span), name }));
    }
    const legs: { rel: Rel; name: string }[] = [];
    for (const t of spec.tables) {
      if (t.source.kind === 'table' && t.source.pattern) {
        const re = new RegExp(`^${t.source.name.split('*').map(escapeRegex).join('.*')}$`);
        const names = this.catalog.tables
          .map((x) => x.name)
          .filter((n) => re.test(n))
          .sort();
        for (const name of names) legs.push({ rel: this.tableSource(name, t.source.span), name });
      } else {
        const name = t.source.kind === 'table' && t.operators.length === 0 ? t.source.name : '';
        legs.push({ rel: this.tabular(t), name });
      }
    }
    if (legs.length === 0) throw queryError('No table matches the tables of this search.', spec.span);
    return legs;
  }

  /**
   * `search`: each table's rows where the predicate holds (search.ts rewrites it per table), with
   * a first column `$table` naming the table, as one union (columns by name).
   */
  private search(legs: { rel: Rel; name: string }[], spec: SearchSpec): Rel {
    const rels = legs.map(({ rel, name }) => {
      const all = relColumns(rel);
      // A second search keeps the first one's $table.
      const known = all.find((c) => c.name === '$table');
      const columns = all.filter((c) => c !== known);
      const predicate = searchPredicate(spec.predicate, columns, spec.caseSensitive);
      const filtered = this.operator(rel, { kind: 'where', predicate, span: spec.span });
      const outputs: Output[] = [
        known ? { col: known, sql: identOf(known) } : { col: this.newColumn('$table', 'string'), sql: sql`${str(name)}` },
        ...columns.map((c) => ({ col: c, sql: identOf(c) })),
      ];
      return { kind: 'project', input: filtered, outputs, columns: outputs.map((o) => o.col) } as Rel;
    });
    return rels.length === 1 ? (rels[0] as Rel) : this.union(rels);
  }

  private tableSource(name: string, span: Span): Rel {
    const let_ = this.scope.tabulars.get(name);
    if (let_) return this.inScope(let_.scope, span, () => this.tabular(let_.tabular));
    if (this.scope.scalars.has(name)) throw queryError(`'${name}' is a scalar value, not a table.`, span);
    if (this.scope.functions.has(name)) throw queryError(`'${name}' is a function: call it as ${name}(…).`, span);
    const builtin = Object.hasOwn(BUILTIN_TABLES, name) ? BUILTIN_TABLES[name] : undefined;
    if (builtin) {
      const table = builtin(this.catalog);
      const columns = table.columns.map((c) => this.newColumn(c.name, c.type));
      const rows = table.rows.map((r) => r.map((v) => sql`${str(v)}`));
      return { kind: 'values', columns, rows };
    }
    const table = this.findTable(name);
    if (!table) throw queryError(`The name '${name}' does not refer to any known table, tabular variable or function.`, span);
    const scan: Rel = {
      kind: 'scan',
      table: table.name,
      columns: table.columns.map((c) => ({ ...this.newColumn(c.name, c.type), origin: c.name })),
    };
    const window = this.options.window;
    const time = window && scan.columns.find((c) => c.origin === this.options.timeColumn);
    if (!window || !time) return scan;
    const t = identOf(time);
    // The scan may apply the window exactly, as a where clause on the time column (decision 0027:
    // alert evaluations get decision 0018's inside-segment reads): inclusive µs bounds.
    const safe = (v: bigint) => v < SAFE_US && v > -SAFE_US;
    const exact = safe(window.fromUs) && safe(window.toUs - 1n);
    return {
      kind: 'filter',
      input: scan,
      predicate: sql`(${t} >= ${ts(window.fromUs)} AND ${t} < ${ts(window.toUs)})`,
      columns: scan.columns,
      time: { fromUs: window.fromUs, toUs: window.toUs },
      ...(exact ? { storageTime: { bounds: { fromUs: window.fromUs, toUs: window.toUs - 1n } } } : {}),
    };
  }

  newColumn(name: string, type: KqlType): Column {
    return { name, type, id: this.ids.column() };
  }

  private datatable(src: Extract<Source, { kind: 'datatable' }>): Rel {
    const names = new NameAllocator();
    const columns = src.columns.map((c) => {
      if (!names.claim(c.name)) throw queryError(`A column with the name '${c.name}' is already declared.`, c.span);
      return this.newColumn(c.name, c.type);
    });
    const binder = this.exprBinder([]);
    const bound: Bound[][] = [];
    // A string cell of a datetime column converts as todatetime does (Microsoft's analyzer accepts
    // `datatable(d:datetime)['2024-01-01']`), a 7th fractional digit kept (decision 0048).
    const cell = (b: Bound, c: Column): Bound =>
      c.type === 'datetime' && b.type === 'string' ? convert(b, 'datetime', 'datatable') : b;
    for (let i = 0; i < src.values.length; i += columns.length)
      bound.push(columns.map((c, j) => cell(binder.bind(src.values[i + j] as Expr), c)));
    // A datetime column with a value carried as ticks (a 7-digit literal) holds every value as
    // ticks (decision 0044).
    const ticks = columns.map((c, j) => c.type === 'datetime' && bound.some((row) => row[j]?.ticks));
    const rows = bound.map((row) =>
      row.map((b, j) => {
        if (!ticks[j]) return this.valueOfType(b, (columns[j] as Column).type, 'datatable');
        if (b.type !== 'datetime') throw queryError(`datatable: a ${b.type} value cannot go into a datetime column.`, b.span);
        return b.value !== undefined && b.value.value === null ? sql`CAST(NULL AS BIGINT)` : ticksSql(b);
      }),
    );
    return { kind: 'values', columns: columns.map((c, j) => (ticks[j] ? { ...c, ticks: true } : c)), rows };
  }

  /** A value stored into a column of a declared type (datatable, parse). */
  private valueOfType(b: Bound, type: KqlType, what: string): Sql {
    if (b.ticks) throw refusedTicksUse(what, b.span);
    if (b.type === type) return b.sql;
    if (b.value !== undefined && b.value.value === null) return nullOf(type);
    if (b.type === 'long' && type === 'real') return coerce(b, 'real');
    // A number into a decimal column converts as todecimal does: a real by SqlDecimal(double), as
    // the public report decision 0030 cites shows (2.2 stored as 2.2000000000000002; decision 0031).
    if (type === 'decimal' && (b.type === 'long' || b.type === 'real')) return convert(b, 'decimal', what).sql;
    if (type === 'dynamic') return convert(b, 'dynamic', what).sql;
    throw queryError(`${what}: a ${b.type} value cannot go into a ${type} column.`, b.span);
  }

  private range(src: Extract<Source, { kind: 'range' }>): Rel {
    const binder = this.exprBinder([]);
    const from = binder.bind(src.from);
    const to = binder.bind(src.to);
    const step = binder.bind(src.step);
    let type: KqlType = from.type;
    if (from.type === 'long' && to.type === 'long' && step.type === 'real') type = 'real';
    if ((from.type === 'real' || to.type === 'real') && from.type !== 'datetime') type = 'real';
    const column = this.newColumn(src.column, type);
    if (type === 'datetime') {
      if (to.type !== 'datetime' || step.type !== 'timespan')
        throw queryError('A datetime range needs datetime bounds and a timespan step.', src.span);
      return { kind: 'range', column, from: from.sql, to: to.sql, step: sql`to_microseconds(${step.sql} // 10)` };
    }
    if (type === 'timespan') {
      if (to.type !== 'timespan' || step.type !== 'timespan')
        throw queryError('A timespan range needs timespan bounds and step.', src.span);
      return { kind: 'range', column, from: from.sql, to: to.sql, step: step.sql };
    }
    if (type !== 'long' && type !== 'real') throw queryError(`A range over ${type} values is not supported.`, src.span);
    for (const b of [to, step]) {
      if (b.type !== 'long' && b.type !== 'real')
        throw queryError(`The range bounds and step must be numbers; this is a ${b.type}.`, b.span);
    }
    return { kind: 'range', column, from: coerce(from, type), to: coerce(to, type), step: coerce(step, type) };
  }

  private print(src: Extract<Source, { kind: 'print' }>): Rel {
    const names = new NameAllocator();
    const binder = this.exprBinder([]);
    // A several-column call (array_sort_asc(a, b)) spreads into its columns, as in extend/project.
    const outputs: Output[] = src.items.flatMap((item, i) => {
      const spread = expandMultiColumn(item, binder);
      const columns = spread ?? [{ name: item.name ?? `print_${i}`, nameSpan: item.nameSpan, bound: binder.bind(item.expr) }];
      return columns.map(({ name, nameSpan, bound: b }) => {
        if (!names.claim(name)) throw queryError(`A column with the name '${name}' is already declared.`, nameSpan ?? item.span);
        return { col: { ...this.newColumn(name, b.type), ...columnMarks(b) }, sql: b.sql };
      });
    });
    return { kind: 'select', columns: outputs.map((o) => o.col), outputs };
  }

  /**
   * union with its options: wildcard names stand for every matching table (in name order);
   * `isfuzzy=true` leaves out names that do not resolve (at least one must); `withsource=`
   * adds a first column naming each row's table (`union_argN` for an expression, N its position);
   * `kind=inner` keeps only the columns every input has.
   */
  private unionOf(input: Rel | undefined, tables: TabularExpr[], options: UnionOptions, span: Span): Rel {
    const legs: { rel: Rel; source: string }[] = [];
    if (input) {
      if (options.withsource) throw queryError('withsource= is supported in the source form, `union withsource=… A, B`.', span);
      legs.push({ rel: input, source: '' });
    }
    tables.forEach((t, i) => {
      const position = i + (input ? 1 : 0);
      if (t.source.kind === 'table' && t.source.pattern) {
        const re = new RegExp(`^${t.source.name.split('*').map(escapeRegex).join('.*')}$`);
        const names = this.catalog.tables
          .map((x) => x.name)
          .filter((n) => re.test(n))
          .sort();
        if (names.length === 0 && !options.isfuzzy) throw queryError(`No table matches '${t.source.name}'.`, t.source.span);
        for (const name of names) legs.push({ rel: this.tableSource(name, t.source.span), source: name });
        return;
      }
      const name = t.source.kind === 'table' && t.operators.length === 0 ? t.source.name : `union_arg${position}`;
      try {
        legs.push({ rel: this.tabular(t), source: name });
      } catch (err) {
        if (!options.isfuzzy || !(err instanceof Error) || !/does not refer to any known/.test(err.message)) throw err;
      }
    });
    if (legs.length === 0) throw queryError('None of the tables of this union exists.', span);
    let rels = legs.map((l) => l.rel);
    if (options.withsource) {
      const column = options.withsource;
      rels = legs.map((l) => {
        const cols = relColumns(l.rel);
        const outputs: Output[] = [
          { col: this.newColumn(column, 'string'), sql: sql`${str(l.source)}` },
          ...cols.filter((c) => c.name !== column).map((c) => ({ col: c, sql: identOf(c) })),
        ];
        return { kind: 'project', input: l.rel, outputs, columns: outputs.map((o) => o.col) };
      });
    }
    const union = this.union(rels);
    if (options.kind !== 'inner' || union.kind !== 'union') return union;
    const common = union.columns.map((c, i) => ({ c, i })).filter(({ i }) => union.inputs.every((leg) => leg.map[i] !== null));
    return {
      ...union,
      columns: common.map(({ c }) => c),
      inputs: union.inputs.map((leg) => ({ ...leg, map: common.map(({ i }) => leg.map[i] ?? null) })),
    };
  }

  union(legs: Rel[]): Rel {
    // A datetime column carried as ticks in one input makes the same column ticks in every input
    // (decision 0044): the others convert their TIMESTAMPs in a projection of their own.
    const ticksNames = new Set(
      legs.flatMap((rel) =>
        relColumns(rel)
          .filter((c) => c.ticks)
          .map((c) => c.name),
      ),
    );
    const inputs = legs.map((rel): Rel => {
      const cols = relColumns(rel);
      const convert = (c: Column) => c.type === 'datetime' && !c.ticks && ticksNames.has(c.name);
      if (!cols.some(convert)) return rel;
      const outputs: Output[] = cols.map((c) =>
        convert(c)
          ? { col: { ...this.newColumn(c.name, c.type), ticks: true }, sql: ticksOfMicros(identOf(c)) }
          : { col: c, sql: identOf(c) },
      );
      return { kind: 'project', input: rel, outputs, columns: outputs.map((o) => o.col) };
    });
    // Columns by name in order of first appearance; a name with different types in different
    // inputs becomes one column per type (name_long, name_string), as Kusto does.
    const typesByName = new Map<string, Set<KqlType>>();
    for (const rel of inputs) {
      for (const c of relColumns(rel)) {
        if (!typesByName.has(c.name)) typesByName.set(c.name, new Set());
        typesByName.get(c.name)?.add(c.type);
      }
    }
    const columns: Column[] = [];
    const key = (name: string, type: KqlType) => `${name}\u0000${type}`;
    // A long column is reported int only when every input's is (getyear in one, a long in another is
    // long): its type must not depend on the order of the inputs (decision 0048).
    const notInt = new Set(
      inputs.flatMap((rel) =>
        relColumns(rel)
          .filter((c) => !c.int32)
          .map((c) => key(c.name, c.type)),
      ),
    );
    const byKey = new Map<string, Column>();
    for (const rel of inputs) {
      for (const c of relColumns(rel)) {
        const k = key(c.name, c.type);
        if (byKey.has(k)) continue;
        const name = (typesByName.get(c.name)?.size ?? 1) > 1 ? `${c.name}_${c.type}` : c.name;
        const col = { ...this.newColumn(name, c.type), ...ticksFlag(c), ...(notInt.has(k) ? {} : int32Flag(c)) };
        byKey.set(k, col);
        columns.push(col);
      }
    }
    return {
      kind: 'union',
      columns,
      inputs: inputs.map((rel) => {
        const own = new Map(relColumns(rel).map((c) => [key(c.name, c.type), c] as const));
        return { rel, map: columns.map((_, i) => own.get([...byKey.keys()][i] as string) ?? null) };
      }),
    };
  }

  // ------------------------------------------------------------------ operators

  operator(input: Rel, op: Operator): Rel {
    const columns = relColumns(input);
    switch (op.kind) {
      case 'where': {
        // Over a scan, the term operators may read a column's term fold (decision 0045).
        const folds = foldableColumns(input);
        const binder = this.exprBinder(columns);
        const b = (folds ? new ExprBinder({ ...binder.ctx, termFolds: folds }) : binder).bind(op.predicate, true);
        const pred = b.type === 'bool' ? b : b.type === 'dynamic' ? convert(b, 'bool', 'where') : undefined;
        if (!pred) throw queryError(`A where clause needs a boolean condition; this is a ${b.type}.`, op.predicate.span);
        const time = this.timeBounds(op.predicate, columns);
        const storageTime = time ? this.storageTime(op.predicate, columns) : undefined;
        const terms = filterTermHints(op.predicate, this.exprBinder(columns));
        return {
          kind: 'filter',
          input,
          predicate: pred.sql,
          columns,
          ...(time ? { time } : {}),
          ...(storageTime ? { storageTime } : {}),
          ...(terms.length > 0 ? { terms } : {}),
        };
      }
      case 'project':
        return this.project(input, columns, op.items);
      case 'extend':
        return this.extend(input, columns, op.items);
      case 'serialize':
        return this.extend(input, columns, op.items, true);
      case 'project-away': {
        const away = new Set<string>();
        for (const n of op.names) {
          // A wildcard name (`Ignore*`) removes every column it matches, possibly none.
          if (n.name.includes('*')) {
            for (const c of columns) if (matchesPattern(c.name, n.name)) away.add(c.name);
            continue;
          }
          if (!columns.some((c) => c.name === n.name)) throw queryError(`The column '${n.name}' does not exist.`, n.span);
          away.add(n.name);
        }
        const kept = columns.filter((c) => !away.has(c.name));
        return { kind: 'project', input, outputs: kept.map((c) => ({ col: c, sql: identOf(c) })), columns: kept };
      }
      case 'project-rename': {
        const renamed = new Map<string, string>();
        for (const item of op.items) {
          if (!columns.some((c) => c.name === item.from))
            throw queryError(`The column '${item.from}' does not exist.`, item.fromSpan);
          renamed.set(item.from, item.name);
        }
        const names = new NameAllocator();
        const out: Column[] = columns.map((c) => {
          const name = renamed.get(c.name) ?? c.name;
          if (!names.claim(name)) throw queryError(`A column with the name '${name}' is already declared.`, op.span);
          return { ...c, name };
        });
        return { kind: 'project', input, outputs: out.map((c) => ({ col: c, sql: identOf(c) })), columns: out };
      }
      case 'summarize':
        return this.summarize(input, columns, op.aggregates, op.by, op.span);
      case 'count':
        return this.summarize(
          input,
          columns,
          [
            {
              name: op.name ?? 'Count',
              expr: { kind: 'call', name: 'count', nameSpan: op.span, args: [], span: op.span },
              span: op.span,
            },
          ],
          [],
          op.span,
        );
      case 'project-keep': {
        const keep = new Set<Column>();
        for (const p of op.patterns) {
          const matched = columns.filter((c) => matchesPattern(c.name, p.pattern));
          if (matched.length === 0 && !p.pattern.includes('*'))
            throw queryError(`The column '${p.pattern}' does not exist.`, p.span);
          for (const c of matched) keep.add(c);
        }
        const kept = columns.filter((c) => keep.has(c));
        return { kind: 'project', input, outputs: kept.map((c) => ({ col: c, sql: identOf(c) })), columns: kept };
      }
      case 'project-reorder': {
        const first: Column[] = [];
        for (const p of op.patterns) {
          let matched = columns.filter((c) => matchesPattern(c.name, p.pattern) && !first.includes(c));
          if (matched.length === 0 && !p.pattern.includes('*'))
            throw queryError(`The column '${p.pattern}' does not exist.`, p.span);
          if (p.order) matched = [...matched].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
          if (p.order === 'desc') matched.reverse();
          first.push(...matched);
        }
        const ordered = [...first, ...columns.filter((c) => !first.includes(c))];
        return { kind: 'project', input, outputs: ordered.map((c) => ({ col: c, sql: identOf(c) })), columns: ordered };
      }
      case 'sample': {
        // Rows ordered by a random key, then the first N: on many workers each keeps its N
        // smallest keys and the merge the N smallest of those, which are the N smallest overall,
        // so every row (or distinct value) is equally likely wherever it is stored.
        const count = this.constCount(op.count, op.of ? 'sample-distinct' : 'sample');
        const base = op.of ? this.summarize(input, columns, [], [{ expr: op.of, span: op.of.span }], op.span) : input;
        const keys: SortSpec[] = [{ sql: sql`random()`, type: 'real', descending: false, nullsFirst: false }];
        const sorted: Rel = { kind: 'sort', input: base, keys, columns: relColumns(base) };
        return { kind: 'limit', input: sorted, count, columns: relColumns(base) };
      }
      case 'getschema': {
        const out = GETSCHEMA_COLUMNS.map(([name, type]) => this.newColumn(name, type));
        const rows = columns.map((c, i) => [
          sql`${str(c.name)}`,
          sql`${int(i)}`,
          // A long Kusto types int shows int (decision 0048).
          sql`${str(c.int32 ? INT32_SCHEMA.dataType : DATA_TYPE[c.type])}`,
          sql`${str(c.int32 ? INT32_SCHEMA.columnType : c.type)}`,
        ]);
        // The input is not read (only its columns matter).
        return { kind: 'values', columns: out, rows };
      }
      case 'distinct': {
        const items: NamedExpr[] =
          op.items.length === 1 && op.items[0]?.expr.kind === 'star'
            ? columns.map((c) => ({ expr: { kind: 'name', name: c.name, span: op.span }, span: op.span }))
            : op.items;
        if (items.length === 0) throw queryError('distinct needs at least one column.', op.span);
        return this.summarize(input, columns, [], items, op.span);
      }
      case 'take':
        return { kind: 'limit', input, count: this.constCount(op.count, 'take'), columns };
      case 'sort': {
        const sorted = this.sort(
          input,
          columns,
          op.keys.map((k) => ({ ...k })),
        );
        return sorted;
      }
      case 'top': {
        const count = this.constCount(op.count, 'top');
        const sorted = this.sort(input, columns, [op.key]);
        return { kind: 'limit', input: sorted, count, columns };
      }
      case 'union':
        return this.unionOf(input, op.tables, op.options ?? {}, op.span);
      case 'parse':
        return this.parse(input, columns, op);
      case 'parse-kv':
        return bindParseKv(this.exprBinder(columns), this.ids, input, columns, op);
      case 'make-series':
        return bindMakeSeries(
          {
            ids: this.ids,
            exprBinder: (c) => this.exprBinder(c),
            summarize: (...args) => this.summarize(...args),
          },
          input,
          op,
        );
      case 'mv-expand':
        return this.mvExpand(input, columns, op);
      case 'join':
        return this.join(input, this.tabular(op.right), op.joinKind, op.on, op.span);
      case 'lookup':
        return this.join(input, this.tabular(op.right), op.joinKind === 'inner' ? 'inner' : 'leftouter', op.on, op.span, true);
      case 'evaluate':
        return bindEvaluate(this, input, op);
      case 'top-hitters':
        return this.topHitters(input, op);
      case 'top-nested':
        return bindTopNested(this, input, op);
      case 'mv-apply':
        return bindMvApply(this, input, op);
      case 'as':
      case 'invoke':
      case 'search':
      case 'partition':
        throw new Error(`${op.kind} is bound in tabular()`);
    }
  }

  /**
   * `top-hitters N of e [by w]`: the N values of e with the most rows (or the largest sum of w),
   * most first, counted exactly (Kusto approximates). Columns: e's name and
   * `approximate_count_<e>` (`approximate_sum_<w>` with by).
   */
  private topHitters(input: Rel, op: Extract<Operator, { kind: 'top-hitters' }>): Rel {
    const span = op.span;
    const ofName = expressionName(op.of) ?? 'Column1';
    const weightName = op.by ? (expressionName(op.by) ?? 'Column1') : undefined;
    const name = weightName !== undefined ? `approximate_sum_${weightName}` : `approximate_count_${ofName}`;
    const agg: Expr = { kind: 'call', name: op.by ? 'sum' : 'count', nameSpan: span, args: op.by ? [op.by] : [], span };
    const summarized = this.operator(input, {
      kind: 'summarize',
      aggregates: [{ name, expr: agg, span }],
      by: [{ expr: op.of, span }],
      span,
    });
    // Ties are broken by the value, so the answer does not depend on how rows are spread.
    const valueColumn = relColumns(summarized)[0] as Column;
    const keys = [
      { expr: { kind: 'name' as const, name, span }, descending: true, span },
      { expr: { kind: 'name' as const, name: valueColumn.name, span }, descending: false, span },
    ];
    const sorted = this.operator(summarized, { kind: 'sort', keys, span });
    return { kind: 'limit', input: sorted, count: this.constCount(op.count, 'top-hitters'), columns: relColumns(sorted) };
  }

  /**
   * join and lookup. Result columns follow Kusto (checked against Microsoft's analyzer): the left
   * side's, then the right side's with names the left already has suffixed (`Key1`, `Value1`, the
   * first free number); semi and anti joins keep one side's columns; lookup leaves out the right
   * side's key columns. Keys of different numeric types compare as real; strings compare with ""
   * for missing values; null keys match nothing.
   */
  join(left: Rel, right: Rel, kind: JoinKind, on: JoinCondition[], span: Span, lookup = false): Rel {
    if (on.length === 0) throw queryError('A join needs at least one key in its on clause.', span);
    const lcols = relColumns(left);
    const rcols = relColumns(right);
    const keys = on.map((k) => {
      const l = lcols.find((c) => c.name === k.left);
      const r = rcols.find((c) => c.name === k.right);
      if (!l) throw queryError(`The join key '${k.left}' is not a column of the left side.`, k.span);
      if (!r) throw queryError(`The join key '${k.right}' is not a column of the right side.`, k.span);
      return { l, r, ...this.joinKeySql(l, r, k.span) };
    });
    const fresh = (c: Column, name = c.name): Output => ({
      col: { ...this.newColumn(name, c.type), ...columnMarks(c) },
      sql: identOf(c),
    });
    const names = new NameAllocator([...lcols, ...rcols].map((c) => c.name));
    const leftNames = new Set(lcols.map((c) => c.name));
    const rightKeys = new Set(keys.map((k) => k.r));
    const rightOutputs = (): Output[] =>
      rcols
        .filter((c) => !(lookup && rightKeys.has(c)))
        .map((c) => (leftNames.has(c.name) ? fresh(c, names.derive(c.name)) : fresh(c)));
    const sqlKeys = keys.map((k) => ({ left: k.left, right: k.right }));
    const base = { kind: 'join' as const, left, right, keys: sqlKeys };
    const make = (how: Extract<Rel, { kind: 'join' }>['how'], outputs: Output[], extra: object = {}): Rel => ({
      ...base,
      how,
      outputs,
      columns: outputs.map((o) => o.col),
      ...extra,
    });
    switch (kind) {
      case 'leftsemi':
      case 'leftanti':
        return make(
          kind === 'leftsemi' ? 'semi' : 'anti',
          lcols.map((c) => fresh(c)),
          { from: 'left' },
        );
      case 'rightsemi':
      case 'rightanti':
        return make(
          kind === 'rightsemi' ? 'semi' : 'anti',
          rcols.map((c) => fresh(c)),
          { from: 'right' },
        );
      default: {
        const how = { innerunique: 'inner', inner: 'inner', leftouter: 'left', rightouter: 'right', fullouter: 'full' }[kind] as
          | 'inner'
          | 'left'
          | 'right'
          | 'full';
        const outputs = [...lcols.map((c) => fresh(c)), ...rightOutputs()];
        return make(how, outputs, kind === 'innerunique' ? { dedupeLeft: true } : {});
      }
    }
  }

  /**
   * mv-expand: every dynamic array (or property bag, as one-entry bags or `[key, value]` arrays)
   * becomes one row per element, several expanded in parallel (shorter ones give null); a null
   * value gives one row with null, an empty array or bag none (unless another expands). The
   * expanded column replaces an input column of its name in place, else is appended (named as
   * Kusto names expressions); `with_itemindex` appends the element's 0-based index.
   */
  mvExpand(input: Rel, columns: Column[], op: Extract<Operator, { kind: 'mv-expand' }>): Rel {
    const binder = this.exprBinder(columns);
    let limit: bigint | undefined;
    if (op.limit) limit = this.constCount(op.limit, 'mv-expand limit');
    type Out = Extract<Rel, { kind: 'mv-expand' }>['outputs'][number];
    const outputs: Out[] = columns.map((c) => ({ col: c, pass: c }));
    const names = new NameAllocator(columns.map((c) => c.name));
    const lists: Sql[] = [];
    op.items.forEach(({ item, toType, toTypeSpan }, i) => {
      const b = binder.bind(item.expr);
      if (b.type !== 'dynamic') throw queryError(`mv-expand needs a dynamic value; this is a ${b.type}.`, item.expr.span);
      lists.push(expansionList(b.sql, op.bagExpansion, limit));
      const type = toType ?? 'dynamic';
      const typed = toType && toType !== 'dynamic' ? elementCast(toType, toTypeSpan ?? item.span) : undefined;
      const cast = typed?.cast;
      let name = item.name ?? expressionName(item.expr);
      if (name === undefined) name = names.column();
      const col = { ...this.newColumn(name, type), ...(typed?.ticks ? { ticks: true } : {}) };
      const out: Out = cast ? { col, element: i, cast } : { col, element: i };
      const at = outputs.findIndex((o) => o.col.name === name);
      if (at >= 0) outputs[at] = out;
      else {
        names.claim(name);
        outputs.push(out);
      }
    });
    if (op.itemIndex) {
      if (outputs.some((o) => o.col.name === op.itemIndex))
        throw queryError(`A column with the name '${op.itemIndex}' is already declared.`, op.span);
      outputs.push({ col: this.newColumn(op.itemIndex, 'long'), index: true });
    }
    return { kind: 'mv-expand', input, lists, outputs, columns: outputs.map((o) => o.col) };
  }

  /** The SQL of one key pair, comparable on both sides. */
  private joinKeySql(l: Column, r: Column, span: Span): { left: Sql; right: Sql } {
    const num = (t: KqlType) => t === 'long' || t === 'real';
    if (l.type === r.type) {
      if (l.type === 'string') return { left: sql`coalesce(${identOf(l)}, '')`, right: sql`coalesce(${identOf(r)}, '')` };
      if (l.type === 'dynamic') return { left: sql`CAST(${identOf(l)} AS VARCHAR)`, right: sql`CAST(${identOf(r)} AS VARCHAR)` };
      // Decimals match by value (1.5 with 1.50): the cells' keys (decision 0031).
      if (l.type === 'decimal') return { left: decimalKey(identOf(l)), right: decimalKey(identOf(r)) };
      // A datetime carried as ticks matches the other side's ticks (decision 0036).
      if (l.type === 'datetime' && (l.ticks || r.ticks)) {
        const ticks = (c: Column) => (c.ticks ? identOf(c) : ticksOfMicros(identOf(c)));
        return { left: ticks(l), right: ticks(r) };
      }
      return { left: identOf(l), right: identOf(r) };
    }
    if (num(l.type) && num(r.type))
      return { left: sql`CAST(${identOf(l)} AS DOUBLE)`, right: sql`CAST(${identOf(r)} AS DOUBLE)` };
    throw queryError(`The join keys '${l.name}' (${l.type}) and '${r.name}' (${r.type}) have different types.`, span);
  }

  constCount(expr: Expr, what: string): bigint {
    const b = this.exprBinder([]).bind(expr);
    if (b.value?.type !== 'long' || b.value.value === null || b.value.value < 0n) {
      throw queryError(`The row count of '${what}' must be a non-negative constant integer.`, expr.span);
    }
    return b.value.value;
  }

  sort(input: Rel, columns: Column[], keys: { expr: Expr; descending?: boolean; nullsFirst?: boolean }[]): Rel {
    const binder = this.exprBinder(columns);
    const specs: SortSpec[] = keys.map((k) => {
      const b = binder.bind(k.expr);
      if (b.type === 'dynamic') throw queryError('Sorting by a dynamic value is not supported; convert it first.', k.expr.span);
      // Kusto: descending unless asc is written; nulls last when descending, first when ascending.
      const descending = k.descending ?? true;
      const nullsFirst = k.nullsFirst ?? !descending;
      // A stored number or time read as it is: its scan column can prune a top-N (decision 0038).
      const origin = b.json === undefined && PRUNING_KEY_TYPES.has(b.type) ? b.column?.origin : undefined;
      return {
        sql: b.type === 'string' ? strSql(b) : b.sql,
        type: b.type,
        descending,
        nullsFirst,
        ...(origin ? { origin } : {}),
        ...ticksFlag(b),
      };
    });
    return { kind: 'sort', input, keys: specs, columns };
  }

  /**
   * The items of an extend/project with calls of several-column functions (series_stats …)
   * spread into one named, already bound item per column (semantic/multi-column.ts).
   */
  private spreadItems(
    items: NamedExpr[],
    columns: Column[],
    sameOperator: SameOperatorNames,
  ): { item: NamedExpr; bound?: Bound }[] {
    return items.flatMap((item) => {
      const spread = expandMultiColumn(item, this.exprBinder(columns, sameOperator));
      if (!spread) return [{ item }];
      return spread.map((c) => ({
        item: { name: c.name, nameSpan: c.nameSpan ?? item.span, expr: item.expr, span: item.span },
        bound: c.bound,
      }));
    });
  }

  /** project: a new column list; every item reads the input row (Kusto), not other items. */
  project(input: Rel, columns: Column[], items: NamedExpr[]): Rel {
    const names = new NameAllocator();
    const sameOperator: SameOperatorNames = { operator: 'project', names: new Set(), segments: [] };
    const outputs: Output[] = [];
    const pending: { item: NamedExpr; b: Bound }[] = [];
    for (const { item, bound } of this.spreadItems(items, columns, sameOperator)) {
      if (item.expr.kind === 'star') throw queryError("'project *' is not supported; list the columns.", item.span);
      const b = bound ?? this.exprBinder(columns, sameOperator).bind(item.expr);
      pending.push({ item, b });
      if (item.name) {
        if (!names.claim(item.name))
          throw queryError(`A column with the name '${item.name}' is already declared.`, item.nameSpan ?? item.span);
      } else if (item.expr.kind === 'name') {
        if (!names.claim(item.expr.name))
          throw queryError(`A column with the name '${item.expr.name}' is already declared.`, item.span);
      }
      const name = item.name ?? (item.expr.kind === 'name' ? item.expr.name : undefined);
      if (name) sameOperator.names.add(name);
    }
    for (const { item, b } of pending) {
      let name = item.name ?? (item.expr.kind === 'name' ? item.expr.name : undefined);
      if (!name) {
        const derived = expressionName(item.expr);
        name = derived !== undefined ? names.derive(derived) : names.column();
      }
      const col: Column = { name, type: b.type, id: this.ids.column(), ...columnMarks(b) };
      if (b.column?.origin) col.origin = b.column.origin;
      outputs.push({ col, sql: b.sql });
    }
    return {
      kind: 'project',
      input: this.withSegments(input, columns, sameOperator),
      outputs,
      columns: outputs.map((o) => o.col),
    };
  }

  /**
   * The input with the restart segments of row_number/row_cumsum added as hidden columns: one
   * step evaluates each restart flag (it may itself use prev/next), the next numbers the segments
   * by a running count of the flags. The operator's own outputs leave them out.
   */
  private withSegments(input: Rel, columns: Column[], sameOperator: SameOperatorNames): Rel {
    if (sameOperator.segments.length === 0) return input;
    const pass = columns.map((c) => ({ col: c, sql: identOf(c) }));
    const flagCols = sameOperator.segments.map((s) => ({ name: s.flagId, type: 'bool' as const, id: s.flagId }));
    const flags: Rel = {
      kind: 'project',
      input,
      outputs: [...pass, ...sameOperator.segments.map((s, i) => ({ col: flagCols[i] as Column, sql: s.flag }))],
      columns: [...columns, ...flagCols],
    };
    const segCols = sameOperator.segments.map((s) => ({ name: s.id, type: 'long' as const, id: s.id }));
    return {
      kind: 'project',
      input: flags,
      outputs: [
        ...pass,
        ...sameOperator.segments.map((s, i) => ({
          col: segCols[i] as Column,
          sql: sql`sum(CASE WHEN ${ident(s.flagId)} THEN 1 ELSE 0 END) OVER (${ROW_ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)`,
        })),
      ],
      columns: [...columns, ...segCols],
    };
  }

  /**
   * extend: existing columns stay; a new column with an existing name replaces it in place. Every
   * item reads the input row (Kusto): `extend x = x + 1, y = x` gives y the input x.
   */
  extend(input: Rel, columns: Column[], items: NamedExpr[], serializes = false): Rel {
    const outputs: Output[] = columns.map((c) => ({ col: c, sql: identOf(c) }));
    const names = new NameAllocator(columns.map((c) => c.name));
    const declared = new Set<string>();
    const sameOperator: SameOperatorNames = { operator: 'extend', names: declared, serializes, segments: [] };
    for (const { item, bound } of this.spreadItems(items, columns, sameOperator)) {
      if (item.expr.kind === 'star') throw queryError("'*' is not allowed in extend.", item.span);
      const b = bound ?? this.exprBinder(columns, sameOperator).bind(item.expr);
      let name = item.name ?? expressionName(item.expr);
      if (name !== undefined && declared.has(name)) {
        if (item.name) throw queryError(`A column with the name '${name}' is already declared.`, item.nameSpan ?? item.span);
        name = names.derive(name);
      }
      if (name === undefined) name = names.column();
      names.claim(name);
      declared.add(name);
      const col: Column = { name, type: b.type, id: this.ids.column(), ...columnMarks(b) };
      if (b.column?.origin) col.origin = b.column.origin;
      const at = outputs.findIndex((o) => o.col.name === name);
      if (at >= 0) outputs[at] = { col, sql: b.sql };
      else outputs.push({ col, sql: b.sql });
    }
    return {
      kind: 'project',
      input: this.withSegments(input, columns, sameOperator),
      outputs,
      columns: outputs.map((o) => o.col),
    };
  }

  summarize(input: Rel, columns: Column[], aggregates: NamedExpr[], by: NamedExpr[], span: Span, extraKeys: Output[] = []): Rel {
    const rowBinder = this.exprBinder(columns);
    const names = new NameAllocator();
    const keyItems = [...by];
    const aggItems: NamedExpr[] = [];
    for (const item of aggregates) {
      // The product's `summarize machine`: a bare column without aggregate is a key.
      if (!item.name && item.expr.kind === 'name' && columns.some((c) => c.name === (item.expr as { name: string }).name))
        keyItems.push(item);
      else aggItems.push(item);
    }
    if (keyItems.length === 0 && aggItems.length === 0) throw queryError('summarize needs an aggregate or a by clause.', span);

    const keyOutputs: Output[] = [];
    for (const item of keyItems) {
      const b = rowBinder.bind(item.expr);
      let name = item.name ?? expressionName(item.expr);
      if (item.name || item.expr.kind === 'name') {
        if (!names.claim(name as string))
          throw queryError(`A column with the name '${name}' is already declared.`, item.nameSpan ?? item.span);
      } else {
        name = name !== undefined ? names.derive(name) : names.column();
      }
      const col: Column = { name: name as string, type: b.type, id: this.ids.column(), ...columnMarks(b) };
      if (b.column?.origin) col.origin = b.column.origin;
      // Decimal keys group by value: one form for equal values (1.5 and 1.50; decision 0031).
      keyOutputs.push({
        col,
        sql: b.type === 'string' ? strSql(b) : b.type === 'decimal' ? sql`kql_decimal_normal(${b.sql})` : b.sql,
      });
    }

    keyOutputs.push(...extraKeys);
    const collector = new AggregateCollector({
      ids: this.ids,
      scope: columns,
      keyNames: new Set(keyOutputs.map((k) => k.col.name)),
    });
    const aggBinder = new ExprBinder({ ...rowBinder.ctx, aggregates: collector });
    const itemValues: {
      name?: string;
      nameSpan?: Span;
      derived?: string;
      fixed?: boolean;
      value: Sql;
      type: KqlType;
      span: Span;
      ticks?: true;
      int32?: true;
    }[] = [];
    for (const item of aggItems) {
      const e = item.expr;
      if (e.kind === 'call' && aggregateFunction(e.name)?.multiColumn === true) {
        const outs = collector.bindTopLevel(e, aggBinder);
        outs.forEach((o, i) => {
          const explicit = i === 0 ? item.name : undefined;
          itemValues.push({
            name: explicit,
            nameSpan: item.nameSpan,
            derived: o.name,
            fixed: o.fixedName,
            value: o.value,
            type: o.type,
            span: item.span,
            ...columnMarks(o),
          });
        });
        continue;
      }
      if (e.kind === 'call' && aggregateFunction(e.name) !== undefined) {
        const [o] = collector.bindTopLevel(e, aggBinder);
        if (!o) continue;
        itemValues.push({
          name: item.name,
          nameSpan: item.nameSpan,
          derived: o.name,
          value: o.value,
          type: o.type,
          span: item.span,
          ...columnMarks(o),
        });
        continue;
      }
      const b = aggBinder.bind(e);
      itemValues.push({
        name: item.name,
        nameSpan: item.nameSpan,
        value: b.sql,
        type: b.type,
        span: item.span,
        ...columnMarks(b),
      });
    }
    const post: Output[] = keyOutputs.map((k) => ({ col: k.col, sql: identOf(k.col) }));
    for (const v of itemValues) {
      let name: string;
      if (v.name !== undefined) {
        if (!names.claim(v.name))
          throw queryError(`A column with the name '${v.name}' is already declared.`, v.nameSpan ?? v.span);
        name = v.name;
      } else if (v.derived !== undefined) {
        name = names.derive(v.derived);
      } else {
        name = names.column();
      }
      post.push({ col: { name, type: v.type, id: this.ids.column(), ...columnMarks(v) }, sql: v.value });
    }

    const partialColumns: Column[] = keyOutputs.map((k) => k.col);
    const partialRel: Rel = {
      kind: 'partial-aggregate',
      input,
      keys: keyOutputs,
      aggregates: collector.parts,
      columns: partialColumns,
    };
    const finalCols = [...keyOutputs.map((k) => k.col), ...collector.parts.flatMap((p) => p.finals.map((f) => f.col))];
    const finalRel: Rel = {
      kind: 'final-aggregate',
      input: partialRel,
      keys: keyOutputs.map((k) => k.col),
      aggregates: collector.parts,
      columns: finalCols,
    };
    return { kind: 'project', input: finalRel, outputs: post, columns: post.map((o) => o.col) };
  }

  /**
   * parse and parse-where. The pattern becomes one regex searched in the text: string constants
   * literally (simple, relaxed) or as regexes (regex), `*` skips the shortest text, a long or real
   * column takes a number (not in relaxed), any other column the shortest text up to what follows (the last one the
   * rest). simple and regex are strict: when
   * the text does not match or a typed column does not convert, every extracted column is null (""
   * for strings) and parse-where drops the row; relaxed keeps the columns that convert.
   */
  private parse(input: Rel, columns: Column[], op: Extract<Operator, { kind: 'parse' }>): Rel {
    const binder = this.exprBinder(columns);
    const source = convert(binder.bind(op.source), 'string', 'parse');
    let regex = '';
    const captures: { name: string; type: KqlType; group: number; span: Span }[] = [];
    op.parts.forEach((part, i) => {
      if (part.kind === 'text') {
        regex += op.mode === 'regex' ? `(?:${part.text})` : escapeRegex(part.text);
      } else if (part.kind === 'star') {
        regex += '.*?';
      } else {
        const last = i === op.parts.length - 1;
        // In the strict modes a number column takes a number (Kusto's pattern for the type); any
        // other column the shortest text up to what follows, the last one the rest of the text.
        const type = op.mode === 'relaxed' ? 'string' : (part.type ?? 'string');
        regex +=
          type === 'long' ? '(-?\\d+)' : type === 'real' ? '(-?\\d+(?:\\.\\d+)?(?:[eE][-+]?\\d+)?)' : last ? '(.*)' : '(.*?)';
        captures.push({ name: part.name, type: part.type ?? 'string', group: captures.length + 1, span: part.span });
      }
    });
    if (captures.length === 0)
      throw queryError(`${op.where ? 'parse-where' : 'parse'} needs at least one column to extract.`, op.span);
    // flags= (kind=regex): RE2's own flags, for the whole pattern.
    if (op.flags !== undefined) regex = `(?${op.flags})${regex}`;
    const text = strSql(source);
    const matches = sql`regexp_matches(${text}, ${str(regex)})`;
    const seen = new Set<string>();
    for (const cap of captures) {
      if (seen.has(cap.name)) throw queryError(`A column with the name '${cap.name}' is already declared.`, cap.span);
      seen.add(cap.name);
    }
    // Three stages, each reading the one before as columns: the match and the raw captured texts,
    // then the typed values, then the strict check and the result. Written as one expression the
    // regex (a statement parameter, which DuckDB does not share between uses) ran once per use of
    // the text — a datetime's conversion reads its text several times (decision 0048).
    const pass = (cols: Column[]): Output[] => cols.map((c) => ({ col: c, sql: identOf(c) }));
    const hidden = (what: string, type: KqlType): Column => this.newColumn(`\u0000parse:${what}`, type);
    const matched = hidden('matched', 'bool');
    const raws = captures.map((cap) => ({
      col: hidden(`raw:${cap.group}`, 'string'),
      sql: sql`(CASE WHEN ${matches} THEN regexp_extract(${text}, ${str(regex)}, CAST(${int(cap.group)} AS INTEGER)) ELSE '' END)`,
    }));
    const stage1Outputs = [...pass(columns), { col: matched, sql: matches }, ...raws];
    const stage1: Rel = { kind: 'project', input, outputs: stage1Outputs, columns: stage1Outputs.map((o) => o.col) };
    const values = captures.map((cap, i) => {
      const raw: Bound = { type: 'string', sql: identOf((raws[i] as Output).col), notNull: true, span: cap.span };
      const value = cap.type === 'string' ? raw : convert(raw, cap.type, 'parse');
      // A datetime read from the text keeps a 7th fractional digit: the column carries ticks (decision 0048).
      return { cap, col: { ...hidden(`value:${cap.group}`, cap.type), ...ticksFlag(value) }, sql: value.sql };
    });
    const stage2Outputs = [
      ...pass(columns),
      { col: matched, sql: identOf(matched) },
      ...values.map((v) => ({ col: v.col, sql: v.sql })),
    ];
    const stage2: Rel = { kind: 'project', input: stage1, outputs: stage2Outputs, columns: stage2Outputs.map((o) => o.col) };
    // Strict modes: the text matched and every typed column converted.
    const typed = values.filter((v) => v.cap.type !== 'string').map((v) => sql`${identOf(v.col)} IS NOT NULL`);
    const ok =
      op.mode === 'relaxed' || typed.length === 0 ? identOf(matched) : sql`(${identOf(matched)} AND ${join(typed, ' AND ')})`;
    const outputs: Output[] = pass(columns);
    for (const { cap, col: valueCol } of values) {
      const strict = op.mode !== 'relaxed' && typed.length > 0;
      const sqlValue = strict
        ? sql`(CASE WHEN ${ok} THEN ${identOf(valueCol)} ELSE ${cap.type === 'string' ? sql`''` : sql`NULL`} END)`
        : identOf(valueCol);
      const col: Column = { name: cap.name, type: cap.type, id: this.ids.column(), ...ticksFlag(valueCol) };
      const at = outputs.findIndex((o) => o.col.name === cap.name);
      if (at >= 0) outputs[at] = { col, sql: sqlValue };
      else outputs.push({ col, sql: sqlValue });
    }
    const filtered: Rel = op.where
      ? { kind: 'filter', input: stage2, predicate: ok, columns: stage2Outputs.map((o) => o.col) }
      : stage2;
    return { kind: 'project', input: filtered, outputs, columns: outputs.map((o) => o.col) };
  }

  /**
   * What storageTime and timeBounds both ask of a where clause's operands: is it the scan's time
   * column (possibly renamed), and which constant datetime (µs) does it bind to, if any.
   */
  private timeOperands(columns: Column[]) {
    const binder = this.exprBinder(columns);
    const isTime = (e: Expr) => e.kind === 'name' && columns.find((c) => c.name === e.name)?.origin === this.options.timeColumn;
    const constTime = (e: Expr): bigint | undefined => {
      try {
        const b = binder.bind(e);
        return b.value?.type === 'datetime' && b.value.value !== null ? b.value.value : undefined;
      } catch {
        return undefined;
      }
    };
    return { binder, isTime, constTime };
  }

  /**
   * The conjuncts of a where clause the storage can apply exactly (StorageTime): `<`, `<=`, `>`,
   * `>=` or `==` between the scan's time column (possibly renamed) and a constant datetime, as
   * inclusive µs bounds (`> v` is `>= v + 1`: stored timestamps are whole microseconds), and the
   * other conjuncts bound again as the residual predicate. Undefined when there is no such
   * conjunct or the residual does not bind on its own.
   */
  private storageTime(predicate: Expr, columns: Column[]): StorageTime | undefined {
    const { isTime, constTime } = this.timeOperands(columns);
    const conjuncts: Expr[] = [];
    const flatten = (e: Expr) => {
      if (e.kind === 'binary' && e.op === 'and') {
        flatten(e.left);
        flatten(e.right);
      } else conjuncts.push(e);
    };
    flatten(predicate);
    const bounds: TimeBounds = {};
    const lower = (v: bigint) => {
      if (bounds.fromUs === undefined || v > bounds.fromUs) bounds.fromUs = v;
    };
    const upper = (v: bigint) => {
      if (bounds.toUs === undefined || v < bounds.toUs) bounds.toUs = v;
    };
    const rest: Expr[] = [];
    for (const e of conjuncts) {
      if (e.kind !== 'binary' || !['<', '<=', '>', '>=', '=='].includes(e.op)) {
        rest.push(e);
        continue;
      }
      let op = e.op;
      let value: bigint | undefined;
      if (isTime(e.left)) value = constTime(e.right);
      else if (isTime(e.right)) {
        value = constTime(e.left);
        op = op === '<' ? '>' : op === '<=' ? '>=' : op === '>' ? '<' : op === '>=' ? '<=' : op;
      }
      // The bounds travel as JSON-safe numbers (µs): a datetime past year ~2255 stays in the statement.
      if (value === undefined || value >= SAFE_US || value <= -SAFE_US) {
        rest.push(e);
        continue;
      }
      if (op === '>') lower(value + 1n);
      if (op === '>=' || op === '==') lower(value);
      if (op === '<') upper(value - 1n);
      if (op === '<=' || op === '==') upper(value);
    }
    if (rest.length === conjuncts.length) return undefined;
    if (rest.length === 0) return { bounds };
    const [first, ...more] = rest as [Expr, ...Expr[]];
    const joined = more.reduce<Expr>(
      (left, right) => ({ kind: 'binary', op: 'and', opSpan: left.span, left, right, span: left.span }),
      first,
    );
    try {
      const b = this.exprBinder(columns).bind(joined, true);
      const residual = b.type === 'bool' ? b : b.type === 'dynamic' ? convert(b, 'bool', 'where') : undefined;
      return residual ? { bounds, residual: residual.sql } : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Bounds on the time column implied by a where clause: conjuncts comparing the scan's time
   * column (possibly renamed) with constant datetimes. Conservative: bounds are inclusive.
   */
  private timeBounds(predicate: Expr, columns: Column[]): TimeBounds | undefined {
    const { binder, isTime, constTime } = this.timeOperands(columns);
    const bounds: TimeBounds = {};
    const lower = (v: bigint) => {
      if (bounds.fromUs === undefined || v > bounds.fromUs) bounds.fromUs = v;
    };
    const upper = (v: bigint) => {
      if (bounds.toUs === undefined || v < bounds.toUs) bounds.toUs = v;
    };
    const visit = (e: Expr) => {
      if (e.kind === 'binary' && e.op === 'and') {
        visit(e.left);
        visit(e.right);
        return;
      }
      if (e.kind === 'binary' && ['<', '<=', '>', '>=', '=='].includes(e.op)) {
        let op = e.op;
        let value: bigint | undefined;
        if (isTime(e.left)) value = constTime(e.right);
        else if (isTime(e.right)) {
          value = constTime(e.left);
          op = op === '<' ? '>' : op === '<=' ? '>=' : op === '>' ? '<' : op === '>=' ? '<=' : op;
        }
        if (value === undefined) return;
        if (op === '>' || op === '>=' || op === '==') lower(value);
        if (op === '<' || op === '<=' || op === '==') upper(value);
        return;
      }
      if (e.kind === 'between' && !e.negated && isTime(e.left)) {
        const lo = constTime(e.low);
        if (lo !== undefined) {
          lower(lo);
          const hiBound = binder.bind(e.high);
          if (hiBound.value?.type === 'datetime' && hiBound.value.value !== null) upper(hiBound.value.value);
          else if (hiBound.value?.type === 'timespan' && hiBound.value.value !== null) upper(lo + hiBound.value.value / 10n);
        }
      }
    };
    visit(predicate);
    return bounds.fromUs === undefined && bounds.toUs === undefined ? undefined : bounds;
  }
}

/** Beyond this a µs time bound is not a safe integer as a JS number (storageTime keeps it in SQL). */
const SAFE_US = BigInt(Number.MAX_SAFE_INTEGER);

/** The elements mv-expand makes of one dynamic value, as a SQL list of JSON (see mvExpand). */
function expansionList(v: Sql, bagExpansion: 'bag' | 'array', limit: bigint | undefined): Sql {
  const entry = bagExpansion === 'bag' ? sql`json_object(e.key, e.value)` : sql`json_array(e.key, e.value)`;
  const list = sql`(CASE WHEN ${v} IS NULL THEN [NULL::JSON] WHEN json_type(${v}) = 'ARRAY' THEN CAST(${v} AS JSON[]) WHEN json_type(${v}) = 'OBJECT' THEN list_transform(map_entries(CAST(${v} AS MAP(VARCHAR, JSON))), e -> ${entry}) ELSE [${v}] END)`;
  return limit === undefined ? list : sql`list_slice(${list}, 1, ${int(limit)})`;
}

/**
 * `to typeof(T)`: a cast only; an element of another JSON type becomes null ("" for strings).
 * `ticks`: the cast answers a datetime carried as ticks (a 7th fractional digit of the element's
 * text kept, decision 0048), so the column made of it is marked.
 */
function elementCast(type: KqlType, span: Span): { cast: (e: Sql) => Sql; ticks: boolean } {
  const plain = (cast: (e: Sql) => Sql) => ({ cast, ticks: false });
  switch (type) {
    case 'long':
      return plain((e) => sql`(CASE WHEN json_type(${e}) IN ('BIGINT', 'UBIGINT') THEN CAST(${e} AS BIGINT) END)`);
    case 'real':
      return plain((e) => sql`(CASE WHEN json_type(${e}) IN ('DOUBLE', 'BIGINT', 'UBIGINT') THEN CAST(${e} AS DOUBLE) END)`);
    case 'bool':
      return plain((e) => sql`(CASE WHEN json_type(${e}) = 'BOOLEAN' THEN CAST(${e} AS BOOLEAN) END)`);
    case 'string':
      return plain((e) => sql`(CASE WHEN json_type(${e}) = 'VARCHAR' THEN json_extract_string(${e}, '$') ELSE '' END)`);
    case 'datetime':
    case 'timespan':
    case 'decimal': {
      // As todatetime/totimespan/todecimal of the element (make-series writes its axis as such
      // strings; a decimal in a dynamic value is the string of its text).
      const cast = (e: Sql) => convert({ type: 'dynamic', sql: e, span }, type, 'mv-expand');
      return { cast: (e) => cast(e).sql, ticks: cast(sql`NULL`).ticks === true };
    }
    default:
      throw queryError(`mv-expand … to typeof(${type}) is not supported.`, span);
  }
}

/** The names that earlier items of one extend/project define. */
interface SameOperatorNames {
  operator: 'extend' | 'project';
  names: Set<string>;
  /** Restart segments the operator's row functions use (withSegments adds their steps). */
  segments: { flag: Sql; flagId: string; id: string }[];
  /** serialize: its items see serialized rows whatever the input. */
  serializes?: boolean;
}

/** Whether a column name matches a project-keep/project-reorder pattern (`*` any run of characters). */
function matchesPattern(name: string, pattern: string): boolean {
  if (!pattern.includes('*')) return name === pattern;
  return new RegExp(`^${pattern.split('*').map(escapeRegex).join('.*')}$`).test(name);
}

/** getschema's columns, and the .NET type Kusto reports for each KQL type. */
const GETSCHEMA_COLUMNS: [string, KqlType][] = [
  ['ColumnName', 'string'],
  ['ColumnOrdinal', 'long'],
  ['DataType', 'string'],
  ['ColumnType', 'string'],
];
const DATA_TYPE: Record<KqlType, string> = {
  string: 'System.String',
  long: 'System.Int64',
  real: 'System.Double',
  decimal: 'System.Data.SqlTypes.SqlDecimal',
  bool: 'System.SByte',
  datetime: 'System.DateTime',
  timespan: 'System.TimeSpan',
  guid: 'System.Guid',
  dynamic: 'System.Object',
};

/** Operators after which rows keep (or get) an order. */
function keepsOrder(op: Operator, inputSerialized: boolean): boolean {
  switch (op.kind) {
    case 'sort':
    case 'top':
    case 'serialize':
      return true;
    case 'where':
    case 'project':
    case 'project-away':
    case 'project-rename':
    case 'project-keep':
    case 'project-reorder':
    case 'extend':
    case 'take':
    case 'parse':
    case 'parse-kv':
    case 'mv-expand':
      return inputSerialized;
    default:
      return false;
  }
}

/**
 * An expression binder for one item of an extend/project: a name that only an earlier item of the
 * same operator defines is refused with a hint (Kusto's analyzer refuses it too), rather than
 * read from the other item as SQL-minded engines would.
 */
class SameOperatorBinder extends ExprBinder {
  constructor(
    ctx: ExprBinder['ctx'],
    private readonly sameOperator: SameOperatorNames,
  ) {
    super(ctx);
  }

  override bind(expr: Expr, predicate = false): Bound {
    if (
      expr.kind === 'name' &&
      this.sameOperator.names.has(expr.name) &&
      !this.ctx.columns.has(expr.name) &&
      !this.ctx.lets.has(expr.name)
    ) {
      const op = this.sameOperator.operator;
      throw queryError(
        `The name '${expr.name}' does not refer to any known column, table, variable or function: every item of one ${op} reads the input row, so a column that the same ${op} defines is not visible to its other items. Use a second ${op}.`,
        expr.span,
      );
    }
    return super.bind(expr, predicate);
  }
}

export { join, literalSql };
