/**
 * Queries whose result columns depend on the data (`evaluate bag_unpack(…)`, `evaluate pivot(…)`
 * without an output schema) are planned in phases. Binding stops at such an operator and throws
 * NeedsAnswer with a first-phase relation (the distinct property names, the distinct pivot
 * values); the plan runs that relation like any query, and the query is bound again with the
 * answer. Binding is deterministic, so on the next round the same operators ask the same
 * questions in the same order and the i-th question gets the i-th answer.
 */
import type { Rel } from './rel.js';
import type { ScalarQuery } from './scalar-query.js';

/** A first-phase answer: one array of raw (readable-form) values per column. */
export interface PhaseAnswer {
  values: unknown[][];
  rowCount: number;
  /** More rows than the phase asked for existed. */
  truncated: boolean;
}

/** Most phases one query may need (each is a round of worker calls before the query). */
export const MAX_PHASES = 8;

export class NeedsAnswer extends Error {
  constructor(
    /** What must run first. */
    readonly rel: Rel,
    /** Rows wanted; more is reported as truncated. */
    readonly maxRows: number,
    /** toscalar() subqueries the relation uses (bound before it). */
    readonly scalars: ScalarQuery[],
  ) {
    super('the query needs a first phase');
  }
}
