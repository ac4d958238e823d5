/**
 * Kusto's decimal inside DuckDB (decision 0031): conversions, arithmetic, rounding and the
 * aggregate finishers as JS functions over decimal cells (decimal/decimal-cell.ts), with
 * SqlDecimal's rules (decimal/sql-decimal.ts). Every answer SqlDecimal gives as an exception
 * (overflow, division by zero, text it cannot read) is null, as Kusto's other arithmetic errors are.
 */
import { BIGINT, DOUBLE, type DuckDBListValue, LIST, VARCHAR } from '@duckdb/node-api';
import { decodeDecimal, encodeDecimal } from '../decimal/decimal-cell.js';
import * as D from '../decimal/sql-decimal.js';
import { scalarUdf, type UdfValue } from './scalar-udf.js';

type Value = D.SqlDecimal;

const cell = (v: UdfValue): Value | undefined => (typeof v === 'string' ? decodeDecimal(v) : undefined);
const out = (v: Value | undefined): string | null => (v ? encodeDecimal(v) : null);

/** A function of decimal cells answering a decimal cell; null in, null out. */
function decimalOp(name: string, arity: number, f: (...xs: Value[]) => Value | undefined) {
  return () =>
    scalarUdf({
      name,
      params: new Array(arity).fill(VARCHAR),
      returns: VARCHAR,
      row: (args) => {
        const xs = args.map(cell);
        return xs.every((x): x is Value => x !== undefined) ? out(f(...xs)) : null;
      },
    });
}

/** The cells of a list (non-null ones). */
function cells(list: UdfValue): Value[] {
  const items = (list as unknown as DuckDBListValue | null)?.items ?? [];
  const values: Value[] = [];
  for (const item of items) {
    const v = typeof item === 'string' ? decodeDecimal(item) : undefined;
    if (v) values.push(v);
  }
  return values;
}

/**
 * The exact sum of decimals at the largest scale among them, precision 38 — SQL Server's SUM of a
 * decimal, whose numeric SqlDecimal is: one exact sum, the same however the rows are split
 * among workers (a sum of partial sums is the sum). Undefined without values or past 38 digits.
 */
export function decimalSum(values: Value[]): Value | undefined {
  if (values.length === 0) return undefined;
  // A loop, not Math.max(...values): a group may hold millions of values (the call stack would not).
  let scale = 0;
  for (const v of values) if (v.scale > scale) scale = v.scale;
  let total = 0n;
  for (const v of values) total += (v.negative ? -v.magnitude : v.magnitude) * 10n ** BigInt(scale - v.scale);
  return D.make(total < 0n, total < 0n ? -total : total, D.MAX_PRECISION, scale);
}

/**
 * The mean: the exact sum divided by the count at scale max(s, 6), truncated toward zero as
 * SqlDecimal's quotient is (SQL Server's AVG of a decimal has that scale).
 */
export function decimalAvg(sum: Value | undefined, count: bigint): Value | undefined {
  if (!sum || count <= 0n) return undefined;
  const scale = Math.max(sum.scale, 6);
  if (scale > D.MAX_PRECISION) return undefined;
  const q = (sum.magnitude * 10n ** BigInt(scale - sum.scale)) / count;
  return D.make(sum.negative, q, D.MAX_PRECISION, scale);
}

export const DECIMAL_UDFS = [
  () =>
    scalarUdf({
      name: 'kql_decimal_parse',
      params: [VARCHAR],
      returns: VARCHAR,
      row: ([t]) => (typeof t === 'string' ? out(D.parse(t)) : null),
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_from_long',
      params: [BIGINT],
      returns: VARCHAR,
      row: ([n]) => (typeof n === 'bigint' ? out(D.fromBigInt(n)) : typeof n === 'number' ? out(D.fromBigInt(BigInt(n))) : null),
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_from_real',
      params: [DOUBLE],
      returns: VARCHAR,
      row: ([x]) => (typeof x === 'number' ? out(D.fromDouble(x)) : null),
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_text',
      params: [VARCHAR],
      returns: VARCHAR,
      row: ([c]) => {
        const v = cell(c);
        return v ? D.toText(v) : null;
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_to_real',
      params: [VARCHAR],
      returns: DOUBLE,
      row: ([c]) => {
        const v = cell(c);
        return v ? D.toDouble(v) : null;
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_to_long',
      params: [VARCHAR],
      returns: BIGINT,
      row: ([c]) => {
        const v = cell(c);
        return v ? (D.toBigInt(v) ?? null) : null;
      },
    }),
  () =>
    scalarUdf({
      name: 'kql_decimal_sign',
      params: [VARCHAR],
      returns: DOUBLE,
      row: ([c]) => {
        const v = cell(c);
        return v ? D.sign(v) : null;
      },
    }),
  decimalOp('kql_decimal_add', 2, D.add),
  decimalOp('kql_decimal_subtract', 2, D.subtract),
  decimalOp('kql_decimal_multiply', 2, D.multiply),
  decimalOp('kql_decimal_divide', 2, D.divide),
  decimalOp('kql_decimal_negate', 1, D.negate),
  decimalOp('kql_decimal_abs', 1, D.abs),
  decimalOp('kql_decimal_normal', 1, D.normalize),
  decimalOp('kql_decimal_floor', 1, D.floor),
  decimalOp('kql_decimal_ceiling', 1, D.ceiling),
  // bin(x, size): floor(x / size) exactly, times size by SqlDecimal's product (scale of size).
  decimalOp('kql_decimal_bin', 2, (x, size) => {
    if (size.magnitude === 0n || size.negative) return undefined;
    const k = D.floorDiv(x, size);
    const steps = k === undefined ? undefined : D.fromBigInt(k);
    return steps ? D.multiply(steps, size) : undefined;
  }),
  () =>
    scalarUdf({
      name: 'kql_decimal_round',
      params: [VARCHAR, BIGINT],
      returns: VARCHAR,
      row: ([c, n]) => {
        const v = cell(c);
        return v && typeof n === 'bigint' ? out(D.round(v, Number(BigInt.asIntN(32, n)))) : null;
      },
    }),
  () =>
    scalarUdf({ name: 'kql_decimal_sum', params: [LIST(VARCHAR)], returns: VARCHAR, row: ([l]) => out(decimalSum(cells(l))) }),
  () =>
    scalarUdf({
      name: 'kql_decimal_avg',
      params: [LIST(VARCHAR), BIGINT],
      returns: VARCHAR,
      row: ([l, n]) => (typeof n === 'bigint' ? out(decimalAvg(decimalSum(cells(l)), n)) : null),
    }),
];
