/**
 * The query engine's public API.
 *
 * - `warmQueryEngine()` once at start-up (loads and warms the KQL parser).
 * - `planQuery(text, catalog, options)`: parse, bind to the caller's schema catalog, and cut into
 *   worker fragments + a gateway merge. Throws a StrataError ('invalid', with token positions)
 *   for anything refused.
 * - `executePlan(plan, runner, options)`: run it (see exec/executor.ts).
 * - `parseQuery(text, catalog, cursor)`: the /kusto/parse answer (diagnostics, result columns,
 *   completions).
 */
import { isStrataError, StrataError } from '@strata/common';
import { type PlanInput, planFragments, type QueryPlan } from './plan/planner.js';
import { NeedsAnswer, type PhaseAnswer } from './semantic/phases.js';
import { QueryBinder } from './semantic/query-binder.js';

export { variablesById } from './semantic/query-parameters.js';

import type { QueryAst } from './syntax/ast.js';
import { warmKustoParser } from './syntax/kusto-runtime.js';
import { DEFAULT_PARSE_LIMITS, type ParseLimits, parseKql } from './syntax/parse-kql.js';
import type { SchemaCatalog } from './types.js';

export interface PlanOptions {
  /** The query's `now()`; defaults to the current time. */
  now?: Date;
  /** Result row cap (rows beyond it are cut and flagged). */
  maxRows?: number;
  /** The column whose filters prune segments. */
  timeColumn?: string;
  limits?: ParseLimits;
  /** Values of `declare query_parameters(…)`, by name (from the request's variables). */
  parameters?: ReadonlyMap<string, unknown>;
  /** Rows every table read is limited to (BindOptions.window): an alert rule's lookback. */
  window?: { fromUs: bigint; toUs: bigint };
  /** Time conjuncts applied by the workers' scans, not the statements (PlanInput.storageTime). */
  storageTime?: boolean;
}

const DEFAULT_MAX_ROWS = 50_000;

export function warmQueryEngine(): Promise<number> {
  return warmKustoParser();
}

function nowMicros(now: Date | undefined): bigint {
  return BigInt(now ? now.getTime() : Date.now()) * 1000n;
}

/** Parses and binds a query; the bound form and result columns. */
/**
 * Parsed queries by text: dashboards send the same text on every refresh, and Microsoft's parse
 * is most of the planning time. The tree is not modified by binding; errors are cached too.
 */
const PARSE_CACHE_SIZE = 256;
const parseCache = new Map<string, { ast?: QueryAst; error?: unknown }>();

function parseCached(text: string, limits: ParseLimits): QueryAst {
  const key = limits === DEFAULT_PARSE_LIMITS ? text : `${JSON.stringify(limits)}\u0000${text}`;
  let entry = parseCache.get(key);
  if (entry) {
    parseCache.delete(key);
    parseCache.set(key, entry);
  } else {
    try {
      entry = { ast: parseKql(text, limits) };
    } catch (error) {
      entry = { error };
    }
    if (text.length <= 16_384) {
      parseCache.set(key, entry);
      if (parseCache.size > PARSE_CACHE_SIZE) parseCache.delete(parseCache.keys().next().value as string);
    }
  }
  if (entry.error !== undefined) throw entry.error;
  return entry.ast as QueryAst;
}

export function bindQuery(text: string, catalog: SchemaCatalog, options: PlanOptions = {}, answers: readonly PhaseAnswer[] = []) {
  const ast = parseCached(text, options.limits ?? DEFAULT_PARSE_LIMITS);
  const nowUs = nowMicros(options.now);
  const binder = new QueryBinder(catalog, {
    nowUs,
    timeColumn: options.timeColumn ?? 'timestamp',
    ...(options.parameters ? { parameters: options.parameters } : {}),
    ...(options.window ? { window: options.window } : {}),
    ...(answers.length > 0 ? { answers } : {}),
  });
  const bound = binder.bindQuery(ast);
  return { ast, bound, nowUs };
}

export function planQuery(text: string, catalog: SchemaCatalog, options: PlanOptions = {}): QueryPlan {
  return planPhase(text, catalog, options, []);
}

/**
 * The plan given the answers of earlier phases: the query's own plan, or — when its columns
 * depend on data not yet asked for — the next phase's plan, whose answer `nextPhase` takes.
 */
function planPhase(text: string, catalog: SchemaCatalog, options: PlanOptions, answers: readonly PhaseAnswer[]): QueryPlan {
  try {
    const { ast, bound, nowUs } = bindQuery(text, catalog, options, answers);
    const input: PlanInput = { rel: bound.rel, scalars: bound.scalars, maxRows: options.maxRows ?? DEFAULT_MAX_ROWS, nowUs };
    if (options.storageTime) input.storageTime = true;
    if (ast.render) input.render = ast.render;
    return planFragments(input);
  } catch (err) {
    if (!(err instanceof NeedsAnswer)) throw asQueryError(err);
    const nowUs = nowMicros(options.now);
    const phase = planFragments({ rel: err.rel, scalars: err.scalars, maxRows: err.maxRows, nowUs });
    // The same now() in every phase.
    const next: PlanOptions = { ...options, now: options.now ?? new Date(Number(nowUs / 1000n)) };
    return { ...phase, nextPhase: (answer) => planPhase(text, catalog, next, [...answers, answer]) };
  }
}

/** Anything unexpected while analysing a query is still the query's problem to the client: a 400. */
export function asQueryError(err: unknown): StrataError {
  if (isStrataError(err)) return err;
  if (err instanceof RangeError && /call stack/i.test(err.message)) {
    return new StrataError('invalid', 'The query is nested too deeply.', { cause: err });
  }
  return new StrataError('invalid', 'The query could not be analysed.', { cause: err });
}

export {
  type ColumnarResult,
  type ExecuteOptions,
  executePlan,
  executePlanColumnar,
  type FragmentRunner,
  resultRows,
} from './exec/executor.js';
export { MergeDatabase } from './exec/merge-database.js';
export type { QueryResult } from './exec/result-format.js';
export { queryResultJson } from './exec/result-json.js';
export type { FragmentSpec, QueryPlan } from './plan/planner.js';
