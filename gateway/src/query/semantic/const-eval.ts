/**
 * Compile-time evaluation of constant expressions, mirroring the SQL the binder emits. It exists
 * for the planner: `where timestamp > ago(1h)` must give the workers a time range to prune
 * segments with, so `ago(1h)`, `now()`, datetime literals and datetime/timespan arithmetic are
 * computed here (with the query's single `now`). Anything it cannot evaluate simply stays SQL.
 */
import type { LiteralValue } from '../syntax/ast.js';
import { MAX_DATETIME_US, MIN_DATETIME_US } from '../syntax/literals.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** BigInt division truncating toward zero (what DuckDB's `//` does). */
const tdiv = (a: bigint, b: bigint): bigint => a / b;

function datetimeOk(us: bigint): LiteralValue | undefined {
  return us < MIN_DATETIME_US || us > MAX_DATETIME_US ? undefined : { type: 'datetime', value: us };
}

function longOk(v: bigint, type: 'long' | 'timespan'): LiteralValue | undefined {
  return v < INT64_MIN || v > INT64_MAX ? undefined : { type, value: v };
}

export function evalBinary(op: string, a: LiteralValue, b: LiteralValue): LiteralValue | undefined {
  if (a.value === null || b.value === null) return undefined;
  const ta = a.type;
  const tb = b.type;
  switch (op) {
    case '+':
      if (ta === 'datetime' && tb === 'timespan') return datetimeOk((a.value as bigint) + tdiv(b.value as bigint, 10n));
      if (ta === 'timespan' && tb === 'datetime') return datetimeOk((b.value as bigint) + tdiv(a.value as bigint, 10n));
      if (ta === 'timespan' && tb === 'timespan') return longOk((a.value as bigint) + (b.value as bigint), 'timespan');
      if (ta === 'long' && tb === 'long') return longOk((a.value as bigint) + (b.value as bigint), 'long');
      if (isNum(ta) && isNum(tb)) return { type: 'real', value: num(a) + num(b) };
      return undefined;
    case '-':
      if (ta === 'datetime' && tb === 'timespan') return datetimeOk((a.value as bigint) - tdiv(b.value as bigint, 10n));
      if (ta === 'datetime' && tb === 'datetime') return longOk(((a.value as bigint) - (b.value as bigint)) * 10n, 'timespan');
      if (ta === 'timespan' && tb === 'timespan') return longOk((a.value as bigint) - (b.value as bigint), 'timespan');
      if (ta === 'long' && tb === 'long') return longOk((a.value as bigint) - (b.value as bigint), 'long');
      if (isNum(ta) && isNum(tb)) return { type: 'real', value: num(a) - num(b) };
      return undefined;
    case '*':
      if (ta === 'timespan' && tb === 'long') return longOk((a.value as bigint) * (b.value as bigint), 'timespan');
      if (ta === 'long' && tb === 'timespan') return longOk((a.value as bigint) * (b.value as bigint), 'timespan');
      if (ta === 'long' && tb === 'long') return longOk((a.value as bigint) * (b.value as bigint), 'long');
      if (isNum(ta) && isNum(tb)) return { type: 'real', value: num(a) * num(b) };
      return undefined;
    case '/':
      if (ta === 'timespan' && tb === 'long')
        return (b.value as bigint) === 0n ? undefined : longOk(tdiv(a.value as bigint, b.value as bigint), 'timespan');
      if (ta === 'timespan' && tb === 'timespan')
        return (b.value as bigint) === 0n ? undefined : { type: 'real', value: Number(a.value) / Number(b.value) };
      if (ta === 'long' && tb === 'long')
        return (b.value as bigint) === 0n ? undefined : longOk(tdiv(a.value as bigint, b.value as bigint), 'long');
      if (isNum(ta) && isNum(tb)) return { type: 'real', value: num(a) / num(b) };
      return undefined;
    case '==':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=': {
      const c = compare(a, b);
      if (c === undefined) return undefined;
      const r =
        op === '==' ? c === 0 : op === '!=' ? c !== 0 : op === '<' ? c < 0 : op === '<=' ? c <= 0 : op === '>' ? c > 0 : c >= 0;
      return { type: 'bool', value: r };
    }
    case 'and':
      return ta === 'bool' && tb === 'bool' ? { type: 'bool', value: (a.value as boolean) && (b.value as boolean) } : undefined;
    case 'or':
      return ta === 'bool' && tb === 'bool' ? { type: 'bool', value: (a.value as boolean) || (b.value as boolean) } : undefined;
    default:
      return undefined;
  }
}

const isNum = (t: string) => t === 'long' || t === 'real';
const num = (v: LiteralValue): number => Number(v.value);

function compare(a: LiteralValue, b: LiteralValue): number | undefined {
  if (isNum(a.type) && isNum(b.type)) {
    if (a.type === 'long' && b.type === 'long')
      return (a.value as bigint) < (b.value as bigint) ? -1 : a.value === b.value ? 0 : 1;
    const x = num(a);
    const y = num(b);
    return x < y ? -1 : x === y ? 0 : x > y ? 1 : undefined;
  }
  if (a.type !== b.type) return undefined;
  if (a.type === 'datetime' || a.type === 'timespan') {
    const x = a.value as bigint;
    const y = b.value as bigint;
    return x < y ? -1 : x === y ? 0 : 1;
  }
  if (a.type === 'string') {
    const x = a.value as string;
    const y = b.value as string;
    return x < y ? -1 : x === y ? 0 : 1;
  }
  if (a.type === 'bool') return a.value === b.value ? 0 : a.value ? 1 : -1;
  return undefined;
}

export function evalNegate(a: LiteralValue): LiteralValue | undefined {
  if (a.value === null) return undefined;
  if (a.type === 'long' || a.type === 'timespan') return longOk(-(a.value as bigint), a.type);
  if (a.type === 'real') return { type: 'real', value: -(a.value as number) };
  return undefined;
}
