/**
 * Kusto's decimal in expressions (decision 0031): arithmetic through SqlDecimal's JS functions
 * inside DuckDB (common/src/query/udfs/decimal-udfs.ts), comparisons on the cell's order key.
 * A decimal cell's first DECIMAL_KEY_LENGTH characters are the value alone, in an order that
 * string comparison keeps, so `==`, `<`, `in`, `between`, grouping and joins compare keys and
 * 1.5 equals 1.50 (common/src/query/decimal/decimal-cell.ts).
 */
import { DECIMAL_KEY_LENGTH } from '@strata/common';
import { queryError } from '../errors.js';
import { DECIMAL_MODULO_REASON } from '../refused-names.js';
import { int, type Sql, sql } from '../sql/sql.js';
import type { Expr } from '../syntax/ast.js';
import type { KqlType } from '../types.js';
import { type Bound, convert } from './bound.js';

/** The value part of a decimal cell: equal for equal values, ordered as the values are. */
export function decimalKey(cell: Sql): Sql {
  return sql`left(${cell}, ${int(BigInt(DECIMAL_KEY_LENGTH))})`;
}

/** Comparable operands with decimal ones replaced by their keys. */
export function keyed([l, r, type]: [Bound, Bound, KqlType]): [Bound, Bound, KqlType] {
  if (type !== 'decimal') return [l, r, type];
  return [{ ...l, sql: decimalKey(l.sql) }, { ...r, sql: decimalKey(r.sql) }, type];
}

const OPERATOR_UDF: Readonly<Record<string, (a: Sql, b: Sql) => Sql>> = {
  '+': (a, b) => sql`kql_decimal_add(${a}, ${b})`,
  '-': (a, b) => sql`kql_decimal_subtract(${a}, ${b})`,
  '*': (a, b) => sql`kql_decimal_multiply(${a}, ${b})`,
  '/': (a, b) => sql`kql_decimal_divide(${a}, ${b})`,
};

/**
 * `+ - * /` with a decimal operand and a long, real or decimal one: a decimal, the other operand
 * converted as todecimal converts it (a real by SqlDecimal's 17-digit conversion), the result
 * with SqlDecimal's precision and scale; null on overflow or division by zero. `%` is refused:
 * SqlDecimal has no remainder operator to follow.
 */
export function decimalArithmetic(op: string, l: Bound, r: Bound, expr: Extract<Expr, { kind: 'binary' }>): Bound {
  const udf = Object.hasOwn(OPERATOR_UDF, op) ? OPERATOR_UDF[op] : undefined;
  if (op === '%') throw queryError(`The operator '%' is not supported on decimals: ${DECIMAL_MODULO_REASON}`, expr.opSpan);
  if (!udf) throw queryError(`The operator '${op}' cannot be applied to a ${l.type} and a ${r.type}.`, expr.opSpan);
  const a = convert(l, 'decimal', op).sql;
  const b = convert(r, 'decimal', op).sql;
  return { type: 'decimal', sql: udf(a, b), span: expr.span };
}
