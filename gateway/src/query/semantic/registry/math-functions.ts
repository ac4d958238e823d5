/**
 * Math functions (issue 17, family 3), declared with their implementations. Kusto computes reals
 * with .NET's Math: out-of-domain inputs give NaN or ±Infinity where DuckDB would raise an error,
 * so each function guards those inputs in SQL and answers as .NET does; integers wrap as .NET's
 * long arithmetic does (shifts count modulo 64). Everything is DuckDB SQL, so a function answers
 * the same on a worker and in the gateway's merge.
 */

import { queryError } from '../../errors.js';
import { join, type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import type { KqlType } from '../../types.js';
import { type Bound, coerce, unify } from '../bound.js';
import { arity } from './arguments.js';
import { decimalCeiling, decimalSign } from './decimal-functions.js';
import type { ScalarFn } from './scalar-impl.js';
import type { NamingRule, ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

function want(b: Bound, types: KqlType[], call: CallExpr, what = 'argument'): void {
  if (!types.includes(b.type))
    throw queryError(`The ${what} of '${call.name}' must be ${types.join(' or ')}; this is a ${b.type}.`, b.span);
}

const result = (type: KqlType, s: Sql, call: CallExpr): Bound => ({ type, sql: s, span: call.span });

const NAN = sql`CAST('NaN' AS DOUBLE)`;
const INF = sql`CAST('Infinity' AS DOUBLE)`;

/** A numeric argument as DOUBLE (a decimal by SqlDecimal.ToDouble: these functions answer reals). */
function real(b: Bound, call: CallExpr, what = 'argument'): Sql {
  want(b, ['long', 'real', 'decimal'], call, what);
  return coerce(b, 'real');
}

/** A function of one real to a real, with the .NET answers for inputs DuckDB refuses. */
const unary =
  (f: (x: Sql) => Sql): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 1);
    return result('real', f(real(args[0] as Bound, call)), call);
  };

/** A logarithm: null for negative input (Kusto), -Infinity at 0 and NaN for NaN (.NET). */
const logarithm = (f: (x: Sql) => Sql) =>
  unary((x) => sql`(CASE WHEN isnan(${x}) THEN ${NAN} WHEN ${x} < 0 THEN NULL WHEN ${x} = 0 THEN -${INF} ELSE ${f(x)} END)`);

/** sin, cos, tan: NaN for infinite or NaN input (.NET); DuckDB raises an error. */
const periodic = (name: string) =>
  unary((x) => sql`(CASE WHEN isinf(${x}) OR isnan(${x}) THEN ${NAN} ELSE ${sql`${fnName(name)}`}(${x}) END)`);

/** asin, acos: NaN outside [-1, 1] (.NET). */
const inverse = (name: string) =>
  unary((x) => sql`(CASE WHEN isnan(${x}) OR abs(${x}) > 1 THEN ${NAN} ELSE ${sql`${fnName(name)}`}(${x}) END)`);

/** The SQL name of a built-in math function (constants of this file only). */
function fnName(name: string): Sql {
  const known: Record<string, Sql> = { sin: sql`sin`, cos: sql`cos`, tan: sql`tan`, asin: sql`asin`, acos: sql`acos` };
  const f = known[name];
  if (!f) throw new Error(`no SQL function for ${name}`);
  return f;
}

/** Gamma and its logarithm have poles at 0 and the negative integers: null there. */
const pole = (x: Sql) => sql`(${x} <= 0 AND ${x} = floor(${x}))`;

const MASK64 = sql`CAST('18446744073709551615' AS HUGEINT)`;
const TWO64 = sql`CAST('18446744073709551616' AS HUGEINT)`;

function long(b: Bound, call: CallExpr, what = 'argument'): Sql {
  want(b, ['long'], call, what);
  return b.sql;
}

/** A wide unsigned 64-bit pattern back to a signed long (two's complement). */
const signed = (u: Sql): Sql =>
  sql`CAST(CASE WHEN ${u} >= CAST('9223372036854775808' AS HUGEINT) THEN ${u} - ${TWO64} ELSE ${u} END AS BIGINT)`;

const bitwise =
  (op: 'and' | 'or' | 'xor'): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 2);
    const [a, b] = [long(args[0] as Bound, call), long(args[1] as Bound, call)];
    const s = op === 'and' ? sql`(${a} & ${b})` : op === 'or' ? sql`(${a} | ${b})` : sql`xor(${a}, ${b})`;
    return result('long', s, call);
  };

/** minmax_of: the greatest/least of the values of their common type; nulls are ignored. */
const extreme =
  (kind: 'max' | 'min'): ScalarFn =>
  (args, call) => {
    arity(call, args.length, 2, 64);
    const type = unify(args, `'${call.name}'`);
    const values = join(
      args.map((a) => coerce(a, type)),
      ', ',
    );
    return result(type, kind === 'max' ? sql`greatest(${values})` : sql`least(${values})`, call);
  };

const IMPLEMENTATIONS: Record<string, ScalarFn> = {
  log: logarithm((x) => sql`ln(${x})`),
  log2: logarithm((x) => sql`log2(${x})`),
  log10: logarithm((x) => sql`log10(${x})`),
  exp: unary((x) => sql`exp(${x})`),
  exp2: unary((x) => sql`pow(2.0, ${x})`),
  exp10: unary((x) => sql`pow(10.0, ${x})`),
  pow: (args, call) => {
    arity(call, args.length, 2);
    return result('real', sql`pow(${real(args[0] as Bound, call, 'base')}, ${real(args[1] as Bound, call, 'exponent')})`, call);
  },
  sin: periodic('sin'),
  cos: periodic('cos'),
  tan: periodic('tan'),
  asin: inverse('asin'),
  acos: inverse('acos'),
  atan: unary((x) => sql`atan(${x})`),
  atan2: (args, call) => {
    arity(call, args.length, 2);
    return result('real', sql`atan2(${real(args[0] as Bound, call, 'y')}, ${real(args[1] as Bound, call, 'x')})`, call);
  },
  cot: unary((x) => sql`(CASE WHEN isinf(${x}) OR isnan(${x}) THEN ${NAN} WHEN ${x} = 0 THEN ${INF} ELSE 1.0 / tan(${x}) END)`),
  degrees: unary((x) => sql`degrees(${x})`),
  radians: unary((x) => sql`radians(${x})`),
  pi: (args, call) => {
    arity(call, args.length, 0);
    return result('real', sql`pi()`, call);
  },
  gamma: unary((x) => sql`(CASE WHEN isnan(${x}) THEN ${NAN} WHEN ${pole(x)} THEN NULL ELSE gamma(${x}) END)`),
  loggamma: unary((x) => sql`(CASE WHEN isnan(${x}) THEN ${NAN} WHEN ${pole(x)} THEN NULL ELSE lgamma(${x}) END)`),
  // DuckDB has no error function: stdlib's (common/src/query/kusto-udfs.ts), NaN in, NaN out.
  erf: unary((x) => sql`kql_erf(${x})`),
  erfc: unary((x) => sql`kql_erfc(${x})`),
  sign: (args, call) => {
    arity(call, args.length, 1);
    const x = args[0] as Bound;
    if (x.type === 'decimal') return decimalSign(x, call);
    want(x, ['long', 'real'], call);
    // Always a real (Microsoft's analyzer); .NET's Math.Sign raises on NaN, Kusto gives null there.
    const v = coerce(x, 'real');
    return result('real', sql`(CASE WHEN isnan(${v}) THEN NULL ELSE CAST(sign(${v}) AS DOUBLE) END)`, call);
  },
  isfinite: (args, call) => {
    arity(call, args.length, 1);
    return result('bool', sql`isfinite(${real(args[0] as Bound, call)})`, call);
  },
  isinf: (args, call) => {
    arity(call, args.length, 1);
    return result('bool', sql`isinf(${real(args[0] as Bound, call)})`, call);
  },
  isnan: (args, call) => {
    arity(call, args.length, 1);
    return result('bool', sql`isnan(${real(args[0] as Bound, call)})`, call);
  },
  ceiling: (args, call) => {
    arity(call, args.length, 1);
    const x = args[0] as Bound;
    if (x.type === 'decimal') return decimalCeiling(x, call);
    want(x, ['long', 'real'], call);
    return x.type === 'long' ? result('long', x.sql, call) : result('real', sql`ceil(${x.sql})`, call);
  },
  max_of: extreme('max'),
  min_of: extreme('min'),
  rand: (args, call) => {
    arity(call, args.length, 0, 1);
    if (!args[0]) return result('real', sql`random()`, call);
    // rand(N): a whole number in [0, N), typed real as Microsoft's analyzer types it.
    const n = long(args[0], call, 'range');
    return result('real', sql`(CASE WHEN ${n} > 0 THEN floor(random() * ${n}) END)`, call);
  },
  binary_and: bitwise('and'),
  binary_or: bitwise('or'),
  binary_xor: bitwise('xor'),
  binary_not: (args, call) => {
    arity(call, args.length, 1);
    return result('long', sql`(~${long(args[0] as Bound, call)})`, call);
  },
  binary_shift_left: (args, call) => {
    arity(call, args.length, 2);
    const [a, n] = [long(args[0] as Bound, call), long(args[1] as Bound, call, 'shift')];
    // .NET: the count is taken modulo 64 and the bits shifted out are lost.
    const u = sql`(((CAST(${a} AS HUGEINT) & ${MASK64}) << CAST(${n} & 63 AS INTEGER)) & ${MASK64})`;
    return result('long', signed(u), call);
  },
  binary_shift_right: (args, call) => {
    arity(call, args.length, 2);
    const [a, n] = [long(args[0] as Bound, call), long(args[1] as Bound, call, 'shift')];
    // Arithmetic shift (the sign is kept), count modulo 64, as .NET's long >>.
    return result('long', sql`(${a} >> CAST(${n} & 63 AS INTEGER))`, call);
  },
  tohex: (args, call) => {
    arity(call, args.length, 1, 2);
    const v = long(args[0] as Bound, call, 'value');
    const hex = sql`lower(to_hex(${v}))`;
    if (!args[1]) return result('string', sql`coalesce(${hex}, '')`, call);
    const min = long(args[1], call, 'minimum length');
    return result(
      'string',
      sql`coalesce(CASE WHEN length(${hex}) < ${min} THEN lpad(${hex}, CAST(${min} AS INTEGER), '0') ELSE ${hex} END, '')`,
      call,
    );
  },
};

const NONE: NamingRule = { kind: 'none' };

/** Microsoft's analyzer names these after their first argument (checked in registry.test.ts). */
const NAMED_AFTER_ARGUMENT = new Set([
  'log',
  'log2',
  'log10',
  'exp',
  'exp2',
  'exp10',
  'pow',
  'sin',
  'cos',
  'tan',
  'asin',
  'acos',
  'atan',
  'atan2',
  'gamma',
  'loggamma',
  'erf',
  'erfc',
  'ceiling',
  'binary_and',
  'binary_or',
  'binary_xor',
  'binary_not',
  'binary_shift_left',
  'binary_shift_right',
  'tohex',
]);

function fn(name: string, signatures: string[], returns: string): ScalarFunctionEntry {
  const bind = IMPLEMENTATIONS[name];
  if (!bind) throw new Error(`no implementation for the math function ${name}`);
  const naming: NamingRule = NAMED_AFTER_ARGUMENT.has(name) ? { kind: 'first-argument' } : NONE;
  return { kind: 'scalar', name, signatures, returns, naming, bind };
}

const realOf = (name: string, returns = 'real') => fn(name, [`${name}(number: real): real`], returns);

export const MATH_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  realOf('log', 'real: the natural logarithm; null for negative numbers, -Infinity at 0'),
  realOf('log2', 'real; null for negative numbers, -Infinity at 0'),
  realOf('log10', 'real; null for negative numbers, -Infinity at 0'),
  realOf('exp'),
  realOf('exp2'),
  realOf('exp10'),
  fn('pow', ['pow(base: real, exponent: real): real'], 'real (NaN or Infinity as .NET gives them)'),
  realOf('sin', 'real; NaN for infinite input'),
  realOf('cos', 'real; NaN for infinite input'),
  realOf('tan', 'real; NaN for infinite input'),
  realOf('asin', 'real; NaN outside [-1, 1]'),
  realOf('acos', 'real; NaN outside [-1, 1]'),
  realOf('atan'),
  fn('atan2', ['atan2(y: real, x: real): real'], 'real: the angle in radians'),
  realOf('cot', 'real; Infinity at 0'),
  realOf('degrees'),
  realOf('radians'),
  fn('pi', ['pi(): real'], 'real'),
  realOf('gamma', 'real; null at 0 and the negative integers'),
  realOf('loggamma', 'real; null at 0 and the negative integers'),
  realOf('erf', 'real: the error function, -1 to 1'),
  realOf('erfc', 'real: the complementary error function, 1 - erf(x) without its cancellation'),
  fn('sign', ['sign(number: real): real'], 'real: -1, 0 or 1; null for NaN'),
  fn('isfinite', ['isfinite(number: real): bool'], 'bool'),
  fn('isinf', ['isinf(number: real): bool'], 'bool'),
  fn('isnan', ['isnan(number: real): bool'], 'bool'),
  fn('ceiling', ['ceiling(number: long|real)'], 'the type of number'),
  fn('max_of', ['max_of(value: T, value: T, ...): T'], 'the common type; nulls are ignored'),
  fn('min_of', ['min_of(value: T, value: T, ...): T'], 'the common type; nulls are ignored'),
  fn('rand', ['rand(): real', 'rand(range: long): real'], 'real in [0, 1), or a whole number in [0, range)'),
  fn('binary_and', ['binary_and(a: long, b: long): long'], 'long'),
  fn('binary_or', ['binary_or(a: long, b: long): long'], 'long'),
  fn('binary_xor', ['binary_xor(a: long, b: long): long'], 'long'),
  fn('binary_not', ['binary_not(a: long): long'], 'long'),
  fn('binary_shift_left', ['binary_shift_left(a: long, n: long): long'], 'long (bits shifted out are lost; n modulo 64)'),
  fn('binary_shift_right', ['binary_shift_right(a: long, n: long): long'], 'long (arithmetic; n modulo 64)'),
  fn('tohex', ['tohex(value: long[, minLength: long]): string'], 'string: lower-case hex, two’s complement for negatives'),
];
