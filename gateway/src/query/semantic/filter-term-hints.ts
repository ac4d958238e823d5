/**
 * The term hints of a where clause (common/src/query/term-hints.ts): its conjuncts that are `has`,
 * `has_cs`, `has_any` or `has_all` of a scan column (possibly renamed) against constant terms.
 * A worker may leave out segments whose term index proves no row holds them (decision 0026); the
 * statement keeps the conditions, so the hints never change an answer by themselves.
 *
 * Only conjuncts: a term under `or` or `not` (or a negated operator) does not have to be in a row
 * that passes the filter.
 */
import { type TermHint, termKeys } from '@strata/common';
import type { Expr } from '../syntax/ast.js';
import type { Bound } from './bound.js';
import { terms } from './term-operators.js';

interface Binder {
  bind(e: Expr): Bound;
}

/** The stored column a term operator reads: a plain String column that still carries a scan column. */
function scanColumn(e: Expr, binder: Binder): string | undefined {
  if (e.kind !== 'name') return undefined;
  const b = binder.bind(e);
  return b.type === 'string' && b.json === undefined ? b.column?.origin : undefined;
}

function hintsOf(e: Expr, binder: Binder): TermHint[] {
  if (e.kind === 'binary' && (e.op === 'has' || e.op === 'has_cs')) {
    const column = scanColumn(e.left, binder);
    const needle = binder.bind(e.right).value;
    if (column === undefined || needle?.type !== 'string') return [];
    const keys = termKeys(needle.value);
    return keys ? [{ column, anyOf: [keys] }] : [];
  }
  if (e.kind === 'in' && (e.op === 'has_any' || e.op === 'has_all')) {
    const column = scanColumn(e.left, binder);
    if (column === undefined) return [];
    const list = terms(
      e.list.map((x) => binder.bind(x)),
      e.op,
    );
    const keyed = list.map(termKeys);
    if (e.op === 'has_all') return keyed.flatMap((keys) => (keys ? [{ column, anyOf: [keys] }] : []));
    // has_any: a row may match any term, so every term must be looked up (or nothing is known).
    if (keyed.length === 0 || keyed.some((k) => k === undefined)) return [];
    return [{ column, anyOf: keyed as string[][] }];
  }
  return [];
}

/** The hints of a where predicate: one or more per qualifying top-level conjunct. */
export function filterTermHints(predicate: Expr, binder: Binder): TermHint[] {
  const out: TermHint[] = [];
  const visit = (e: Expr) => {
    if (e.kind === 'binary' && e.op === 'and') {
      visit(e.left);
      visit(e.right);
      return;
    }
    try {
      out.push(...hintsOf(e, binder));
    } catch {
      // A conjunct that does not bind on its own gives no hint (the where clause reports it).
    }
  };
  visit(predicate);
  return out;
}
