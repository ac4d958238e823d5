/**
 * How a decimal is held inside DuckDB: one VARCHAR of fixed width whose byte order is the order of
 * the values, followed by the value's precision and scale (decision 0031).
 *
 *   [sign][38 integer digits][38 fraction digits][precision: 2 digits][scale: 2 digits]
 *
 * The sign is 'p' for zero and positive values and 'n' for negative ones, whose 76 digits are
 * nines-complemented, so plain string comparison orders by value: sort, top, min/max and arg_min/
 * arg_max need no JS. The first 77 characters (the key) are equal exactly when the values are
 * (1.5 and 1.50 have one key), so equality, grouping and joins compare the key; the full cell
 * keeps the precision and scale SqlDecimal carries (1.50 prints as "1.50").
 */
import { MAX_PRECISION, make, type SqlDecimal } from './sql-decimal.js';

export const DECIMAL_KEY_LENGTH = 1 + 2 * MAX_PRECISION;
export const DECIMAL_CELL_LENGTH = DECIMAL_KEY_LENGTH + 4;

/** 10^n for the cell's digit counts (BigInt powers are not free; these repeat on every row). */
const POW10: readonly bigint[] = Array.from({ length: 2 * MAX_PRECISION + 1 }, (_, n) => 10n ** BigInt(n));
/** All 76 digits nine: a negative value's digits d are stored as ALL_NINES − d (nines' complement). */
const ALL_NINES = (POW10[2 * MAX_PRECISION] as bigint) - 1n;

export function encodeDecimal(v: SqlDecimal): string {
  const digits = v.magnitude * (POW10[MAX_PRECISION - v.scale] as bigint);
  const stored = (v.negative ? ALL_NINES - digits : digits).toString().padStart(2 * MAX_PRECISION, '0');
  const p = v.precision < 10 ? `0${v.precision}` : String(v.precision);
  const s = v.scale < 10 ? `0${v.scale}` : String(v.scale);
  return `${v.negative ? 'n' : 'p'}${stored}${p}${s}`;
}

/** The value of a cell; undefined for anything that is not one (a cell is only made by encodeDecimal). */
export function decodeDecimal(cell: string): SqlDecimal | undefined {
  if (cell.length !== DECIMAL_CELL_LENGTH) return undefined;
  const negative = cell.charCodeAt(0) === 110; // 'n'
  const precision = Number(cell.slice(DECIMAL_KEY_LENGTH, DECIMAL_KEY_LENGTH + 2));
  const scale = Number(cell.slice(DECIMAL_KEY_LENGTH + 2));
  if (!(scale >= 0 && scale <= MAX_PRECISION)) return undefined;
  // Only the digits down to the scale: the rest are zeros (nines when negative).
  const width = MAX_PRECISION + scale;
  const stored = BigInt(cell.slice(1, 1 + width));
  const magnitude = negative ? (POW10[width] as bigint) - 1n - stored : stored;
  return make(negative, magnitude, precision, scale);
}
