/**
 * Kusto's decimal: .NET's System.Data.SqlTypes.SqlDecimal (Kusto's scalar type table names it).
 * A value holds up to 38 digits and carries its own precision and scale, and those decide the
 * precision and scale of every result. The rules here are SqlDecimal's, read from its MIT source
 * (dotnet/runtime SQLDecimal.cs) and written again over BigInt (decision 0031):
 * - a sum takes the larger scale and one integer digit more; a product adds the scales; a quotient
 *   gets the scale max(s1 + p2 + 1, 6) and is truncated, not rounded;
 * - past 38 digits the scale is cut down, but not below min(scale, 6) (products and quotients);
 * - scale reductions round half away from zero;
 * - a result of 10^38 or more is an overflow, which the engine answers as null.
 * Every function returns undefined where SqlDecimal throws (overflow, bad text, division by zero).
 */

export const MAX_PRECISION = 38;
/** SqlDecimal's minimum result scale of a quotient (and of a product past 38 digits). */
const DIV_SCALE_MIN = 6;
/** SqlDecimal converts a double to 17 significant digits (its DBL_DIG). */
const DBL_DIG = 17;
const LIMIT = 10n ** 38n;

export interface SqlDecimal {
  /** Sign; never true for zero. */
  readonly negative: boolean;
  /** The value's digits without sign or point: the value is ±magnitude / 10^scale. */
  readonly magnitude: bigint;
  readonly precision: number;
  readonly scale: number;
}

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** Number of decimal digits of a magnitude (zero has one). */
export function digitCount(n: bigint): number {
  return n === 0n ? 1 : n.toString().length;
}

/**
 * A value from its parts. The precision is kept at least the digits the magnitude has and the
 * scale (SqlDecimal's invariant scale ≤ precision); undefined when it does not fit 38 digits.
 */
export function make(negative: boolean, magnitude: bigint, precision: number, scale: number): SqlDecimal | undefined {
  if (magnitude >= LIMIT || scale > MAX_PRECISION || scale < 0) return undefined;
  const p = Math.max(precision, scale, digitCount(magnitude), 1);
  if (p > MAX_PRECISION) return undefined;
  return { negative: negative && magnitude !== 0n, magnitude, precision: p, scale };
}

/** Divides a magnitude by 10^k, rounding half away from zero (SqlDecimal's AdjustScale with rounding). */
function shiftDownRounded(m: bigint, k: number): bigint {
  if (k <= 0) return m * pow10(-k);
  const d = pow10(k);
  const q = m / d;
  return (m % d) * 2n >= d ? q + 1n : q;
}

/**
 * SqlDecimal.Parse: optional blanks around, an optional sign, digits with at most one point; no
 * exponent, at most 38 digits. Precision is the digits written (leading zeros dropped), scale the
 * digits after the point: "1.50" is precision 3, scale 2; "0.01" precision 2, scale 2.
 */
export function parse(text: string): SqlDecimal | undefined {
  let s = text.replace(/ +$/, '').replace(/^ +/, '');
  if (s === '') return undefined;
  let negative = false;
  if (s[0] === '-') {
    negative = true;
    s = s.slice(1);
  } else if (s[0] === '+') s = s.slice(1);
  // SqlDecimal reads "0." as ".0" (precision 1, scale 1).
  while (s.length > 2 && s[0] === '0') s = s.slice(1);
  if (s === '0.') s = '.0';
  if (s.length === 0 || s.length > MAX_PRECISION + 1) return undefined;
  while (s.length > 1 && s[0] === '0') s = s.slice(1);
  if (!/^[0-9]*\.?[0-9]*$/.test(s)) return undefined;
  const point = s.indexOf('.');
  const digits = s.replace('.', '');
  if (digits.length === 0 || digits.length > MAX_PRECISION) return undefined;
  const scale = point < 0 ? 0 : digits.length - point;
  const magnitude = BigInt(digits);
  return { negative: negative && magnitude !== 0n, magnitude, precision: digits.length, scale };
}

/**
 * The literal `decimal(…)`: Parse's rules, plus the exponent form Kusto's grammar allows there
 * (decimal(1e5)): the mantissa's digits with its scale minus the exponent, read as Parse reads that
 * positional text; a negative scale becomes trailing zeros of an integer (1.5e3 is 1500, precision
 * 4, scale 0; 1.5e-3 is 0.0015, precision 4, scale 4).
 */
export function parseLiteral(text: string): SqlDecimal | undefined {
  const m = /^\s*([+-]?)([0-9]*\.?[0-9]*)[eE]([+-]?[0-9]+)\s*$/.exec(text);
  if (!m) return parse(text);
  const mantissa = parse(`${m[1]}${m[2]}`);
  if (!mantissa) return undefined;
  const exponent = Number(m[3]);
  const scale = mantissa.scale - exponent;
  // The precision Parse would give the positional text: its digits, at least the scale.
  if (scale >= 0) return make(mantissa.negative, mantissa.magnitude, 0, scale);
  return make(mantissa.negative, mantissa.magnitude * pow10(-scale), 0, 0);
}

/** SqlDecimal(long): scale 0, precision the digits of the value. */
export function fromBigInt(v: bigint): SqlDecimal | undefined {
  const magnitude = v < 0n ? -v : v;
  return make(v < 0n, magnitude, digitCount(magnitude), 0);
}

/**
 * SqlDecimal(double): 17 significant digits. The integer part is exact (rounded to 17 digits when
 * longer); the fraction is read 9 digits at a time by multiplying the double, and the last digit
 * rounded by what is left — so 2.2 becomes 2.2000000000000002 and 0.5 becomes 0.50000000000000000
 * (precision 17, scale 17). NaN, infinities and magnitudes of 10^38 or more have no decimal.
 */
export function fromDouble(x: number): SqlDecimal | undefined {
  if (!Number.isFinite(x)) return undefined;
  const negative = x < 0;
  const d = Math.abs(x);
  if (d >= 1e38) return undefined;
  const dInt = Math.floor(d);
  let frac = d - dInt;
  let magnitude = BigInt(dInt);
  let intDigits = dInt > 0 ? digitCount(magnitude) : 0;
  if (intDigits > DBL_DIG) {
    const drop = intDigits - DBL_DIG;
    const rounded = shiftDownRounded(magnitude, drop);
    intDigits = digitCount(rounded) + drop;
    magnitude = rounded * pow10(drop);
  }
  const scale = intDigits < DBL_DIG ? DBL_DIG - intDigits : 0;
  let left = scale;
  while (left > 0) {
    const step = Math.min(left, 9);
    const base = 10 ** step;
    frac *= base;
    left -= step;
    magnitude = magnitude * BigInt(base) + BigInt(Math.trunc(frac));
    frac -= Math.floor(frac);
  }
  if (frac >= 0.5) magnitude += 1n;
  return make(negative, magnitude, intDigits + scale, scale);
}

/**
 * The value with its fraction's trailing zeros dropped and the precision its digits need: one
 * form for equal values (1.50 and 1.5 → 1.5), which grouping keys and distinct lists use.
 */
export function normalize(v: SqlDecimal): SqlDecimal {
  let m = v.magnitude;
  let s = v.scale;
  while (s > 0 && m % 10n === 0n) {
    m /= 10n;
    s -= 1;
  }
  return { negative: v.negative, magnitude: m, precision: Math.max(digitCount(m), s, 1), scale: s };
}

/** SqlDecimal.ToString: the digits with the value's scale kept ("1.50", "0.0", "-0.333333"). */
export function toText(v: SqlDecimal): string {
  let digits = v.magnitude.toString();
  if (v.scale > 0) {
    digits = digits.padStart(v.scale + 1, '0');
    digits = `${digits.slice(0, digits.length - v.scale)}.${digits.slice(digits.length - v.scale)}`;
  }
  return v.negative ? `-${digits}` : digits;
}

export function negate(v: SqlDecimal): SqlDecimal {
  return { ...v, negative: !v.negative && v.magnitude !== 0n };
}

const signed = (v: SqlDecimal): bigint => (v.negative ? -v.magnitude : v.magnitude);

/** The magnitude at a larger or smaller scale (rounded half away from zero when smaller). */
function atScale(v: SqlDecimal, scale: number): bigint {
  return shiftDownRounded(v.magnitude, v.scale - scale);
}

/** x + y: scale max(s1, s2), precision max(p1 − s1, p2 − s2) + scale + 1, at most 38 (scale cut to keep the integer part). */
export function add(x: SqlDecimal, y: SqlDecimal): SqlDecimal | undefined {
  const resInteger = Math.max(x.precision - x.scale, y.precision - y.scale);
  let resScale = Math.max(x.scale, y.scale);
  const resPrec = Math.min(MAX_PRECISION, resInteger + resScale + 1);
  if (resPrec - resInteger < resScale) resScale = resPrec - resInteger;
  const a = atScale(x, resScale);
  const b = atScale(y, resScale);
  if (a >= LIMIT || b >= LIMIT) return undefined;
  const sum = (x.negative ? -a : a) + (y.negative ? -b : b);
  return make(sum < 0n, sum < 0n ? -sum : sum, resPrec, resScale);
}

export function subtract(x: SqlDecimal, y: SqlDecimal): SqlDecimal | undefined {
  return add(x, negate(y));
}

/**
 * x * y: scale s1 + s2, precision p1 + p2 + 1; past 38 digits the scale is cut to keep the integer
 * part, but not below min(s1 + s2, 6), and the product rounded half away from zero.
 */
export function multiply(x: SqlDecimal, y: SqlDecimal): SqlDecimal | undefined {
  const actualScale = x.scale + y.scale;
  const resInteger = x.precision - x.scale + (y.precision - y.scale) + 1;
  const resPrec = Math.min(MAX_PRECISION, actualScale + resInteger);
  let resScale = Math.min(actualScale, MAX_PRECISION);
  resScale = Math.min(resPrec - resInteger, resScale);
  resScale = Math.max(resScale, Math.min(actualScale, DIV_SCALE_MIN));
  const product = shiftDownRounded(x.magnitude * y.magnitude, actualScale - resScale);
  return make(x.negative !== y.negative, product, resPrec, resScale);
}

/**
 * x / y: scale max(s1 + p2 + 1, 6), cut (not below 6) where the integer part p1 − s1 + s2 needs the
 * room; the quotient is truncated toward zero. Division by zero has no value.
 */
export function divide(x: SqlDecimal, y: SqlDecimal): SqlDecimal | undefined {
  if (y.magnitude === 0n) return undefined;
  let resScale = Math.max(x.scale + y.precision + 1, DIV_SCALE_MIN);
  const minScale = Math.min(resScale, DIV_SCALE_MIN);
  const resInteger = Math.min(x.precision - x.scale + y.scale, MAX_PRECISION);
  const resPrec = Math.min(resInteger + resScale, MAX_PRECISION);
  resScale = Math.min(resPrec - resInteger, resScale);
  resScale = Math.max(resScale, minScale);
  // The dividend is brought to scale resScale + s2 first; past 38 that is SqlDecimal's overflow.
  const dividendScale = resScale + y.scale;
  if (dividendScale > MAX_PRECISION) return undefined;
  const dividend = atScale(x, dividendScale);
  if (dividend >= LIMIT) return undefined;
  return make(x.negative !== y.negative, dividend / y.magnitude, resPrec, resScale);
}

/** −1, 0 or 1 by value (1.5 and 1.50 are equal). */
export function compare(x: SqlDecimal, y: SqlDecimal): number {
  const s = Math.max(x.scale, y.scale);
  const a = signed(x) * pow10(s - x.scale);
  const b = signed(y) * pow10(s - y.scale);
  return a < b ? -1 : a > b ? 1 : 0;
}

export function abs(v: SqlDecimal): SqlDecimal {
  return { ...v, negative: false };
}

/** SqlDecimal.Sign: −1, 0 or 1. */
export function sign(v: SqlDecimal): number {
  return v.magnitude === 0n ? 0 : v.negative ? -1 : 1;
}

/** Floor and Ceiling: scale 0, the precision kept (SqlDecimal's MakeInteger). */
function integer(v: SqlDecimal, up: boolean): SqlDecimal | undefined {
  if (v.scale === 0) return v;
  const d = pow10(v.scale);
  let m = v.magnitude / d;
  const fraction = v.magnitude % d !== 0n;
  // Away from zero: a floor of a negative value, a ceiling of a positive one.
  if (fraction && v.negative !== up) m += 1n;
  return make(v.negative, m, v.precision, 0);
}

export function floor(v: SqlDecimal): SqlDecimal | undefined {
  return integer(v, false);
}

export function ceiling(v: SqlDecimal): SqlDecimal | undefined {
  return integer(v, true);
}

/**
 * SqlDecimal.Round(v, position): rounded half away from zero at `position` digits after the point
 * (negative: before it), the scale and precision kept — round(1.2345, 2) is 1.2300.
 */
export function round(v: SqlDecimal, position: number): SqlDecimal | undefined {
  let pos = position;
  if (pos >= 0) {
    pos = Math.min(MAX_PRECISION, pos);
    if (pos >= v.scale) return v;
  } else {
    pos = Math.max(-MAX_PRECISION, pos);
    if (pos < v.scale - v.precision) return { ...v, negative: false, magnitude: 0n };
  }
  const k = v.scale - pos;
  const m = shiftDownRounded(v.magnitude, k) * pow10(k);
  return make(v.negative, m, v.precision, v.scale);
}

/** SqlDecimal.ToDouble: the 32-bit words summed in doubles, divided by 10^scale. */
export function toDouble(v: SqlDecimal): number {
  let r = 0;
  for (let i = 3; i >= 0; i--) r = r * 2 ** 32 + Number((v.magnitude >> BigInt(32 * i)) & 0xffffffffn);
  r /= Number(`1e${v.scale}`);
  return v.negative ? -r : r;
}

/** The integer part (truncated toward zero); undefined outside Int64. */
export function toBigInt(v: SqlDecimal): bigint | undefined {
  const t = signed(v) / pow10(v.scale);
  return BigInt.asIntN(64, t) === t ? t : undefined;
}

/** floor(x / size) exactly, as a decimal of scale 0 — the step count of bin(). */
export function floorDiv(x: SqlDecimal, size: SqlDecimal): bigint | undefined {
  if (size.magnitude === 0n) return undefined;
  const s = Math.max(x.scale, size.scale);
  const a = signed(x) * pow10(s - x.scale);
  const b = signed(size) * pow10(s - size.scale);
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}
