/**
 * Kusto's decimal (SqlDecimal; decision 0031): `todecimal`, and the decimal forms of round, abs,
 * floor, ceiling, bin and sign, which the number functions hand a decimal argument to. Each is a
 * JS function inside DuckDB (common/src/query/udfs/decimal-udfs.ts), registered on every worker
 * and on the gateway's merge database, so a decimal answers the same wherever it is computed.
 */
import { queryError } from '../../errors.js';
import { type Sql, sql } from '../../sql/sql.js';
import type { Expr } from '../../syntax/ast.js';
import { type Bound, convert } from '../bound.js';
import type { ScalarFn } from './scalar-impl.js';
import type { ScalarFunctionEntry } from './types.js';

type CallExpr = Extract<Expr, { kind: 'call' }>;

const decimal = (s: Sql, call: CallExpr): Bound => ({ type: 'decimal', sql: s, span: call.span });

/** A size or digits argument as a decimal (bin's size) — long, real (17 digits) or decimal. */
function asDecimal(b: Bound, call: CallExpr, what: string): Sql {
  if (b.type !== 'long' && b.type !== 'real' && b.type !== 'decimal')
    throw queryError(`The ${what} of '${call.name}' must be a number; this is a ${b.type}.`, b.span);
  return convert(b, 'decimal', call.name).sql;
}

/** SqlDecimal.Round: half away from zero at `digits` places, the scale kept (round(1.2345, 2) is 1.2300). */
export function decimalRound(x: Bound, digits: Bound | undefined, call: CallExpr): Bound {
  return decimal(sql`kql_decimal_round(${x.sql}, ${digits ? digits.sql : sql`0`})`, call);
}

export const decimalAbs = (x: Bound, call: CallExpr): Bound => decimal(sql`kql_decimal_abs(${x.sql})`, call);
/** Floor and Ceiling: scale 0, the precision kept (SqlDecimal's). */
export const decimalFloor = (x: Bound, call: CallExpr): Bound => decimal(sql`kql_decimal_floor(${x.sql})`, call);
export const decimalCeiling = (x: Bound, call: CallExpr): Bound => decimal(sql`kql_decimal_ceiling(${x.sql})`, call);
/** −1, 0 or 1 as a real, as sign() of any number is (Microsoft's analyzer). */
export const decimalSign = (x: Bound, call: CallExpr): Bound => ({
  type: 'real',
  sql: sql`kql_decimal_sign(${x.sql})`,
  span: call.span,
});

/** bin(x, size): floor(x / size) computed exactly, times size by SqlDecimal's product; null for size ≤ 0. */
export function decimalBin(x: Bound, size: Bound, call: CallExpr): Bound {
  return decimal(sql`kql_decimal_bin(${asDecimal(x, call, 'value')}, ${asDecimal(size, call, 'size')})`, call);
}

const todecimal: ScalarFn = (args, call) => {
  if (args.length !== 1) throw queryError(`The function '${call.name}' takes 1 argument, not ${args.length}.`, call.span);
  const a = args[0] as Bound;
  if (a.type === 'decimal') return { ...a, span: call.span };
  return { ...convert(a, 'decimal', call.name), span: call.span };
};

export const DECIMAL_FUNCTIONS: readonly ScalarFunctionEntry[] = [
  {
    kind: 'scalar',
    name: 'todecimal',
    signatures: ['todecimal(value: any): decimal'],
    returns:
      'decimal (SqlDecimal): text by SqlDecimal.Parse, a long at scale 0, a real with 17 significant digits (2.2 → 2.2000000000000002), bool 1/0; null when the value does not convert',
    naming: { kind: 'first-argument' },
    bind: todecimal,
  },
];
