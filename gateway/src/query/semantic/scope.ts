/**
 * What names mean at one point of a query: scalar values, tabular values and let-declared
 * functions. Scopes are lexical and immutable: every let (and a function's parameters) makes a
 * new scope from the one before, and tabular values and functions keep the scope they were
 * declared in, so a name in a function body means what it meant where the function was written.
 */
import type { FunctionDecl, TabularExpr } from '../syntax/ast.js';
import type { Bound } from './bound.js';

/** A tabular value: its expression, bound again at each use in the scope it was declared in. */
export interface TabularBinding {
  tabular: TabularExpr;
  scope: Scope;
}

/** A let-declared function with the scope it was declared in (so it cannot call itself). */
export interface FunctionBinding {
  name: string;
  decl: FunctionDecl;
  scope: Scope;
}

export interface Scope {
  readonly scalars: ReadonlyMap<string, Bound>;
  readonly tabulars: ReadonlyMap<string, TabularBinding>;
  readonly functions: ReadonlyMap<string, FunctionBinding>;
}

export const EMPTY_SCOPE: Scope = { scalars: new Map(), tabulars: new Map(), functions: new Map() };

type Entry =
  | { kind: 'scalar'; value: Bound }
  | { kind: 'tabular'; value: TabularBinding }
  | { kind: 'function'; value: FunctionBinding };

/** A new scope in which `name` means `entry` (and no longer anything else it meant). */
export function declare(scope: Scope, name: string, entry: Entry): Scope {
  const scalars = new Map(scope.scalars);
  const tabulars = new Map(scope.tabulars);
  const functions = new Map(scope.functions);
  scalars.delete(name);
  tabulars.delete(name);
  functions.delete(name);
  if (entry.kind === 'scalar') scalars.set(name, entry.value);
  else if (entry.kind === 'tabular') tabulars.set(name, entry.value);
  else functions.set(name, entry.value);
  return { scalars, tabulars, functions };
}
