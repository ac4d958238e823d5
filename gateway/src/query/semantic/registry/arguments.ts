/**
 * Argument checks the function families share (each family file binds its own calls).
 */
import { queryError } from '../../errors.js';
import type { Expr } from '../../syntax/ast.js';

export type CallExpr = Extract<Expr, { kind: 'call' }>;

/** Refuses a call with `n` arguments unless min ≤ n ≤ max (max may be Infinity), naming the function. */
export function arity(call: CallExpr, n: number, min: number, max = min): void {
  if (n < min || n > max) {
    const expected = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
    throw queryError(`The function '${call.name}' takes ${expected} arguments, not ${n}.`, call.span);
  }
}
