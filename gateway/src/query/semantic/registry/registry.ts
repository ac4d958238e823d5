/**
 * The one place that answers "what is this function name": a scalar function, an aggregate, or
 * neither. Built from the declarations in scalar-functions.ts and aggregate-functions.ts; read by
 * the expression binder, the summarize binder, `/kusto/parse` completions and the docs test.
 */
import { AGGREGATE_FUNCTIONS } from './aggregate-functions.js';
import { SCALAR_FUNCTIONS } from './scalar-functions.js';
import type { AggregateEntry, NamingRule, RegistryEntry, ScalarFunctionEntry } from './types.js';

function byName<T extends RegistryEntry>(entries: readonly T[]): Map<string, T> {
  const map = new Map<string, T>();
  for (const e of entries) {
    if (map.has(e.name)) throw new Error(`the function ${e.name} is declared twice`);
    map.set(e.name, e);
  }
  return map;
}

const SCALARS = byName(SCALAR_FUNCTIONS);
const AGGREGATES = byName(AGGREGATE_FUNCTIONS);

export function scalarFunction(name: string): ScalarFunctionEntry | undefined {
  return SCALARS.get(name.toLowerCase());
}

export function aggregateFunction(name: string): AggregateEntry | undefined {
  return AGGREGATES.get(name.toLowerCase());
}

/** Every declared entry, scalar functions first, each group in declaration order. */
export function allFunctions(): readonly RegistryEntry[] {
  return [...SCALAR_FUNCTIONS, ...AGGREGATE_FUNCTIONS];
}

export type { AggregateEntry, NamingRule, RegistryEntry, ScalarFunctionEntry };
