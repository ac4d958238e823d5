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
import { digitCount, MAX_PRECISION, make, type SqlDecimal } from './sql-decimal.js';

export const DECIMAL_KEY_LENGTH = 1 + 2 * MAX_PRECISION;
export const DECIMAL_CELL_LENGTH = DECIMAL_KEY_LENGTH + 4;

const complement = (digits: string): string => digits.replace(/[0-9]/g, (c) => String(9 - Number(c)));

export function encodeDecimal(v: SqlDecimal): string {
  const text = v.magnitude.toString().padStart(v.scale + 1, '0');
  const int = text.slice(0, text.length - v.scale).padStart(MAX_PRECISION, '0');
  const frac = text.slice(text.length - v.scale).padEnd(MAX_PRECISION, '0');
  const digits = v.negative ? complement(int + frac) : int + frac;
  const p = String(v.precision).padStart(2, '0');
  const s = String(v.scale).padStart(2, '0');
  return `${v.negative ? 'n' : 'p'}${digits}${p}${s}`;
}

/** The value of a cell; undefined for anything that is not one (a cell is only made by encodeDecimal). */
export function decodeDecimal(cell: string): SqlDecimal | undefined {
  if (cell.length !== DECIMAL_CELL_LENGTH) return undefined;
  const negative = cell[0] === 'n';
  const raw = cell.slice(1, DECIMAL_KEY_LENGTH);
  const digits = negative ? complement(raw) : raw;
  const precision = Number(cell.slice(DECIMAL_KEY_LENGTH, DECIMAL_KEY_LENGTH + 2));
  const scale = Number(cell.slice(DECIMAL_KEY_LENGTH + 2));
  const magnitude = BigInt(digits.slice(0, MAX_PRECISION + scale));
  const v = make(negative, magnitude, precision, scale);
  return v && digitCount(v.magnitude) <= MAX_PRECISION ? v : undefined;
}
