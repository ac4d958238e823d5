/**
 * Binds scalar expressions: resolves names, checks and infers types, folds constants, and writes
 * the SQL with Kusto's semantics (see the trap catalogue in test/query/traps.test.ts):
 * `==` between a null and a value is false, `!=` true; strings are never null; `%` is never
 * negative; integer `/` truncates; `has` matches whole terms; timespans are ticks.
 */
import { queryError, type Span } from '../errors.js';
import { refusedFunction } from '../refused-names.js';
import { ident, join, readsColumns, type Sql, sql, str } from '../sql/sql.js';
import type { Expr, LiteralValue } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { type Bound, coerce, constant, convert, isDecimalMix, isNonEmptyConstString, strSql } from './bound.js';
import { columnMarks } from './column-marks.js';
import { evalBinary, evalNegate } from './const-eval.js';
import {
  addSpanTicks,
  ceilMicros,
  floorMicros,
  floorView,
  isWholeMicros,
  refusedTicksUse,
  spanNeedsTicks,
  TICKS_AWARE,
  TICKS_BRANCHES,
  TICKS_FLOOR_SAFE,
  ticksSql,
} from './datetime-ticks.js';
import { decimalArithmetic, decimalKey, keyed } from './decimal-operators.js';
import { pickColumn } from './multi-column.js';
import { aggregateFunction, scalarFunction } from './registry/registry.js';
import type { Column } from './rel.js';
import { foldPrefilter, loweredCheckPrefilter, prefiltered, regexLiteralPrefilter } from './string-prefilter.js';
import { termCheckSql } from './term-check.js';
import { foldSubject } from './term-fold-subject.js';
import { affixRegex, hasAnyAll } from './term-operators.js';

/** What an aggregate call becomes inside a summarize item: a value over the final aggregate columns. */
export interface AggregateSink {
  /** Binds an aggregate call; returns the post-aggregate value (single-valued aggregates only). */
  bindAggregateCall(call: Extract<Expr, { kind: 'call' }>, binder: ExprBinder): Bound;
  isAggregate(name: string): boolean;
}

export interface ExprContext {
  /** Columns in scope, by KQL name. */
  columns: Map<string, Column>;
  /** Scalar `let` values. */
  lets: ReadonlyMap<string, Bound>;
  /** The query's single `now()`, µs since the Unix epoch. */
  nowUs: bigint;
  /** Set while binding summarize items: aggregate calls allowed, bare columns not. */
  aggregates?: AggregateSink;
  /**
   * Set while binding extend/project/serialize items, where row functions (row_number, prev …)
   * may appear; `serialized` tells whether the input rows have an order.
   */
  rowFunctions?: {
    serialized: boolean;
    /**
     * The restart argument of row_number/row_cumsum: the SQL of the row's segment id, where a new
     * segment starts at each row whose flag is true (computed in steps before the operator, so no
     * window function nests in another).
     */
    restart?: (flag: Bound) => Sql;
  };
  /** Binds a call of a let-declared function; undefined when no such function is in scope. */
  userFunction?: (call: CallExpr, binder: ExprBinder) => Bound | undefined;
  /**
   * Ids of the columns whose term fold this expression may read (a `where` over a scan:
   * term-fold-subject.ts, decision 0045); absent elsewhere.
   */
  termFolds?: ReadonlySet<string>;
  /** Binds `toscalar(T)` (a value computed before the query runs); absent where not allowed. */
  toscalar?: (expr: Extract<Expr, { kind: 'toscalar' }>) => Bound;
}

type CallExpr = Extract<Expr, { kind: 'call' }>;

const STRING_OPERATORS = new Set([
  'has',
  '!has',
  'has_cs',
  '!has_cs',
  'contains',
  '!contains',
  'contains_cs',
  '!contains_cs',
  'startswith',
  '!startswith',
  'startswith_cs',
  '!startswith_cs',
  'endswith',
  '!endswith',
  'endswith_cs',
  '!endswith_cs',
  'hasprefix',
  '!hasprefix',
  'hasprefix_cs',
  '!hasprefix_cs',
  'hassuffix',
  '!hassuffix',
  'hassuffix_cs',
  '!hassuffix_cs',
  'matches regex',
  '=~',
  '!~',
]);

/** Escapes RE2 metacharacters so text matches literally. */
export function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const TERM_CHAR = /[\p{L}\p{N}]/u;

/**
 * The regex for Kusto's `has`: the needle as a whole term, i.e. not preceded or followed by a
 * letter or digit where the needle itself starts or ends with one.
 */
export function termRegex(needle: string, caseSensitive: boolean): string {
  const chars = [...needle];
  const before = chars.length > 0 && TERM_CHAR.test(chars[0] as string) ? '(?:^|[^\\p{L}\\p{N}])' : '';
  const after = chars.length > 0 && TERM_CHAR.test(chars[chars.length - 1] as string) ? '(?:[^\\p{L}\\p{N}]|$)' : '';
  return `${caseSensitive ? '' : '(?i)'}${before}${escapeRegex(needle)}${after}`;
}

export class ExprBinder {
  constructor(readonly ctx: ExprContext) {}

  /** A binder for the same scope in row mode (aggregate arguments). */
  rowBinder(): ExprBinder {
    return new ExprBinder({ ...this.ctx, aggregates: undefined });
  }

  bind(expr: Expr, predicate = false): Bound {
    switch (expr.kind) {
      case 'literal':
        return constant(expr.lit, expr.span);
      case 'name':
        return this.name(expr.name, expr.span);
      case 'member':
        return this.access(this.bind(expr.target), expr.member, expr.span);
      case 'index': {
        const index = this.bind(expr.index);
        const v = index.value;
        if (v?.type === 'string') return this.access(this.bind(expr.target), v.value, expr.span);
        if (v?.type === 'long' && v.value !== null && v.value >= 0n) {
          // A constant index on a several-column call picks one of its columns.
          const picked = expr.target.kind === 'call' ? pickColumn(expr.target, v.value, expr.span, this) : undefined;
          return picked ?? this.access(this.bind(expr.target), String(v.value), expr.span);
        }
        throw queryError('A dynamic index must be a constant string or a non-negative constant integer.', expr.index.span);
      }
      case 'call':
        return this.call(expr);
      case 'toscalar':
        if (!this.ctx.toscalar) throw queryError("'toscalar' is not allowed here.", expr.span);
        return this.ctx.toscalar(expr);
      case 'unary': {
        const operand = this.bind(expr.operand);
        if (expr.op === '+') return operand;
        if (operand.type === 'decimal')
          return { type: 'decimal', sql: sql`kql_decimal_negate(${operand.sql})`, notNull: operand.notNull, span: expr.span };
        const t = operand.type === 'dynamic' ? 'real' : operand.type;
        if (t !== 'long' && t !== 'real' && t !== 'timespan')
          throw queryError(`Unary '-' cannot be applied to a ${operand.type}.`, expr.span);
        const v = operand.value ? evalNegate(operand.value) : undefined;
        if (v) return constant(v, expr.span);
        return { type: t, sql: sql`(- ${coerce(operand, t)})`, span: expr.span };
      }
      case 'binary':
        return this.binary(expr, predicate);
      case 'in':
        return this.inList(expr, predicate);
      case 'between':
        return this.between(expr);
      case 'star':
        throw queryError("'*' is not allowed here.", expr.span);
      case 'typeof':
        throw queryError('typeof(…) is only allowed as an argument of a function that takes a type.', expr.span);
    }
  }

  private name(name: string, span: Span): Bound {
    const col = this.ctx.columns.get(name);
    if (col && !this.ctx.aggregates) {
      return {
        type: col.type,
        sql: sql`${identOf(col)}`,
        column: col,
        span,
        ...columnMarks(col),
      };
    }
    const let_ = this.ctx.lets.get(name);
    if (let_?.outsideRowContext)
      throw queryError(`'toscalar': can't use '${name}' as it is defined outside its row-context scope.`, span);
    if (let_) return { ...let_, span };
    if (col) throw queryError(`'${name}' must be used inside an aggregate, or as a summarize key.`, span);
    throw queryError(`The name '${name}' does not refer to any known column, table, variable or function.`, span);
  }

  /** Member or index access on a dynamic value, folded into one JSON pointer. */
  private access(target: Bound, segment: string, span: Span): Bound {
    if (target.type !== 'dynamic') {
      throw queryError(`Member access needs a dynamic value; this is a ${target.type}. Use parse_json() or json().`, span);
    }
    const base = target.json?.base ?? target.sql;
    const path = [...(target.json?.path ?? []), segment];
    const pointer = `/${path.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/')}`;
    return { type: 'dynamic', sql: sql`json_extract(${base}, ${str(pointer)})`, json: { base, path }, span };
  }

  // ------------------------------------------------------------------ binary operators

  private binary(expr: Extract<Expr, { kind: 'binary' }>, predicate: boolean): Bound {
    const op = expr.op;
    if (op === 'and' || op === 'or') {
      const l = this.bind(expr.left, predicate);
      const r = this.bind(expr.right, predicate);
      for (const side of [l, r]) {
        if (side.type !== 'bool') throw queryError(`'${op}' needs boolean operands; this is a ${side.type}.`, side.span);
      }
      const v = l.value && r.value ? evalBinary(op, l.value, r.value) : undefined;
      if (v) return constant(v, expr.span);
      return { type: 'bool', sql: op === 'and' ? sql`(${l.sql} AND ${r.sql})` : sql`(${l.sql} OR ${r.sql})`, span: expr.span };
    }
    const l = this.bind(expr.left);
    const r = this.bind(expr.right);
    if (STRING_OPERATORS.has(op)) return this.stringOperator(op, l, r, expr, predicate);
    if (op === '==' || op === '!=') return this.equality(op, l, r, expr, predicate);
    if (op === '<' || op === '<=' || op === '>' || op === '>=') return this.ordering(op, l, r, expr);
    if (['+', '-', '*', '/', '%'].includes(op)) return this.arithmetic(op, l, r, expr);
    throw queryError(`The operator '${op}' is not supported.`, expr.opSpan);
  }

  /** Brings both sides of a comparison to one type (numbers widen, dynamic converts to the other side). */
  private comparable(l: Bound, r: Bound, opSpan: Span, op: string): [Bound, Bound, KqlType] {
    if (l.type === r.type) return [l, r, l.type];
    if (l.value?.value === null) return [constant({ type: r.type, value: null } as LiteralValue, l.span), r, r.type];
    if (r.value?.value === null) return [l, constant({ type: l.type, value: null } as LiteralValue, r.span), l.type];
    const num = (t: KqlType) => t === 'long' || t === 'real';
    if (num(l.type) && num(r.type)) return [convert(l, 'real', op), convert(r, 'real', op), 'real'];
    if (isDecimalMix(l.type, r.type)) return [convert(l, 'decimal', op), convert(r, 'decimal', op), 'decimal'];
    if (l.type === 'dynamic') return [convert(l, r.type, op), r, r.type];
    if (r.type === 'dynamic') return [l, convert(r, l.type, op), l.type];
    if (l.type === 'guid' && r.type === 'string') return [convert(l, 'string', op), r, 'string'];
    if (l.type === 'string' && r.type === 'guid') return [l, convert(r, 'string', op), 'string'];
    throw queryError(`Cannot compare a ${l.type} with a ${r.type} using '${op}'.`, opSpan);
  }

  private equality(op: '==' | '!=', l0: Bound, r0: Bound, expr: Extract<Expr, { kind: 'binary' }>, predicate: boolean): Bound {
    const [l1, r1, type] = keyed(this.comparable(l0, r0, expr.opSpan, op));
    // A datetime with ticks below the microsecond is compared as ticks (decision 0036).
    const [l, r] = type === 'datetime' && (l1.ticks || r1.ticks) ? [asTicks(l1), asTicks(r1)] : [l1, r1];
    const folded = l.value && r.value ? evalBinary(op, l.value, r.value) : undefined;
    if (folded) return constant(folded, expr.span);
    const eq = op === '==';
    let s: Sql;
    if (type === 'string') {
      // Strings are never null: compare with "" for missing values. In a filter, a comparison
      // with a non-empty constant may keep the bare column (NULL fails like "" would).
      if (eq && predicate && (isNonEmptyConstString(r) || isNonEmptyConstString(l))) s = sql`(${l.sql} = ${r.sql})`;
      else s = eq ? sql`(${strSql(l)} = ${strSql(r)})` : sql`(${strSql(l)} <> ${strSql(r)})`;
    } else if (type === 'dynamic') {
      // By value, bags whatever their key order; null when either side is null (kusto-udfs.ts).
      const same = sql`kql_dynamic_equals(CAST(${l.sql} AS VARCHAR), CAST(${r.sql} AS VARCHAR))`;
      s = eq ? same : sql`(NOT ${same})`;
    } else if (l.notNull || r.notNull) {
      // One side is a value: null == value is false, null != value is true.
      if (eq) s = predicate ? sql`(${l.sql} = ${r.sql})` : sql`coalesce(${l.sql} = ${r.sql}, false)`;
      else s = sql`(${l.sql} IS DISTINCT FROM ${r.sql})`;
    } else {
      // Both may be null: null == null is null (and so is null != null).
      s = eq
        ? sql`(CASE WHEN ${l.sql} IS NULL AND ${r.sql} IS NULL THEN NULL ELSE ${l.sql} IS NOT DISTINCT FROM ${r.sql} END)`
        : sql`(CASE WHEN ${l.sql} IS NULL AND ${r.sql} IS NULL THEN NULL ELSE ${l.sql} IS DISTINCT FROM ${r.sql} END)`;
    }
    return { type: 'bool', sql: s, span: expr.span };
  }

  private ordering(op: string, l0: Bound, r0: Bound, expr: Extract<Expr, { kind: 'binary' }>): Bound {
    const [l, r, type] = keyed(this.comparable(l0, r0, expr.opSpan, op));
    if (type === 'dynamic' || type === 'guid') throw queryError(`'${op}' cannot order ${type} values.`, expr.opSpan);
    if (type === 'datetime' && (l.ticks || r.ticks)) return { type: 'bool', sql: orderTicks(op, l, r), span: expr.span };
    const folded = l.value && r.value ? evalBinary(op, l.value, r.value) : undefined;
    if (folded) return constant(folded, expr.span);
    const ls = type === 'string' ? strSql(l) : l.sql;
    const rs = type === 'string' ? strSql(r) : r.sql;
    const s =
      op === '<'
        ? sql`(${ls} < ${rs})`
        : op === '<='
          ? sql`(${ls} <= ${rs})`
          : op === '>'
            ? sql`(${ls} > ${rs})`
            : sql`(${ls} >= ${rs})`;
    return { type: 'bool', sql: s, span: expr.span };
  }

  private arithmetic(op: string, l0: Bound, r0: Bound, expr: Extract<Expr, { kind: 'binary' }>): Bound {
    // Dynamic operands take part as numbers.
    const l = l0.type === 'dynamic' ? convert(l0, 'real', op) : l0;
    const r = r0.type === 'dynamic' ? convert(r0, 'real', op) : r0;
    if (isDecimalMix(l.type, r.type)) return decimalArithmetic(op, l, r, expr);
    // datetime ± a timespan that is not whole microseconds is carried as ticks, even between
    // constants: the constant folding reads microseconds (decision 0036).
    const ticks = datetimeSpanTicks(op, l, r, expr.span);
    if (ticks) return ticks;
    const folded = l.value && r.value ? evalBinary(op, l.value, r.value) : undefined;
    if (folded) return constant(folded, expr.span);
    const tl = l.type;
    const tr = r.type;
    const out = (type: KqlType, s: Sql): Bound => ({ type, sql: s, span: expr.span, ...wholeMicrosFlag(op, l, r, type) });
    const a = l.sql;
    const b = r.sql;
    const fail = () => queryError(`The operator '${op}' cannot be applied to a ${tl} and a ${tr}.`, expr.opSpan);
    const bothLong = tl === 'long' && tr === 'long';
    const numeric = (t: KqlType) => t === 'long' || t === 'real';
    switch (op) {
      case '+':
        if (bothLong) return out('long', sql`(${a} + ${b})`);
        if (numeric(tl) && numeric(tr)) return out('real', sql`(${coerce(l, 'real')} + ${coerce(r, 'real')})`);
        if (tl === 'datetime' && tr === 'timespan') return out('datetime', sql`(${a} + to_microseconds(${b} // 10))`);
        if (tl === 'timespan' && tr === 'datetime') return out('datetime', sql`(${b} + to_microseconds(${a} // 10))`);
        if (tl === 'timespan' && tr === 'timespan') return out('timespan', sql`(${a} + ${b})`);
        throw fail();
      case '-':
        if (bothLong) return out('long', sql`(${a} - ${b})`);
        if (numeric(tl) && numeric(tr)) return out('real', sql`(${coerce(l, 'real')} - ${coerce(r, 'real')})`);
        if (tl === 'datetime' && tr === 'timespan') return out('datetime', sql`(${a} - to_microseconds(${b} // 10))`);
        if (tl === 'datetime' && tr === 'datetime' && (l.ticks || r.ticks))
          return out('timespan', sql`(${ticksSql(l)} - ${ticksSql(r)})`);
        if (tl === 'datetime' && tr === 'datetime') return out('timespan', sql`((epoch_us(${a}) - epoch_us(${b})) * 10)`);
        if (tl === 'timespan' && tr === 'timespan') return out('timespan', sql`(${a} - ${b})`);
        throw fail();
      case '*':
        if (bothLong) return out('long', sql`(${a} * ${b})`);
        if (numeric(tl) && numeric(tr)) return out('real', sql`(${coerce(l, 'real')} * ${coerce(r, 'real')})`);
        if (tl === 'timespan' && tr === 'long') return out('timespan', sql`(${a} * ${b})`);
        if (tl === 'long' && tr === 'timespan') return out('timespan', sql`(${a} * ${b})`);
        if (tl === 'timespan' && tr === 'real') return out('timespan', sql`TRY_CAST(${a} * ${b} AS BIGINT)`);
        if (tl === 'real' && tr === 'timespan') return out('timespan', sql`TRY_CAST(${a} * ${b} AS BIGINT)`);
        throw fail();
      case '/':
        // Integer division truncates (Kusto: 1 / 2 == 0); division by zero gives null.
        if (bothLong) return out('long', sql`(${a} // ${b})`);
        if (numeric(tl) && numeric(tr)) return out('real', sql`(${coerce(l, 'real')} / ${coerce(r, 'real')})`);
        if (tl === 'timespan' && tr === 'timespan') return out('real', sql`(CAST(${a} AS DOUBLE) / ${b})`);
        if (tl === 'timespan' && tr === 'long') return out('timespan', sql`(${a} // ${b})`);
        if (tl === 'timespan' && tr === 'real') return out('timespan', sql`TRY_CAST(${a} / ${b} AS BIGINT)`);
        throw fail();
      case '%':
        // Kusto's modulo is never negative: 0 <= N % D < abs(D).
        if (bothLong || (tl === 'timespan' && tr === 'timespan')) {
          return out(tl, sql`(((${a} % ${b}) + abs(${b})) % abs(${b}))`);
        }
        if (numeric(tl) && numeric(tr)) {
          const x = coerce(l, 'real');
          const y = coerce(r, 'real');
          return out('real', sql`(CASE WHEN ${y} = 0 THEN NULL ELSE fmod(fmod(${x}, ${y}) + abs(${y}), abs(${y})) END)`);
        }
        throw fail();
    }
    throw fail();
  }

  private stringOperator(op: string, l0: Bound, r0: Bound, expr: Extract<Expr, { kind: 'binary' }>, predicate: boolean): Bound {
    const l = convert(l0, 'string', op);
    if (r0.type !== 'string') throw queryError(`'${op}' needs a string on its right; this is a ${r0.type}.`, r0.span);
    const r = r0;
    const negated = op.startsWith('!');
    const base = negated ? op.slice(1) : op;
    const needle = r.value?.type === 'string' ? r.value.value : undefined;
    // In a filter, a positive match against a non-empty constant may read the bare column.
    const subject = !negated && predicate && needle !== undefined && needle !== '' ? l.sql : strSql(l);
    let s: Sql;
    switch (base) {
      case 'has':
      case 'has_cs': {
        const cs = base === 'has_cs';
        if (needle !== undefined) {
          if (needle === '') {
            s = sql`true`;
            break;
          }
          // Substring tests first rule out most rows for a fraction of the regex's cost; each is
          // implied by the regex, so the answer cannot change (decisions 0014, 0033).
          const fold = cs ? undefined : foldSubject(l0, subject === l.sql, [needle], this.ctx.termFolds);
          if (fold) {
            s = prefiltered(fold, foldPrefilter(needle), termCheckSql(fold, needle, false, 'term', termRegex(needle, false)));
            break;
          }
          s = prefiltered(
            subject,
            regexLiteralPrefilter(needle, cs),
            termCheckSql(subject, needle, cs, 'term', termRegex(needle, cs)),
          );
          break;
        }
        // A term read from a column would be a regex compiled for every row: measured 35 s of
        // CPU for 20,000 rows (one request could hold a core). Refused by name. A term computed
        // from constants (strcat("a", "b")) is folded by DuckDB and compiled once.
        if (readsColumns(r.sql))
          throw queryError(
            `'${op}' needs a constant string on its right; a column or an expression over columns is not supported (use 'contains' or '==').`,
            r.span,
          );
        const prefix = cs ? sql`'(?:^|[^\\p{L}\\p{N}])'` : sql`'(?i)(?:^|[^\\p{L}\\p{N}])'`;
        s = sql`regexp_matches(${subject}, ${prefix} || regexp_escape(${strSql(r)}) || '(?:[^\\p{L}\\p{N}]|$)')`;
        break;
      }
      case 'hasprefix':
      case 'hasprefix_cs':
      case 'hassuffix':
      case 'hassuffix_cs': {
        if (needle === undefined) throw queryError(`'${op}' needs a constant string on its right.`, r.span);
        if (needle === '') {
          s = sql`true`;
          break;
        }
        const kind = base.startsWith('hasprefix') ? 'prefix' : 'suffix';
        const cs = base.endsWith('_cs');
        const fold = cs ? undefined : foldSubject(l0, subject === l.sql, [needle], this.ctx.termFolds);
        if (fold) {
          s = prefiltered(fold, foldPrefilter(needle), termCheckSql(fold, needle, false, kind, affixRegex(needle, kind, false)));
          break;
        }
        s = prefiltered(
          subject,
          regexLiteralPrefilter(needle, cs),
          termCheckSql(subject, needle, cs, kind, affixRegex(needle, kind, cs)),
        );
        break;
      }
      case 'contains':
        s = sql`contains(lower(${subject}), lower(${strSql(r)}))`;
        if (needle !== undefined) s = prefiltered(subject, loweredCheckPrefilter(needle), s);
        break;
      case 'contains_cs':
        s = sql`contains(${subject}, ${strSql(r)})`;
        break;
      case 'startswith':
        s = sql`starts_with(lower(${subject}), lower(${strSql(r)}))`;
        if (needle !== undefined) s = prefiltered(subject, loweredCheckPrefilter(needle), s);
        break;
      case 'startswith_cs':
        s = sql`starts_with(${subject}, ${strSql(r)})`;
        break;
      case 'endswith':
        s = sql`ends_with(lower(${subject}), lower(${strSql(r)}))`;
        if (needle !== undefined) s = prefiltered(subject, loweredCheckPrefilter(needle), s);
        break;
      case 'endswith_cs':
        s = sql`ends_with(${subject}, ${strSql(r)})`;
        break;
      case 'matches regex':
        if (needle === undefined) throw queryError("'matches regex' needs a constant pattern.", r.span);
        s = sql`regexp_matches(${subject}, ${strSql(r)})`;
        break;
      case '=~':
        s = sql`(lower(${subject}) = lower(${strSql(r)}))`;
        break;
      case '~':
        // `!~`: the negation of =~ (the leading '!' was removed above).
        s = sql`(lower(${strSql(l)}) = lower(${strSql(r)}))`;
        return { type: 'bool', sql: sql`(NOT ${s})`, span: expr.span };
      default:
        throw queryError(`The operator '${op}' is not supported.`, expr.opSpan);
    }
    return { type: 'bool', sql: negated ? sql`(NOT ${s})` : s, span: expr.span };
  }

  private inList(expr: Extract<Expr, { kind: 'in' }>, predicate: boolean): Bound {
    const op = expr.op;
    if (op === 'has_any' || op === 'has_all')
      return hasAnyAll(
        op,
        this.bind(expr.left),
        expr.list.map((e) => this.bind(e)),
        expr.span,
        this.ctx.termFolds,
      );
    if (!['in', '!in', 'in~', '!in~'].includes(op)) throw queryError(`The operator '${op}' is not supported.`, expr.opSpan);
    const negated = op.startsWith('!');
    const ci = op.endsWith('~');
    const left = this.bind(expr.left);
    const items = expr.list.map((e) => this.bind(e));
    if (items.length === 0) throw queryError(`'${op}' needs at least one value.`, expr.span);
    let type = left.type;
    for (const it of items) {
      if (it.type !== type) {
        const [, , t] = this.comparable(left, it, expr.opSpan, op);
        type = t;
      }
    }
    if (ci && type !== 'string') throw queryError(`'${op}' compares strings; this is a ${type}.`, expr.left.span);
    // Datetimes carried as ticks put every side in ticks (decision 0036).
    const ticks = type === 'datetime' && [left, ...items].some((b) => b.ticks);
    const side = (b: Bound): Sql => {
      if (ticks) return asTicks(b).sql;
      const c = b.type === type ? b : b.type === 'long' && type === 'real' ? convert(b, 'real', op) : convert(b, type, op);
      const v = type === 'string' ? strSql(c) : type === 'decimal' ? decimalKey(c.sql) : c.sql;
      return ci ? sql`lower(${v})` : v;
    };
    const list = join(
      items.map((i) => side(i)),
      ', ',
    );
    const s = sql`(${side(left)} IN (${list}))`;
    if (negated) return { type: 'bool', sql: sql`(NOT coalesce(${s}, false))`, span: expr.span };
    return { type: 'bool', sql: predicate ? s : sql`coalesce(${s}, false)`, span: expr.span };
  }

  private between(expr: Extract<Expr, { kind: 'between' }>): Bound {
    const left = this.bind(expr.left);
    const low = this.bind(expr.low);
    let high = this.bind(expr.high);
    // `t between (start .. 1h)` means start .. start + 1h.
    if (left.type === 'datetime' && low.type === 'datetime' && high.type === 'timespan') {
      high = this.arithmetic('+', low, high, {
        kind: 'binary',
        op: '+',
        opSpan: expr.span,
        left: expr.low,
        right: expr.high,
        span: expr.high.span,
      });
    }
    const [l1, lo, t1] = keyed(this.comparable(left, low, expr.span, 'between'));
    const [l2, hi] = keyed(this.comparable(left, high, expr.span, 'between'));
    if (t1 === 'datetime' && [l1, lo, hi].some((b) => b.ticks)) {
      const s = sql`(${orderTicks('>=', l1, lo)} AND ${orderTicks('<=', l2, hi)})`;
      return { type: 'bool', sql: expr.negated ? sql`(NOT coalesce(${s}, false))` : s, span: expr.span };
    }
    const ls = t1 === 'string' ? strSql(l1) : l1.sql;
    const s = sql`(${ls} >= ${lo.sql} AND ${t1 === 'string' ? strSql(l2) : l2.sql} <= ${hi.sql})`;
    return { type: 'bool', sql: expr.negated ? sql`(NOT coalesce(${s}, false))` : s, span: expr.span };
  }

  // ------------------------------------------------------------------ function calls

  private call(call: CallExpr): Bound {
    const user = this.ctx.userFunction?.(call, this);
    if (user) return user;
    const name = call.name.toLowerCase();
    if (this.ctx.aggregates?.isAggregate(name)) return this.ctx.aggregates.bindAggregateCall(call, this);
    const fn = scalarFunction(name);
    if (!fn) {
      if (aggregateFunction(name)) throw queryError(`The aggregate '${call.name}' is only allowed in summarize.`, call.nameSpan);
      throw refusedFunction(call.name, call.nameSpan);
    }
    // typeof(T) binds as the type's name, marked, for the functions that take a type.
    const args = call.args.map(
      (a): Bound =>
        a.kind === 'typeof' ? { ...constant({ type: 'string', value: a.type }, a.span), typeLiteral: a.type } : this.bind(a),
    );
    if (!args.some((a) => a.ticks)) return fn.bind(args, call, this);
    // A datetime carried as ticks among the arguments (decision 0036).
    if (TICKS_BRANCHES.has(name)) {
      // Every datetime branch in ticks; the chosen one is the answer, so it keeps the mark.
      const b = fn.bind(
        args.map((a) => (a.type === 'datetime' ? asTicks(a, true) : a)),
        call,
        this,
      );
      return b.type === 'datetime' ? { ...withoutValue(b), ticks: true } : b;
    }
    return fn.bind(ticksArguments(name, args, call.span), call, this);
  }
}

/**
 * A datetime Bound as its ticks (BIGINT), for comparing with another carried as ticks. A null
 * literal stays one (typed BIGINT) unless `dropNull`, where a function's constant folding would
 * turn it back into a TIMESTAMP null.
 */
function asTicks(b: Bound, dropNull = false): Bound {
  if (b.ticks) return b;
  const { column: _column, value, ...rest } = b;
  if (value?.value === null)
    return dropNull
      ? { ...rest, sql: sql`CAST(NULL AS BIGINT)`, ticks: true }
      : { ...rest, sql: sql`CAST(NULL AS BIGINT)`, value };
  return { ...rest, sql: ticksSql(b), ticks: true };
}

const withoutValue = (b: Bound): Bound => {
  const { value: _value, ...rest } = b;
  return rest;
};

/**
 * `<`, `<=`, `>`, `>=` with a datetime carried as ticks. Against a TIMESTAMP (a stored column, most
 * often) the ticks side is moved to the microsecond grid instead, exactly — a µs value a is
 * `<= T` iff `a <= floor(T)` and `< T` iff `a < ceil(T)` — so the column stays a bare TIMESTAMP for
 * DuckDB's zone maps.
 */
function orderTicks(op: string, l: Bound, r: Bound): Sql {
  const cmp = (o: string, a: Sql, b: Sql): Sql =>
    o === '<' ? sql`(${a} < ${b})` : o === '<=' ? sql`(${a} <= ${b})` : o === '>' ? sql`(${a} > ${b})` : sql`(${a} >= ${b})`;
  if (l.ticks && r.ticks) return cmp(op, l.sql, r.sql);
  const flip: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
  // Written as (µs side) op' (ticks side).
  const [a, t, o] = l.ticks ? [r, l, flip[op] as string] : [l, r, op];
  // Only a stored column gains from the grid (its zone maps); anything else compares in ticks, so a
  // per-row ticks side (`Timestamp + Duration > ago(1h)`) is not converted back per row.
  if (!a.column) return cmp(o, ticksSql(a), t.sql);
  const grid = o === '<' || o === '>=' ? ceilMicros(t.sql) : floorMicros(t.sql);
  return cmp(o, a.sql, grid);
}

/**
 * Whether a timespan computed by `op` is whole microseconds whatever its rows (decision 0036's
 * amendment): then a datetime plus it needs no ticks. The difference of two µs datetimes; a long
 * times a whole-µs span; a sum, difference or non-negative remainder of whole-µs spans.
 */
function wholeMicrosFlag(op: string, l: Bound, r: Bound, type: KqlType): { wholeMicros?: true } {
  if (type !== 'timespan') return {};
  const whole = (b: Bound) => b.type === 'timespan' && isWholeMicros(b);
  const yes =
    (op === '-' && l.type === 'datetime' && r.type === 'datetime' && !l.ticks && !r.ticks) ||
    ((op === '+' || op === '-' || op === '%') && whole(l) && whole(r)) ||
    (op === '*' && ((whole(l) && r.type === 'long') || (l.type === 'long' && whole(r))));
  return yes ? { wholeMicros: true } : {};
}

/** datetime + timespan, timespan + datetime or datetime − timespan in ticks, when they need them; null past Kusto's range. */
function datetimeSpanTicks(op: string, l: Bound, r: Bound, span: Span): Bound | undefined {
  if (op === '+' && l.type === 'datetime' && r.type === 'timespan' && spanNeedsTicks(l, r)) return addSpanTicks(l, r, '+', span);
  if (op === '+' && l.type === 'timespan' && r.type === 'datetime' && spanNeedsTicks(r, l)) return addSpanTicks(r, l, '+', span);
  if (op === '-' && l.type === 'datetime' && r.type === 'timespan' && spanNeedsTicks(l, r)) return addSpanTicks(l, r, '-', span);
  return undefined;
}

/**
 * A datetime argument carried as ticks (decision 0036): as is to a function that reads ticks, at
 * its microsecond floor to one whose answer cannot depend on the digits below, refused elsewhere.
 */
function ticksArguments(name: string, args: Bound[], span: Span): Bound[] {
  if (TICKS_AWARE.has(name)) return args;
  if (TICKS_FLOOR_SAFE.has(name)) return args.map(floorView);
  throw refusedTicksUse(`'${name}'`, args.find((a) => a.ticks)?.span ?? span);
}

export function identOf(col: Column): Sql {
  return sql`${ident(col.id)}`;
}
