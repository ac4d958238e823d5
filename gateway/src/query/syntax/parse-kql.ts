/**
 * The parser adapter: query text → the engine's syntax tree (`QueryAst`), using Microsoft's KQL
 * parser for the grammar. Limits are enforced before the parser sees the text (length, bracket
 * depth) and while converting (expression depth), so hostile input is refused quickly. Anything the
 * engine does not implement is refused here or in the binder, by name, with its position.
 * Completions for the editor (`kustoCompletions`) come from Microsoft's language service here
 * too, as plain data: no other file touches the bridge objects (docs/decisions/0003-kql-engine.md).
 */
import { encodeDecimal, type StrataError, sqlDecimal } from '@strata/common';
import { queryError, type Span, unsupportedOperator } from '../errors.js';
import { refusedType } from '../refused-names.js';
import { type KqlType, kqlTypeFromName } from '../types.js';
import type {
  CallSource,
  Expr,
  FunctionDecl,
  FunctionParam,
  JoinCondition,
  JoinKind,
  LetStatement,
  LiteralValue,
  NamedExpr,
  Operator,
  ParseKvSpec,
  ParsePatternPart,
  QueryAst,
  QueryParameter,
  RenderHint,
  SearchSpec,
  SortKey,
  Source,
  TabularExpr,
  TopNestedLevel,
  UnionOptions,
  Value,
} from './ast.js';
import { type KDiagnostic, type KList, type KNode, kustoLanguage } from './kusto-runtime.js';
import {
  hasSubMicrosecondDigits,
  parseBoolLiteral,
  parseDateTimeLiteral,
  parseGuidLiteral,
  parseLongLiteral,
  parseRealLiteral,
  parseTimespanLiteral,
  subMicrosecondMessage,
  tickDigit,
} from './literals.js';
import { prescan, tokenizeRender } from './prescan.js';

export interface ParseLimits {
  /** Longest accepted query text, in characters. */
  maxQueryLength: number;
  /** Deepest accepted bracket nesting ((), [], {}). */
  maxBracketDepth: number;
  /** Deepest accepted expression tree (long `a or b or …` chains nest too). */
  maxExpressionDepth: number;
  /** Most pipeline steps in one tabular expression. */
  maxPipelineSteps: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = {
  maxQueryLength: 65_536,
  maxBracketDepth: 64,
  maxExpressionDepth: 512,
  maxPipelineSteps: 256,
};

/**
 * `set` options that only tune how Kusto runs a query (tracing, result cache, memory and fan-out
 * limits, time-outs, client tags); accepted and ignored. Options that change answers
 * (truncation, query_now, …) are refused by name.
 */
const JOIN_KINDS = [
  'innerunique',
  'inner',
  'leftouter',
  'rightouter',
  'fullouter',
  'leftanti',
  'rightanti',
  'leftsemi',
  'rightsemi',
];

/** Kusto's other spellings of join kinds. */
const JOIN_KIND_ALIASES: Record<string, string> = { anti: 'leftanti', leftantisemi: 'leftanti', rightantisemi: 'rightanti' };

const SET_OPTIONS_WITHOUT_EFFECT = new Set([
  'querytrace',
  'query_results_cache_max_age',
  'query_results_cache_force_refresh',
  'query_results_cache_per_shard',
  'servertimeout',
  'maxmemoryconsumptionperiterator',
  'max_memory_consumption_per_query_per_node',
  'maxoutputcolumns',
  'query_fanout_nodes_percent',
  'query_fanout_threads_percent',
  'query_datascope',
  'deferpartialqueryfailures',
  'request_app_name',
  'request_description',
  'request_user',
  'request_readonly',
  'request_readonly_hardline',
  'norequesttimeout',
  'best_effort',
  'query_weakconsistency_session_id',
  'queryconsistency',
]);

/** Diagnostics the engine accepts because it implements the construct itself. */
function isToleratedDiagnostic(message: string): boolean {
  // Product type names such as `int64`, `float64`, `json` in datatable and parse declarations.
  const m = /^The name '([^']+)' is not a valid type name/.exec(message);
  return m !== null && kqlTypeFromName(m[1] as string) !== undefined;
}

const shortName = (node: KNode): string => {
  const full = (node.constructor as { $$name?: string }).$$name ?? '';
  return full.slice(full.lastIndexOf('.') + 1);
};

const spanOf = (node: KNode): Span => ({ start: node.TextStart, end: node.TextStart + node.Width });

function prop(node: KNode, name: string): KNode | null {
  return (node[name] as KNode | null | undefined) ?? null;
}

function req(node: KNode, name: string): KNode {
  const child = prop(node, name);
  if (!child) throw queryError('The query is incomplete.', spanOf(node));
  return child;
}

/** Elements of a `SyntaxList<SeparatedElement<T>>` (or a plain `SyntaxList<T>`). */
function elements(node: KNode, name: string): KNode[] {
  const list = node[name] as KList<KNode> | null | undefined;
  if (!list) return [];
  const out: KNode[] = [];
  for (let i = 0; i < list.Count; i++) {
    const item = list.getItem(i);
    const inner = (item as KNode)['Element$1'] as KNode | undefined;
    out.push(inner ?? item);
  }
  return out;
}

function tokenText(node: KNode | null): string {
  return node ? String((node as unknown as { Text?: string }).Text ?? '') : '';
}

class Converter {
  private depth = 0;
  /** What `set query_bin_auto_size` / `query_bin_auto_at` gave, for bin_auto (see binAutoCall). */
  private readonly binAuto: { size?: Expr; at?: Expr } = {};

  constructor(
    private readonly text: string,
    private readonly limits: ParseLimits,
    private readonly kinds: Record<string, number>,
    /** Datatable values parsed separately, by the offset just after their `[`. */
    private readonly datatableValues: Map<number, Expr[]> = new Map(),
  ) {}

  private enter(node: KNode): void {
    if (++this.depth > this.limits.maxExpressionDepth) {
      throw queryError(`The query nests expressions deeper than ${this.limits.maxExpressionDepth} levels.`, spanOf(node));
    }
  }

  private source(node: KNode): string {
    return this.text.slice(node.TextStart, node.TextStart + node.Width);
  }

  // ---------------------------------------------------------------- statements

  query(root: KNode, render: RenderHint | undefined): QueryAst {
    const directives = elements(root, 'Directives');
    if (directives.length > 0) throw queryError('Directives are not supported.', spanOf(directives[0] as KNode));
    const statements = elements(root, 'Statements').filter((s) => s.Width > 0);
    const lets: LetStatement[] = [];
    const parameters: QueryParameter[] = [];
    let body: TabularExpr | undefined;
    for (const st of statements) {
      const kind = shortName(st);
      if (body) throw queryError('Only one query statement is supported; it must come last.', spanOf(st));
      if (kind === 'LetStatement') lets.push(this.letStatement(st));
      else if (kind === 'ExpressionStatement') body = this.tabular(req(st, 'Expression'));
      else if (kind === 'SetOptionStatement') this.setOption(st);
      else if (kind === 'QueryParametersStatement') {
        if (lets.length > 0) throw queryError('declare query_parameters must come before the let statements.', spanOf(st));
        parameters.push(...this.queryParameters(st));
      } else throw queryError(`The statement '${this.firstWord(st)}' is not supported.`, spanOf(st));
    }
    if (!body) throw queryError('The query has no tabular expression to run.', { start: 0, end: this.text.length });
    const ast: QueryAst = { lets, body };
    if (parameters.length > 0) ast.parameters = parameters;
    if (render) ast.render = render;
    return ast;
  }

  /**
   * `set option [= value]`: accepted when the option only tunes how Kusto runs the query
   * (tracing, caching, memory, fan-out, client tags), never when it would change the answer.
   */
  private setOption(node: KNode): void {
    const nameNode = req(node, 'Name');
    const name = this.declaredName(nameNode).toLowerCase();
    if (SET_OPTIONS_WITHOUT_EFFECT.has(name) || name.startsWith('hint.')) return;
    if (name === 'query_bin_auto_size' || name === 'query_bin_auto_at') {
      const clause = prop(node, 'ValueClause');
      const value = clause && (prop(clause, 'Expression') ?? prop(clause, 'Value'));
      if (!value) throw queryError(`The set option '${name}' needs a value.`, spanOf(nameNode));
      this.binAuto[name === 'query_bin_auto_size' ? 'size' : 'at'] = this.expr(value);
      return;
    }
    throw queryError(
      `The set option '${name}' is not supported (only options that do not change results are accepted).`,
      spanOf(nameNode),
    );
  }

  /**
   * `bin_auto(x)` is `bin(x, size)` — or `bin_at(x, size, at)` — with the size and fixed point the
   * query's `set query_bin_auto_size` / `query_bin_auto_at` statements gave (they come before the
   * body, so they are known here). Without a size Kusto has nothing to bin by: refused by name.
   */
  private binAutoCall(args: Expr[], nameSpan: Span, span: Span): Expr {
    if (args.length !== 1) throw queryError(`The function 'bin_auto' takes 1 argument, not ${args.length}.`, span);
    const { size, at } = this.binAuto;
    if (!size)
      throw queryError("bin_auto needs the bin size: put 'set query_bin_auto_size = <size>;' before the query.", nameSpan);
    const binArgs = at ? [args[0] as Expr, size, at] : [args[0] as Expr, size];
    return { kind: 'call', name: at ? 'bin_at' : 'bin', nameSpan, args: binArgs, span };
  }

  private queryParameters(node: KNode): QueryParameter[] {
    return elements(node, 'Parameters').map((p) => {
      const param = this.functionParam(p);
      if (param.type === 'tabular') throw queryError('A query parameter must have a scalar type.', param.span);
      const out: QueryParameter = { name: param.name, span: param.span, type: param.type };
      if (param.defaultValue) out.defaultValue = param.defaultValue;
      return out;
    });
  }

  private functionParam(node: KNode): FunctionParam {
    const decl = req(node, 'NameAndType');
    const nameNode = req(decl, 'Name');
    const typeNode = req(decl, 'Type');
    const param: FunctionParam = { name: this.declaredName(nameNode), span: spanOf(nameNode), type: 'tabular' };
    if (shortName(typeNode) === 'SchemaTypeExpression') {
      param.columns = [];
      for (const c of elements(typeNode, 'Columns')) {
        if (shortName(c) === 'StarExpression') continue;
        if (shortName(c) !== 'NameAndTypeDeclaration') throw queryError('A column of the schema was expected.', spanOf(c));
        param.columns.push({ name: this.declaredName(req(c, 'Name')), type: this.typeOf(req(c, 'Type')), span: spanOf(c) });
      }
    } else {
      param.type = this.typeOf(typeNode);
    }
    const def = prop(node, 'DefaultValue');
    if (def) param.defaultValue = this.expr(req(def, 'Value'));
    return param;
  }

  private typeOf(typeNode: KNode): NonNullable<ReturnType<typeof kqlTypeFromName>> {
    const typeName = this.source(typeNode).trim();
    const type = kqlTypeFromName(typeName);
    if (!type) throw refusedType(typeName, spanOf(typeNode));
    return type;
  }

  private functionDecl(node: KNode): FunctionDecl {
    const params = elements(req(node, 'Parameters'), 'Parameters').map((p) => this.functionParam(p));
    const body = req(node, 'Body');
    const lets: LetStatement[] = [];
    for (const st of elements(body, 'Statements').filter((x) => x.Width > 0)) {
      if (shortName(st) !== 'LetStatement')
        throw queryError(`The statement '${this.firstWord(st)}' is not supported in a function body.`, spanOf(st));
      lets.push(this.letStatement(st));
    }
    return { params, lets, result: this.value(req(body, 'Expression')), span: spanOf(node) };
  }

  /** A let value or function argument: scalar, tabular, or a name or call the binder resolves. */
  private value(node: KNode): Value {
    if (this.isTabularNode(node)) return { kind: 'tabular', tabular: this.tabular(node) };
    if (this.isNameLike(node)) return { kind: 'name', expr: this.expr(node), tabular: this.tabular(node) };
    if (shortName(node) === 'FunctionCallExpression') {
      const tabular = { source: this.callSource(node), operators: [], span: spanOf(node) };
      let expr: Expr | undefined;
      try {
        expr = this.expr(node);
      } catch {
        expr = undefined; // a call with tabular arguments reads only as tabular
      }
      return expr ? { kind: 'call', expr, tabular } : { kind: 'call', tabular };
    }
    return { kind: 'scalar', expr: this.expr(node) };
  }

  /** `materialize(T)`: a call of the built-in tabular function. */
  private materialize(node: KNode): CallSource {
    const inner = req(node, 'Expression');
    const span = spanOf(node);
    return {
      kind: 'call',
      name: 'materialize',
      nameSpan: { start: span.start, end: span.start + 'materialize'.length },
      args: [this.value(inner)],
      span,
    };
  }

  private callSource(node: KNode): CallSource {
    const nameNode = req(node, 'Name');
    return {
      kind: 'call',
      name: this.referencedName(nameNode),
      nameSpan: spanOf(nameNode),
      args: elements(req(node, 'ArgumentList'), 'Expressions').map((a) => this.value(a)),
      span: spanOf(node),
    };
  }

  private firstWord(node: KNode): string {
    return /^\s*([\w-]+)/.exec(this.source(node))?.[1] ?? shortName(node);
  }

  private letStatement(node: KNode): LetStatement {
    const nameNode = req(node, 'Name');
    const name = this.declaredName(nameNode);
    const valueNode = req(node, 'Expression');
    const kind = shortName(valueNode);
    const value: LetStatement['value'] =
      kind === 'FunctionDeclaration' ? { kind: 'function', decl: this.functionDecl(valueNode) } : this.value(valueNode);
    return { name, nameSpan: spanOf(nameNode), value, span: spanOf(node) };
  }

  private isTabularNode(node: KNode): boolean {
    const kind = shortName(node);
    if (
      [
        'PipeExpression',
        'DataTableExpression',
        'RangeOperator',
        'PrintOperator',
        'UnionOperator',
        'MaterializeExpression',
      ].includes(kind)
    )
      return true;
    if (kind === 'ParenthesizedExpression') return this.isTabularNode(req(node, 'Expression'));
    return false;
  }

  private isNameLike(node: KNode): boolean {
    const kind = shortName(node);
    if (kind === 'NameReference') return true;
    if (kind === 'PathExpression') return this.isNameLike(req(node, 'Expression'));
    if (kind === 'BracketedExpression') return this.isNameLike(req(node, 'Expression'));
    return false;
  }

  // ---------------------------------------------------------------- tabular

  tabular(node: KNode): TabularExpr {
    const operators: KNode[] = [];
    let cur = node;
    while (shortName(cur) === 'PipeExpression') {
      operators.push(req(cur, 'Operator'));
      if (operators.length > this.limits.maxPipelineSteps) {
        throw queryError(`The query has more than ${this.limits.maxPipelineSteps} pipeline steps.`, spanOf(node));
      }
      cur = req(cur, 'Expression');
    }
    operators.reverse();
    const source = this.tabularSource(cur);
    const ops = operators.map((op, i) => this.operator(op, i === operators.length - 1));
    return { source, operators: ops, span: spanOf(node) };
  }

  private tabularSource(node: KNode): Source {
    const kind = shortName(node);
    switch (kind) {
      case 'NameReference':
      case 'PathExpression':
      case 'BracketedExpression':
        return { kind: 'table', name: this.tableName(node), span: spanOf(node) };
      case 'DataTableExpression':
        return this.datatable(node);
      case 'RangeOperator':
        return {
          kind: 'range',
          column: this.declaredName(req(node, 'Name')),
          from: this.expr(req(node, 'From')),
          to: this.expr(req(node, 'To')),
          step: this.expr(req(node, 'Step')),
          span: spanOf(node),
        };
      case 'PrintOperator':
        return { kind: 'print', items: elements(node, 'Expressions').map((e) => this.named(e)), span: spanOf(node) };
      case 'UnionOperator':
        return this.unionOperator(node);
      case 'ParenthesizedExpression':
        return { kind: 'nested', tabular: this.tabular(req(node, 'Expression')), span: spanOf(node) };
      case 'FunctionCallExpression':
        return this.callSource(node);
      case 'MaterializeExpression':
        return this.materialize(node);
      case 'SearchOperator':
        return this.search(node);
      default:
        if (kind.endsWith('Operator')) throw unsupportedOperator(this.firstWord(node), this.keywordSpan(node));
        throw queryError(`'${this.snippet(node)}' is not a table.`, spanOf(node));
    }
  }

  private snippet(node: KNode): string {
    const s = this.source(node);
    return s.length > 40 ? `${s.slice(0, 40)}…` : s;
  }

  private keywordSpan(node: KNode): Span {
    const word = this.firstWord(node);
    const offset = this.source(node).indexOf(word);
    return { start: node.TextStart + Math.max(0, offset), end: node.TextStart + Math.max(0, offset) + word.length };
  }

  /** A dotted table name: `logship.agent.metrics`, `$metadata.schema.tables.fields`, `['a-b']`, `[x.y]`. */
  private tableName(node: KNode): string {
    const kind = shortName(node);
    if (kind === 'NameReference') return this.referencedName(node);
    if (kind === 'PathExpression') {
      const selector = req(node, 'Selector');
      if (shortName(selector) !== 'NameReference') throw queryError(`'${this.snippet(node)}' is not a table.`, spanOf(node));
      return `${this.tableName(req(node, 'Expression'))}.${this.referencedName(selector)}`;
    }
    if (kind === 'BracketedExpression') return this.tableName(req(node, 'Expression'));
    throw queryError(`'${this.snippet(node)}' is not a table.`, spanOf(node));
  }

  private referencedName(node: KNode): string {
    const name = req(node, 'Name');
    if (shortName(name) === 'BracketedName') return this.stringValue(req(name, 'Name'));
    return String((name as unknown as { SimpleName: string }).SimpleName);
  }

  private declaredName(node: KNode): string {
    const name = req(node, 'Name');
    if (shortName(name) === 'BracketedName') return this.stringValue(req(name, 'Name'));
    const simple = String((name as unknown as { SimpleName: string }).SimpleName ?? '');
    if (simple === '') throw queryError('A name is missing.', spanOf(node));
    return simple;
  }

  private stringValue(node: KNode): string {
    const lit = this.literal(node);
    if (lit.type !== 'string') throw queryError('A string literal was expected.', spanOf(node));
    return lit.value;
  }

  private datatable(node: KNode): Source {
    this.noParameters(node, 'datatable');
    const columns = elements(req(node, 'Schema'), 'Columns').map((c) => {
      const typeNode = req(c, 'Type');
      const typeName = this.source(typeNode).trim();
      const type = kqlTypeFromName(typeName);
      if (!type) throw refusedType(typeName, spanOf(typeNode));
      const nameNode = req(c, 'Name');
      return { name: this.declaredName(nameNode), type, span: spanOf(nameNode) };
    });
    const open = prop(node, 'OpenBracket');
    const values =
      (open && this.datatableValues.get(open.TextStart + open.Width)) ?? elements(node, 'Values').map((v) => this.expr(v));
    if (columns.length === 0) throw queryError('A datatable needs at least one column.', spanOf(node));
    if (values.length % columns.length !== 0) {
      throw queryError(
        `The datatable has ${values.length} values, which is not a multiple of its ${columns.length} columns.`,
        spanOf(node),
      );
    }
    return { kind: 'datatable', columns, values, span: spanOf(node) };
  }

  private noParameters(node: KNode, operator: string): void {
    const params = elements(node, 'Parameters');
    if (params.length > 0) {
      throw queryError(
        `The parameter '${this.source(params[0] as KNode).trim()}' of '${operator}' is not supported.`,
        spanOf(params[0] as KNode),
      );
    }
  }

  // ---------------------------------------------------------------- operators

  private operator(node: KNode, isLast: boolean): Operator {
    const kind = shortName(node);
    const span = spanOf(node);
    switch (kind) {
      case 'FilterOperator':
        this.noParameters(node, 'where');
        return { kind: 'where', predicate: this.expr(req(node, 'Condition')), span };
      case 'ProjectOperator':
        return { kind: 'project', items: elements(node, 'Expressions').map((e) => this.named(e, true)), span };
      case 'ExtendOperator':
        return { kind: 'extend', items: elements(node, 'Expressions').map((e) => this.named(e, true)), span };
      case 'SerializeOperator':
        this.noParameters(node, 'serialize');
        return { kind: 'serialize', items: elements(node, 'Expressions').map((e) => this.named(e)), span };
      case 'ProjectAwayOperator':
        return {
          kind: 'project-away',
          names: elements(node, 'Expressions').map((e) => {
            if (shortName(e) !== 'NameReference') throw queryError('project-away takes column names.', spanOf(e));
            return { name: this.referencedName(e), span: spanOf(e) };
          }),
          span,
        };
      case 'ProjectRenameOperator':
        return {
          kind: 'project-rename',
          items: elements(node, 'Expressions').map((e) => {
            const target = prop(e, 'Expression');
            if (shortName(e) !== 'SimpleNamedExpression' || !target || shortName(target) !== 'NameReference') {
              throw queryError('project-rename takes `new = old` pairs.', spanOf(e));
            }
            const nameNode = req(e, 'Name');
            return {
              name: this.declaredName(nameNode),
              nameSpan: spanOf(nameNode),
              from: this.referencedName(target),
              fromSpan: spanOf(target),
            };
          }),
          span,
        };
      case 'SummarizeOperator': {
        this.noParameters(node, 'summarize');
        const byClause = prop(node, 'ByClause');
        if (byClause && prop(byClause, 'BinClause'))
          throw queryError("summarize's bin= clause is not supported.", spanOf(byClause));
        return {
          kind: 'summarize',
          aggregates: elements(node, 'Aggregates').map((e) => this.named(e)),
          by: byClause ? elements(byClause, 'Expressions').map((e) => this.named(e)) : [],
          span,
        };
      }
      case 'MakeSeriesOperator':
        return this.makeSeries(node);
      case 'CountOperator': {
        const as = prop(node, 'AsIdentifier');
        if (!as) return { kind: 'count', span };
        // The clause holds a bare identifier token: `as Name`.
        const name = /^as\s+([A-Za-z_][\w]*)$/i.exec(this.source(as).trim())?.[1];
        if (!name) throw queryError('count as takes a plain column name.', spanOf(as));
        return { kind: 'count', name, span };
      }
      case 'ProjectKeepOperator':
        return {
          kind: 'project-keep',
          patterns: elements(node, 'Expressions').map((e) => ({ pattern: this.columnPattern(e), span: spanOf(e) })),
          span,
        };
      case 'ProjectReorderOperator':
        return {
          kind: 'project-reorder',
          patterns: elements(node, 'Expressions').map((e) => {
            if (shortName(e) !== 'OrderedExpression') return { pattern: this.columnPattern(e), span: spanOf(e) };
            const dir = tokenText(prop(req(e, 'Ordering'), 'AscOrDescKeyword')).toLowerCase();
            const order = dir === 'asc' || dir === 'desc' ? dir : undefined;
            if (!order) throw queryError('project-reorder orders by asc or desc (granny-asc/desc are not supported).', spanOf(e));
            return { pattern: this.columnPattern(req(e, 'Expression')), order, span: spanOf(e) };
          }),
          span,
        };
      case 'SampleOperator':
        this.noParameters(node, 'sample');
        return { kind: 'sample', count: this.expr(req(node, 'Expression')), span };
      case 'SampleDistinctOperator':
        this.noParameters(node, 'sample-distinct');
        return { kind: 'sample', count: this.expr(req(node, 'Expression')), of: this.expr(req(node, 'OfExpression')), span };
      case 'GetSchemaOperator':
        this.noParameters(node, 'getschema');
        return { kind: 'getschema', span };
      case 'DistinctOperator':
        this.noParameters(node, 'distinct');
        return { kind: 'distinct', items: elements(node, 'Expressions').map((e) => this.named(e)), span };
      case 'TakeOperator':
        this.noParameters(node, 'take');
        return { kind: 'take', count: this.expr(req(node, 'Expression')), span };
      case 'SortOperator':
        this.noParameters(node, 'sort');
        return { kind: 'sort', keys: elements(node, 'Expressions').map((e) => this.sortKey(e)), span };
      case 'TopOperator':
        this.noParameters(node, 'top');
        return { kind: 'top', count: this.expr(req(node, 'Expression')), key: this.sortKey(req(node, 'ByExpression')), span };
      case 'UnionOperator':
        return this.unionOperator(node);
      case 'ParseOperator':
        return this.parseOperator(node);
      case 'ParseWhereOperator':
        return this.parseOperator(node, true);
      case 'ParseKvOperator':
        return this.parseKvOperator(node);
      case 'AsOperator': {
        for (const p of elements(node, 'Parameters')) {
          // hint.materialized only says how Kusto caches the value; the answer is the same.
          const pname = this.declaredName(req(p, 'Name')).toLowerCase();
          if (pname !== 'hint.materialized') throw queryError(`The parameter '${pname}' of 'as' is not supported.`, spanOf(p));
        }
        const nameNode = req(node, 'Name');
        return { kind: 'as', name: this.declaredName(nameNode), nameSpan: spanOf(nameNode), span };
      }
      case 'MvExpandOperator':
        return this.mvExpand(node);
      case 'JoinOperator':
        return this.joinOperator(node, 'join');
      case 'LookupOperator':
        return this.joinOperator(node, 'lookup');
      case 'InvokeOperator': {
        const call = req(node, 'Function');
        if (shortName(call) !== 'FunctionCallExpression') throw queryError('invoke needs a function call.', spanOf(call));
        return { kind: 'invoke', call: this.callSource(call), span };
      }
      case 'EvaluateOperator':
        return this.evaluate(node);
      case 'SearchOperator': {
        const spec = this.search(node);
        if (spec.tables) throw queryError("'search in (…)' starts a query; after a pipe, search reads its input.", span);
        return spec;
      }
      case 'PartitionOperator': {
        for (const p of elements(node, 'Parameters')) {
          // hint.strategy, hint.shufflekey, hint.concurrency, hint.spread, hint.materialized: how Kusto runs it.
          const pname = this.declaredName(req(p, 'Name')).toLowerCase();
          if (!pname.startsWith('hint.'))
            throw queryError(`The parameter '${pname}' of 'partition' is not supported.`, spanOf(p));
        }
        const by = req(node, 'ByExpression');
        if (shortName(by) !== 'NameReference') throw queryError('partition by takes a column name.', spanOf(by));
        const operand = req(node, 'Operand');
        const key = { name: this.referencedName(by), span: spanOf(by) };
        if (shortName(operand) === 'PartitionSubquery') {
          return {
            kind: 'partition',
            key,
            subquery: { kind: 'operators', operators: this.operatorsOf(req(operand, 'Subquery')) },
            span,
          };
        }
        if (shortName(operand) === 'PartitionQuery') {
          return { kind: 'partition', key, subquery: { kind: 'query', tabular: this.tabular(req(operand, 'Query')) }, span };
        }
        throw queryError('partition needs a subquery in parentheses or braces.', spanOf(operand));
      }
      case 'MvApplyOperator':
        return this.mvApply(node);
      case 'ForkOperator':
      case 'FacetOperator': {
        // Both answer with several tables; the query API's answer is one table (docs/api.md, Query).
        const word = kind === 'ForkOperator' ? 'fork' : 'facet';
        throw queryError(
          `The operator '${word}' is not supported: it answers with several tables, and a query's answer is one table (docs/api.md); run each part as a query of its own.`,
          this.keywordSpan(node),
        );
      }
      case 'TopNestedOperator':
        return {
          kind: 'top-nested',
          levels: elements(node, 'Clauses').map((c) => this.topNestedLevel(c)),
          span,
        };
      case 'TopHittersOperator': {
        const byClause = prop(node, 'ByClause');
        const out: Operator = {
          kind: 'top-hitters',
          count: this.expr(req(node, 'Expression')),
          of: this.expr(req(node, 'OfExpression')),
          span,
        };
        if (byClause) out.by = this.expr(req(byClause, 'Expression'));
        return out;
      }
      case 'RenderOperator':
        throw queryError(isLast ? 'The render clause could not be read.' : "'render' must be the last operator.", span);
      default:
        throw unsupportedOperator(this.firstWord(node), this.keywordSpan(node));
    }
  }

  /** A pipeline of operators without a source: `(top 3 by x | project a)` in partition and mv-apply. */
  private operatorsOf(node: KNode): Operator[] {
    const nodes: KNode[] = [];
    let cur = node;
    while (shortName(cur) === 'PipeExpression') {
      nodes.push(req(cur, 'Operator'));
      if (nodes.length > this.limits.maxPipelineSteps) {
        throw queryError(`The query has more than ${this.limits.maxPipelineSteps} pipeline steps.`, spanOf(node));
      }
      cur = req(cur, 'Expression');
    }
    nodes.push(cur);
    nodes.reverse();
    return nodes.map((op) => this.operator(op, false));
  }

  /** `evaluate plugin(args) [: (schema)]`; hints (`hint.distribution` …) are accepted and change nothing. */
  private evaluate(node: KNode): Operator {
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      if (!name.startsWith('hint.')) throw queryError(`The parameter '${name}' of 'evaluate' is not supported.`, spanOf(p));
    }
    const call = req(node, 'FunctionCall');
    const nameNode = req(call, 'Name');
    const args: Expr[] = [];
    const named: { name: string; expr: Expr; span: Span }[] = [];
    for (const e of elements(req(call, 'ArgumentList'), 'Expressions')) {
      if (shortName(e) === 'SimpleNamedExpression') {
        named.push({ name: this.declaredName(req(e, 'Name')), expr: this.expr(req(e, 'Expression')), span: spanOf(e) });
      } else args.push(this.expr(e));
    }
    const out: Operator = {
      kind: 'evaluate',
      plugin: this.referencedName(call).toLowerCase(),
      pluginSpan: spanOf(nameNode),
      args,
      named,
      span: spanOf(node),
    };
    const clause = prop(node, 'Schema');
    if (clause) {
      const schema = req(clause, 'Schema');
      out.schema = {
        star: prop(schema, 'AsteriskToken') !== null && tokenText(prop(schema, 'AsteriskToken')) === '*',
        columns: elements(schema, 'Columns').map((c) => {
          const nameDecl = req(c, 'Name');
          return { name: this.declaredName(nameDecl), type: this.typeOf(req(c, 'Type')), span: spanOf(c) };
        }),
        span: spanOf(clause),
      };
    }
    return out;
  }

  /** `search [kind=case_sensitive|case_insensitive] [in (T, …)] predicate`. */
  private search(node: KNode): SearchSpec {
    let caseSensitive = false;
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const value = this.source(req(p, 'Expression')).trim().toLowerCase();
      if (name === 'kind' && ['case_sensitive', 'case_insensitive', 'default'].includes(value))
        caseSensitive = value === 'case_sensitive';
      else if (!name.startsWith('hint.'))
        throw queryError(`The parameter '${this.source(p).trim()}' of 'search' is not supported.`, spanOf(p));
    }
    if (prop(node, 'DataScope')) throw queryError("search's datascope= is not supported.", spanOf(node));
    const spec: SearchSpec = { kind: 'search', caseSensitive, predicate: this.expr(req(node, 'Condition')), span: spanOf(node) };
    const inClause = prop(node, 'InClause');
    if (inClause) spec.tables = elements(inClause, 'Expressions').map((e) => this.tableOrPattern(e));
    return spec;
  }

  /** One clause of top-nested: `[N] of [name =] e [with others = v] by [name =] agg [asc|desc]`. */
  private topNestedLevel(node: KNode): TopNestedLevel {
    const countNode = prop(node, 'Expression');
    const by = req(node, 'ByExpression');
    const ordered = shortName(by) === 'OrderedExpression';
    const dir = ordered ? tokenText(prop(req(by, 'Ordering'), 'AscOrDescKeyword')).toLowerCase() : '';
    const others = prop(node, 'WithOthersClause');
    const level: TopNestedLevel = {
      of: this.named(req(node, 'OfExpression')),
      by: this.named(ordered ? req(by, 'Expression') : by),
      descending: dir !== 'asc',
      span: spanOf(node),
    };
    if (countNode) level.count = this.expr(countNode);
    if (others) level.others = this.expr(req(others, 'Expression'));
    return level;
  }

  /** `make-series` in its two forms (`from … to … step …` and `in range(start, stop, step)`). */
  private makeSeries(node: KNode): Operator {
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      // Hints only steer how Kusto distributes the work; kind=nonempty changes answers (refused).
      if (!name.startsWith('hint.'))
        throw queryError(`The parameter '${this.source(p).trim()}' of 'make-series' is not supported.`, spanOf(p));
    }
    const aggregates = elements(node, 'Aggregates').map((e) => {
      const def = prop(e, 'DefaultExpression');
      const out: { item: NamedExpr; defaultValue?: Expr } = { item: this.named(req(e, 'Expression')) };
      if (def) out.defaultValue = this.expr(req(def, 'Expression'));
      return out;
    });
    const axis = this.expr(req(req(node, 'OnClause'), 'Expression'));
    const rangeClause = req(node, 'RangeClause');
    const byClause = prop(node, 'ByClause');
    const by = byClause ? elements(byClause, 'Expressions').map((e) => this.named(e)) : [];
    const span = spanOf(node);
    if (shortName(rangeClause) === 'MakeSeriesInRangeClause') {
      const args = elements(req(rangeClause, 'Arguments'), 'Expressions').map((a) => this.expr(a));
      if (args.length !== 3) throw queryError('in range() takes start, stop and step.', spanOf(rangeClause));
      const [from, to, step] = args as [Expr, Expr, Expr];
      return { kind: 'make-series', aggregates, axis, from, to, step, range: true, by, span };
    }
    const clause = (name: string): Expr | undefined => {
      const c = prop(rangeClause, name);
      return c ? this.expr(req(c, 'Expression')) : undefined;
    };
    const step = clause('MakeSeriesStepClause');
    if (!step) throw queryError('make-series needs a step.', spanOf(rangeClause));
    const op: Operator = { kind: 'make-series', aggregates, axis, step, by, span };
    const from = clause('MakeSeriesFromClause');
    const to = clause('MakeSeriesToClause');
    if (from) op.from = from;
    if (to) op.to = to;
    return op;
  }

  /** A column name or a wildcard pattern (`a*`, `*Id`) in project-keep / project-reorder. */
  private columnPattern(node: KNode): string {
    if (shortName(node) !== 'NameReference') throw queryError('A column name or pattern was expected.', spanOf(node));
    const name = req(node, 'Name');
    return shortName(name) === 'WildcardedName' ? this.source(name).trim() : this.referencedName(node);
  }

  /** `mv-expand [kind=bag|array] [with_itemindex=I] [Name =] e [to typeof(T)], … [limit N]`. */
  private mvExpand(node: KNode): Operator {
    let bagExpansion: 'bag' | 'array' = 'bag';
    let itemIndex: string | undefined;
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const valueNode = req(p, 'Expression');
      const value = this.source(valueNode).trim();
      if ((name === 'bagexpansion' || name === 'kind') && (value === 'bag' || value === 'array')) bagExpansion = value;
      else if (name === 'with_itemindex') itemIndex = this.declaredName(valueNode);
      else throw queryError(`The parameter '${this.source(p).trim()}' of 'mv-expand' is not supported.`, spanOf(p));
    }
    const items = elements(node, 'Expressions').map((e) => {
      const out: { item: NamedExpr; toType?: KqlType; toTypeSpan?: Span } = { item: this.named(req(e, 'Expression')) };
      const to = prop(e, 'ToTypeOf');
      if (to) {
        const types = elements(req(to, 'TypeOf'), 'Types');
        if (types.length !== 1) throw queryError('to typeof() takes one type.', spanOf(to));
        out.toType = this.typeOf(types[0] as KNode);
        out.toTypeSpan = spanOf(to);
      }
      return out;
    });
    const limitClause = prop(node, 'RowLimitClause');
    const op: Operator = { kind: 'mv-expand', items, bagExpansion, span: spanOf(node) };
    if (itemIndex) op.itemIndex = itemIndex;
    if (limitClause) op.limit = this.expr(req(limitClause, 'RowLimit'));
    return op;
  }

  /** `mv-apply [with_itemindex=I] items [limit N] on (operators)`. */
  private mvApply(node: KNode): Operator {
    let itemIndex: string | undefined;
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      if (name === 'with_itemindex') itemIndex = this.declaredName(req(p, 'Expression'));
      else throw queryError(`The parameter '${this.source(p).trim()}' of 'mv-apply' is not supported.`, spanOf(p));
    }
    if (prop(node, 'ContextIdClause')) throw queryError("mv-apply's id= clause is not supported.", spanOf(node));
    const items = elements(node, 'Expressions').map((e) => {
      const out: { item: NamedExpr; toType?: KqlType; toTypeSpan?: Span } = { item: this.named(req(e, 'Expression')) };
      const to = prop(e, 'ToTypeOf');
      if (to) {
        const types = elements(req(to, 'TypeOf'), 'Types');
        if (types.length !== 1) throw queryError('to typeof() takes one type.', spanOf(to));
        out.toType = this.typeOf(types[0] as KNode);
        out.toTypeSpan = spanOf(to);
      }
      return out;
    });
    const subquery = this.operatorsOf(req(req(node, 'Subquery'), 'Expression'));
    const op: Operator = { kind: 'mv-apply', items, subquery, span: spanOf(node) };
    if (itemIndex) op.itemIndex = itemIndex;
    const limitClause = prop(node, 'RowLimitClause');
    if (limitClause) op.limit = this.expr(req(limitClause, 'RowLimit'));
    return op;
  }

  /** `union` with its options; tables may be wildcard names (`App*`). */
  private unionOperator(node: KNode): Extract<Source, { kind: 'union' }> {
    const options: UnionOptions = {};
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const valueNode = req(p, 'Expression');
      const value = this.source(valueNode).trim();
      if (name === 'kind' && (value === 'inner' || value === 'outer')) options.kind = value;
      else if (name === 'withsource' || name === 'with_source') options.withsource = this.declaredName(valueNode);
      else if (name === 'isfuzzy' && (value === 'true' || value === 'false')) options.isfuzzy = value === 'true';
      else if (!name.startsWith('hint.'))
        throw queryError(`The parameter '${this.source(p).trim()}' of 'union' is not supported.`, spanOf(p));
    }
    const tables = elements(node, 'Expressions').map((e) => this.tableOrPattern(e));
    return { kind: 'union', tables, ...(Object.keys(options).length > 0 ? { options } : {}), span: spanOf(node) };
  }

  /** A tabular expression, or a (dotted) name with wildcards (`App*`, `logship.*`) that stands for every match. */
  private tableOrPattern(e: KNode): TabularExpr {
    const text = this.source(e).trim();
    if (text.includes('*') && /^[\w.$*-]+$/.test(text)) {
      return { source: { kind: 'table', name: text, pattern: true, span: spanOf(e) }, operators: [], span: spanOf(e) };
    }
    return this.tabular(e);
  }

  /** `join`/`lookup` with `kind=` and hints (hints only steer Kusto's execution: accepted). */
  private joinOperator(node: KNode, op: 'join' | 'lookup'): Operator {
    let joinKind = op === 'join' ? 'innerunique' : 'leftouter';
    for (const p of elements(node, 'Parameters')) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const value = this.source(req(p, 'Expression')).trim().toLowerCase();
      if (name === 'kind') joinKind = JOIN_KIND_ALIASES[value] ?? value;
      else if (!name.startsWith('hint.')) throw queryError(`The parameter '${name}' of '${op}' is not supported.`, spanOf(p));
    }
    const allowed = op === 'join' ? JOIN_KINDS : ['leftouter', 'inner'];
    if (!allowed.includes(joinKind)) throw queryError(`${op} kind=${joinKind} is not a kind Kusto has.`, spanOf(node));
    const clause = req(node, op === 'join' ? 'ConditionClause' : 'LookupClause');
    if (shortName(clause) !== 'JoinOnClause')
      throw queryError(`${op} needs an 'on' clause (join where is not supported).`, spanOf(clause));
    const on = elements(clause, 'Expressions').flatMap((e) => this.joinConditions(e));
    const right = this.tabular(req(node, 'Expression'));
    const span = spanOf(node);
    if (op === 'lookup') return { kind: 'lookup', joinKind: joinKind as 'leftouter' | 'inner', right, on, span };
    return { kind: 'join', joinKind: joinKind as JoinKind, right, on, span };
  }

  private joinConditions(node: KNode): JoinCondition[] {
    const kind = shortName(node);
    const span = spanOf(node);
    if (kind === 'NameReference') {
      const name = this.referencedName(node);
      return [{ left: name, right: name, span }];
    }
    if (kind === 'BinaryExpression') {
      const op = tokenText(req(node, 'Operator')).toLowerCase();
      if (op === 'and') return [...this.joinConditions(req(node, 'Left')), ...this.joinConditions(req(node, 'Right'))];
      if (op === '==') {
        const a = this.sideColumn(req(node, 'Left'));
        const b = this.sideColumn(req(node, 'Right'));
        if (a && b && a.side !== b.side) {
          const [l, r] = a.side === '$left' ? [a, b] : [b, a];
          return [{ left: l.name, right: r.name, span }];
        }
      }
    }
    throw queryError('A join condition is a column name or `$left.column == $right.column`.', span);
  }

  private sideColumn(node: KNode): { side: string; name: string } | undefined {
    if (shortName(node) !== 'PathExpression') return undefined;
    const target = req(node, 'Expression');
    const selector = req(node, 'Selector');
    if (shortName(target) !== 'NameReference' || shortName(selector) !== 'NameReference') return undefined;
    const side = this.referencedName(target);
    if (side !== '$left' && side !== '$right') return undefined;
    return { side, name: this.referencedName(selector) };
  }

  private sortKey(node: KNode): SortKey {
    if (shortName(node) !== 'OrderedExpression') return { expr: this.expr(node), span: spanOf(node) };
    const ordering = prop(node, 'Ordering');
    const key: SortKey = { expr: this.expr(req(node, 'Expression')), span: spanOf(node) };
    if (ordering) {
      const dir = tokenText(prop(ordering, 'AscOrDescKeyword')).toLowerCase();
      if (dir === 'asc') key.descending = false;
      else if (dir === 'desc') key.descending = true;
      const nulls = prop(ordering, 'NullsClause');
      if (nulls) key.nullsFirst = tokenText(prop(nulls, 'FirstOrLastKeyword')).toLowerCase() === 'first';
    }
    return key;
  }

  private parseOperator(node: KNode, where = false): Operator {
    const op = where ? 'parse-where' : 'parse';
    const params = elements(node, 'Parameters');
    let kindValue = 'simple';
    let flags: string | undefined;
    for (const p of params) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const raw = this.source(req(p, 'Expression'))
        .trim()
        .replace(/^['"]|['"]$/g, '');
      if (name === 'flags') {
        // RE2's flags: i (case), m (multi-line), s (. matches \n), U (ungreedy).
        if (!/^[imsU]+$/.test(raw)) throw queryError(`${op} flags=${raw} is not supported: use i, m, s and U.`, spanOf(p));
        flags = raw;
        continue;
      }
      if (name !== 'kind') throw queryError(`The parameter '${name}' of '${op}' is not supported.`, spanOf(p));
      kindValue = raw.toLowerCase();
    }
    const modes = where ? ['simple', 'regex'] : ['simple', 'regex', 'relaxed'];
    if (!modes.includes(kindValue)) throw queryError(`${op} kind=${kindValue} is not supported.`, spanOf(node));
    const mode = kindValue as 'simple' | 'regex' | 'relaxed';
    if (flags !== undefined && mode !== 'regex') throw queryError(`${op} flags= needs kind=regex.`, spanOf(node));
    const parts: ParsePatternPart[] = [];
    for (const p of elements(node, 'Patterns')) {
      const kind = shortName(p);
      if (kind === 'LiteralExpression' || kind === 'CompoundStringLiteralExpression') {
        parts.push({ kind: 'text', text: this.stringValue(p), span: spanOf(p) });
      } else if (kind === 'StarExpression') {
        parts.push({ kind: 'star', span: spanOf(p) });
      } else if (kind === 'NameDeclaration') {
        parts.push({ kind: 'column', name: this.declaredName(p), span: spanOf(p) });
      } else if (kind === 'NameAndTypeDeclaration') {
        const typeNode = req(p, 'Type');
        const typeName = this.source(typeNode).trim();
        const type = kqlTypeFromName(typeName);
        if (!type) throw refusedType(typeName, spanOf(typeNode));
        parts.push({ kind: 'column', name: this.declaredName(req(p, 'Name')), type, span: spanOf(p) });
      } else {
        throw queryError(`'${this.snippet(p)}' is not supported in a parse pattern.`, spanOf(p));
      }
    }
    const out: Operator = { kind: 'parse', mode, source: this.expr(req(node, 'Expression')), parts, span: spanOf(node) };
    if (where) out.where = true;
    if (flags !== undefined && out.kind === 'parse') out.flags = flags;
    return out;
  }

  /** `parse-kv e as (k: T, …) with (pair_delimiter=…, kv_delimiter=…, quote=…, escape=…, greedy=…)` or `with (regex=…)`. */
  private parseKvOperator(node: KNode): Operator {
    const keys = elements(req(node, 'Keys'), 'Columns').map((c) => ({
      name: this.declaredName(req(c, 'Name')),
      type: this.typeOf(req(c, 'Type')),
      span: spanOf(c),
    }));
    const options: ParseKvSpec = { quotes: [], escapes: [], greedy: false };
    const withClause = prop(node, 'WithClause');
    for (const p of withClause ? elements(withClause, 'Properties') : []) {
      const name = this.declaredName(req(p, 'Name')).toLowerCase();
      const valueNode = req(p, 'Expression');
      const text = () => {
        const kind = shortName(valueNode);
        if (kind !== 'LiteralExpression' && kind !== 'CompoundStringLiteralExpression')
          throw queryError(`The option '${name}' of parse-kv must be a string.`, spanOf(valueNode));
        return this.stringValue(valueNode);
      };
      if (name === 'pair_delimiter') options.pairDelimiter = text();
      else if (name === 'kv_delimiter') options.kvDelimiter = text();
      else if (name === 'quote') options.quotes.push(text());
      else if (name === 'escape') options.escapes.push(text());
      else if (name === 'regex') options.regex = text();
      else if (name === 'greedy') options.greedy = this.source(valueNode).trim().toLowerCase() === 'true';
      else throw queryError(`The option '${name}' of parse-kv is not supported.`, spanOf(p));
    }
    return { kind: 'parse-kv', source: this.expr(req(node, 'Expression')), keys, options, span: spanOf(node) };
  }

  /** An item, optionally named; `several` allows `(a, b) = f(…)` (extend and project). */
  private named(node: KNode, several = false): NamedExpr {
    const kind = shortName(node);
    if (kind === 'SimpleNamedExpression') {
      const nameNode = req(node, 'Name');
      return {
        name: this.declaredName(nameNode),
        nameSpan: spanOf(nameNode),
        expr: this.expr(req(node, 'Expression')),
        span: spanOf(node),
      };
    }
    if (kind === 'CompoundNamedExpression') {
      if (!several) throw queryError('Naming several columns at once, `(a, b) = …`, is not supported here.', spanOf(node));
      const names = elements(req(node, 'Names'), 'Names').map((n) => ({ name: this.declaredName(n), span: spanOf(n) }));
      return { names, expr: this.expr(req(node, 'Expression')), span: spanOf(node) };
    }
    return { expr: this.expr(node), span: spanOf(node) };
  }

  // ---------------------------------------------------------------- expressions

  expr(node: KNode): Expr {
    this.enter(node);
    try {
      return this.exprInner(node);
    } finally {
      this.depth--;
    }
  }

  private exprInner(node: KNode): Expr {
    const kind = shortName(node);
    const span = spanOf(node);
    switch (kind) {
      case 'LiteralExpression':
      case 'CompoundStringLiteralExpression':
        return { kind: 'literal', lit: this.literal(node), span };
      case 'DynamicExpression':
        return { kind: 'literal', lit: this.dynamicLiteral(node), span };
      case 'NameReference': {
        const name = req(node, 'Name');
        // A bare `null` (the product allows it in datatable values and expressions).
        if (shortName(name) === 'TokenName' && (name as unknown as { SimpleName: string }).SimpleName === 'null') {
          return { kind: 'literal', lit: { type: 'dynamic', value: null }, span };
        }
        return { kind: 'name', name: this.referencedName(node), span };
      }
      case 'ParenthesizedExpression':
        return this.expr(req(node, 'Expression'));
      case 'BracketedExpression':
        // `[column]` (older product syntax) reads as the column.
        return this.expr(req(node, 'Expression'));
      case 'PathExpression': {
        const selector = req(node, 'Selector');
        const target = this.expr(req(node, 'Expression'));
        if (shortName(selector) === 'NameReference')
          return { kind: 'member', target, member: this.referencedName(selector), span };
        if (shortName(selector) === 'BracketedExpression') {
          return { kind: 'index', target, index: this.expr(req(selector, 'Expression')), span };
        }
        throw queryError(`'${this.snippet(node)}' is not supported.`, span);
      }
      case 'ElementExpression': {
        const selector = req(node, 'Selector');
        const inner = shortName(selector) === 'BracketedExpression' ? req(selector, 'Expression') : selector;
        return { kind: 'index', target: this.expr(req(node, 'Expression')), index: this.expr(inner), span };
      }
      case 'FunctionCallExpression': {
        const nameNode = req(node, 'Name');
        const args = elements(req(node, 'ArgumentList'), 'Expressions').map((a) => this.expr(a));
        const name = this.referencedName(nameNode);
        if (name === 'bin_auto') return this.binAutoCall(args, spanOf(nameNode), span);
        return { kind: 'call', name, nameSpan: spanOf(nameNode), args, span };
      }
      case 'BinaryExpression': {
        const opToken = req(node, 'Operator');
        const op = tokenText(opToken).toLowerCase().replace(/\s+/g, ' ');
        return {
          kind: 'binary',
          op,
          opSpan: spanOf(opToken),
          left: this.expr(req(node, 'Left')),
          right: this.expr(req(node, 'Right')),
          span,
        };
      }
      case 'PrefixUnaryExpression': {
        const op = tokenText(req(node, 'Operator'));
        const operand = this.expr(req(node, 'Expression'));
        if (op !== '-' && op !== '+') throw queryError(`The operator '${op}' is not supported.`, span);
        if (operand.kind === 'literal' && op === '-') {
          const lit = operand.lit;
          if (lit.type === 'long' && lit.value !== null)
            return { kind: 'literal', lit: { type: 'long', value: -lit.value }, span };
          if (lit.type === 'real' && lit.value !== null)
            return { kind: 'literal', lit: { type: 'real', value: -lit.value }, span };
          if (lit.type === 'timespan' && lit.value !== null)
            return { kind: 'literal', lit: { type: 'timespan', value: -lit.value }, span };
        }
        return { kind: 'unary', op, operand, span };
      }
      case 'InExpression': {
        const opToken = req(node, 'Operator');
        return {
          kind: 'in',
          op: tokenText(opToken).toLowerCase(),
          opSpan: spanOf(opToken),
          left: this.expr(req(node, 'Left')),
          list: elements(req(node, 'Right'), 'Expressions').map((e) => this.expr(e)),
          span,
        };
      }
      case 'BetweenExpression': {
        const couple = req(node, 'Right');
        return {
          kind: 'between',
          negated: tokenText(req(node, 'Operator')).startsWith('!'),
          left: this.expr(req(node, 'Left')),
          low: this.expr(req(couple, 'First')),
          high: this.expr(req(couple, 'Second')),
          span,
        };
      }
      case 'StarExpression':
        return { kind: 'star', span };
      case 'ToScalarExpression': {
        // kind=nooptimization only tells Kusto not to optimize the subquery: the answer is the same.
        for (const p of elements(node, 'Parameters')) {
          const pname = this.declaredName(req(p, 'Name')).toLowerCase();
          if (pname !== 'kind') throw queryError(`The parameter '${pname}' of 'toscalar' is not supported.`, spanOf(p));
        }
        // toscalar of a scalar expression: its value computed once (`toscalar(new_guid())` is one
        // guid for every row), as the subquery `print e`.
        const inner = req(node, 'Expression');
        if (!this.isTabularNode(inner)) {
          const e = this.expr(inner);
          return {
            kind: 'toscalar',
            tabular: { source: { kind: 'print', items: [{ expr: e, span: e.span }], span: e.span }, operators: [], span: e.span },
            span,
          };
        }
        return { kind: 'toscalar', tabular: this.tabular(inner), span };
      }
      case 'TypeOfLiteralExpression': {
        const types = elements(node, 'Types');
        if (types.length !== 1) throw queryError('typeof() takes one type here.', span);
        return { kind: 'typeof', type: this.typeOf(types[0] as KNode), span };
      }
      case 'HasAnyExpression':
      case 'HasAllExpression': {
        // Bound like `in`: a left side and a list (semantic/term-operators.ts).
        const opToken = req(node, 'Operator');
        return {
          kind: 'in',
          op: kind === 'HasAnyExpression' ? 'has_any' : 'has_all',
          opSpan: spanOf(opToken),
          left: this.expr(req(node, 'Left')),
          list: elements(req(node, 'Right'), 'Expressions').map((e) => this.expr(e)),
          span,
        };
      }
      default:
        if (this.isTabularNode(node)) throw queryError('A tabular expression is not allowed here.', span);
        throw queryError(`'${this.snippet(node)}' is not supported.`, span);
    }
  }

  private literal(node: KNode): LiteralValue {
    const k = this.kinds;
    const kind = node.Kind;
    const text = this.source(node).trim();
    const bad = (what: string): StrataError => queryError(`The ${what} literal '${text}' is not valid.`, spanOf(node));
    if (kind === k.StringLiteralExpression || kind === k.CompoundStringLiteralExpression) {
      return { type: 'string', value: String((node as unknown as { LiteralValue: unknown }).LiteralValue ?? '') };
    }
    if (kind === k.LongLiteralExpression || kind === k.IntLiteralExpression) {
      const v = parseLongLiteral(text);
      if (v === undefined) throw bad('long');
      return { type: 'long', value: v };
    }
    if (kind === k.DecimalLiteralExpression) {
      // decimal(1.50), decimal(1e5), decimal(null): SqlDecimal's reading of the text (decision 0031).
      const inner = /^decimal\s*\(\s*(.*?)\s*\)$/is.exec(text)?.[1];
      if (inner !== undefined && inner.toLowerCase() === 'null') return { type: 'decimal', value: null };
      const v = inner === undefined ? undefined : sqlDecimal.parseLiteral(inner);
      if (v === undefined) throw bad('decimal');
      return { type: 'decimal', value: encodeDecimal(v) };
    }
    if (kind === k.RealLiteralExpression) {
      const v = parseRealLiteral(text);
      if (v === undefined) throw bad('real');
      return { type: 'real', value: v };
    }
    if (kind === k.BooleanLiteralExpression) {
      const v = parseBoolLiteral(text);
      if (v === undefined) throw bad('bool');
      return { type: 'bool', value: v };
    }
    if (kind === k.DateTimeLiteralExpression) {
      if (hasSubMicrosecondDigits(text)) throw queryError(subMicrosecondMessage(text), spanOf(node));
      const v = parseDateTimeLiteral(text);
      if (v === undefined) throw bad('datetime');
      const tick = v === null ? 0 : tickDigit(text);
      return tick ? { type: 'datetime', value: v, tick } : { type: 'datetime', value: v };
    }
    if (kind === k.TimespanLiteralExpression) {
      const v = parseTimespanLiteral(text);
      if (v === undefined) throw bad('timespan');
      return { type: 'timespan', value: v };
    }
    if (kind === k.GuidLiteralExpression) {
      const v = parseGuidLiteral(text);
      if (v === undefined) throw bad('guid');
      return { type: 'guid', value: v };
    }
    throw queryError(`The literal '${text}' is not supported.`, spanOf(node));
  }

  private dynamicLiteral(node: KNode): LiteralValue {
    const inner = prop(node, 'Expression');
    const text = inner ? this.source(inner).trim() : 'null';
    if (text === 'null' || text === '') return { type: 'dynamic', value: null };
    try {
      const json = singleQuotesAsJson(text);
      JSON.parse(json); // validates
      return { type: 'dynamic', value: compactJson(json) };
    } catch {
      throw queryError(
        `The dynamic literal '${this.snippet(node)}' is not plain JSON, which is what is supported.`,
        spanOf(node),
      );
    }
  }
}

/**
 * Kusto's dynamic literals also take single-quoted strings (`dynamic(['a', 1])`): each one outside
 * a double-quoted string is rewritten as its JSON string, so the text parses as JSON.
 */
function singleQuotesAsJson(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '"') {
      const end = closingQuote(text, i, '"');
      out += text.slice(i, end + 1);
      i = end;
    } else if (c === "'") {
      const end = closingQuote(text, i, "'");
      out += JSON.stringify(text.slice(i + 1, end).replace(/\\(.)/g, '$1'));
      i = end;
    } else out += c;
  }
  return out;
}

/** The index of the quote that closes the string opened at `start` (the text's end when none does). */
function closingQuote(text: string, start: number, quote: string): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return text.length;
}

/**
 * Valid JSON text without the whitespace outside strings. Number tokens stay as written, so a
 * real written `2.0` stays a real (series functions such as series_fill_linear depend on the
 * element types, which JSON.stringify(JSON.parse(…)) would lose).
 */
export function compactJson(text: string): string {
  // Strings are matched whole (kept); whitespace between tokens is dropped.
  return text.replace(/"(?:[^"\\]|\\.)*"|\s+/g, (m) => (m.startsWith('"') ? m : ''));
}

function parseRender(text: string, offset: number): RenderHint {
  const tokens = tokenizeRender(text, offset);
  if (!Array.isArray(tokens)) throw queryError(tokens.error, { start: tokens.at, end: tokens.at + 1 });
  const end = { start: offset + text.length, end: offset + text.length };
  let i = 0;
  const next = () => tokens[i++];
  const expect = (t: string) => {
    const tok = next();
    if (!tok || tok.text !== t) throw queryError(`Expected '${t}' in the render clause.`, tok?.span ?? end);
  };
  expect('|');
  expect('render');
  const chart = next();
  if (chart?.kind !== 'word') throw queryError('The render clause needs a chart type.', chart?.span ?? end);
  const hint: RenderHint = { chartType: chart.text };
  if (i < tokens.length) {
    expect('with');
    expect('(');
    const options: Record<string, unknown> = {};
    while (tokens[i] && tokens[i]?.text !== ')') {
      const name = next();
      if (name?.kind !== 'word') throw queryError('A render option name was expected.', name?.span ?? end);
      expect('=');
      const value = next();
      if (!value || value.kind === 'punct') throw queryError('A render option value was expected.', value?.span ?? end);
      options[name.text] =
        value.kind === 'word' ? (value.text === 'true' ? true : value.text === 'false' ? false : value.text) : value.value;
      if (tokens[i]?.text === ',') i++;
    }
    expect(')');
    if (i < tokens.length) throw queryError('Unexpected text after the render clause.', tokens[i]?.span ?? end);
    hint.options = options;
  }
  return hint;
}

/**
 * Parses query text into the engine's syntax tree, or throws a StrataError ('invalid') naming the
 * first problem and where it is.
 */
export function parseKql(text: string, limits: ParseLimits = DEFAULT_PARSE_LIMITS): QueryAst {
  if (text.length > limits.maxQueryLength) {
    throw queryError(`The query is longer than ${limits.maxQueryLength} characters.`, {
      start: limits.maxQueryLength,
      end: text.length,
    });
  }
  if (text.trim() === '') throw queryError('The query is empty.', { start: 0, end: text.length });
  const scan = prescan(text);
  if (scan.maxDepth > limits.maxBracketDepth) {
    throw queryError(`The query nests brackets deeper than ${limits.maxBracketDepth} levels.`, {
      start: scan.deepestAt,
      end: scan.deepestAt + 1,
    });
  }
  let body = text;
  let render: RenderHint | undefined;
  if (scan.renderPipeAt !== undefined) {
    render = parseRender(text.slice(scan.renderPipeAt), scan.renderPipeAt);
    body = text.slice(0, scan.renderPipeAt);
  }
  const K = kustoLanguage();
  // Datatable values are parsed on their own, as the items of a `print` placed at the same
  // offsets (so positions stay true), and blanked out of the text the main parse sees.
  const datatableValues = new Map<number, Expr[]>();
  for (const block of scan.datatableValues) {
    if (block.end > body.length || block.start < 6) continue;
    const values = withoutTrailingComma(body.slice(block.start, block.end));
    if (/^(?:\s|\/\/[^\n]*)*$/.test(values)) {
      // `datatable(…)[]`: no rows (print would find no expression).
      datatableValues.set(block.start, []);
      body = body.slice(0, block.start) + ' '.repeat(block.end - block.start) + body.slice(block.end);
      continue;
    }
    const padded = `${' '.repeat(block.start - 6)}print ${values}`;
    const valuesCode = K.KustoCode.Parse(padded);
    throwFirstError(valuesCode.GetDiagnostics());
    checkTreeDepth(valuesCode.Syntax, limits);
    const converter = new Converter(padded, limits, K.Syntax.SyntaxKind);
    const statement = elements(valuesCode.Syntax, 'Statements')[0];
    const print = statement ? prop(statement, 'Expression') : null;
    datatableValues.set(block.start, print ? elements(print, 'Expressions').map((e) => converter.expr(e)) : []);
    body = body.slice(0, block.start) + ' '.repeat(block.end - block.start) + body.slice(block.end);
  }
  const code = K.KustoCode.Parse(body);
  throwFirstError(code.GetDiagnostics());
  checkTreeDepth(code.Syntax, limits);
  return new Converter(text, limits, K.Syntax.SyntaxKind, datatableValues).query(code.Syntax, render);
}

/**
 * Kusto allows a comma after the last datatable value (`[1, 2,]`), which `print` does not: the
 * last comma becomes a space when only whitespace and `//` comments follow it (positions stay).
 */
export function withoutTrailingComma(values: string): string {
  const at = values.lastIndexOf(',');
  if (at < 0 || !/^(?:\s|\/\/[^\n]*)*$/.test(values.slice(at + 1))) return values;
  return `${values.slice(0, at)} ${values.slice(at + 1)}`;
}

/**
 * Refuses syntax trees deeper than twice the expression limit before anything reads positions:
 * in the Kusto tree a node's position and width are computed by walking, so on a 20,000-level
 * chain each costs milliseconds. This walk uses child links only.
 */
function checkTreeDepth(root: KNode, limits: ParseLimits): void {
  const maxDepth = limits.maxExpressionDepth * 2;
  const stack: [KNode, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [KNode, number];
    if (depth > maxDepth) {
      const at = node.TextStart;
      throw queryError(`The query nests expressions deeper than ${limits.maxExpressionDepth} levels.`, {
        start: at,
        end: at + 1,
      });
    }
    for (let i = 0; i < node.ChildCount; i++) {
      const child = node.GetChild(i);
      if (child && child.ChildCount > 0) stack.push([child, depth + 1]);
    }
  }
}

function throwFirstError(diagnostics: KList<KDiagnostic>): void {
  for (let i = 0; i < diagnostics.Count; i++) {
    const d = diagnostics.getItem(i);
    if (d.Severity !== 'Error' || isToleratedDiagnostic(d.Message)) continue;
    throw queryError(d.Message, { start: d.Start, end: d.Start + Math.max(d.Length, 1) });
  }
}

/** A table as Kusto declares it: name and schema text, e.g. `(a:long, b:string)`. */
export interface KustoTable {
  name: string;
  schema: string;
}

export interface KustoCompletionItem {
  /** The member name of Kusto's `CompletionKind` ('BuiltInFunction', 'Column', …), or 'Unknown'. */
  kind: string;
  matchText: string;
  displayText: string;
}

export interface KustoCompletions {
  /** The span of the text a completion replaces. */
  editStart: number;
  editLength: number;
  items: KustoCompletionItem[];
}

const kustoGlobalsCache = new Map<string, unknown>();

/** Kusto's analysis state for a set of tables (a database `db`), kept for the last 32 sets. */
function kustoGlobals(tables: readonly KustoTable[]): unknown {
  const key = tables.map((t) => `${t.name}\u0001${t.schema}`).join('\u0004');
  const cached = kustoGlobalsCache.get(key);
  if (cached) return cached;
  const K = kustoLanguage();
  const symbols = tables.map((t) => new K.Symbols.TableSymbol.$ctor7(t.name, t.schema, null));
  const globals = K.GlobalState.Default.WithDatabase(new K.Symbols.DatabaseSymbol.$ctor1('db', symbols));
  if (kustoGlobalsCache.size > 32) kustoGlobalsCache.delete(kustoGlobalsCache.keys().next().value as string);
  kustoGlobalsCache.set(key, globals);
  return globals;
}

let completionKindNames: Map<number, string> | undefined;

function completionKindName(kind: number): string {
  if (!completionKindNames) {
    completionKindNames = new Map();
    for (const [name, value] of Object.entries(kustoLanguage().Editor.CompletionKind)) {
      if (typeof value === 'number') completionKindNames.set(value, name);
    }
  }
  return completionKindNames.get(kind) ?? 'Unknown';
}

/** Microsoft's completions at `position` of `text`, analysed against `tables`. */
export function kustoCompletions(text: string, tables: readonly KustoTable[], position: number): KustoCompletions | undefined {
  const K = kustoLanguage();
  const code = K.KustoCode.ParseAndAnalyze(text, kustoGlobals(tables));
  const info = new K.Editor.KustoCodeService.ctor(code).GetCompletionItems(position);
  if (!info?.Items) return undefined;
  const items: KustoCompletionItem[] = [];
  for (let i = 0; i < info.Items.Count; i++) {
    const item = info.Items.getItem(i);
    items.push({ kind: completionKindName(item.Kind), matchText: item.MatchText, displayText: item.DisplayText });
  }
  return { editStart: info.EditStart, editLength: info.EditLength, items };
}
