import type { AlertRuleDefinition, FiringRecord } from '@strata/proto/alerting/v1/alert_rules';
import { resultRows } from '../query/engine.js';
import type { QueryService } from '../query/query-service.js';
import { firingRecords } from './alert-condition.js';

export interface EvaluationResult {
  rows: number;
  firing: FiringRecord[];
  durationMs: number;
}

/**
 * Runs a rule's query as of `at` through the gateway's query service, the same path as
 * `/search/{accountId}/kusto` (same executor limits on the workers, same refusal of failed or
 * partial answers: those throw, and the caller records ERROR): `now()` and `ago()` are `at`, and
 * every table read is limited to [at - lookback, at) on `timestamp` before the query's own steps.
 * The rule's timeout bounds the run. As for an HTTP query (QueryService.runCovered), the workers to
 * ask come from the account's current view and serve both the catalog and the run: one coordinator
 * read, and the query's time conjuncts are left to the scans when every worker applies them
 * (decision 0018; before decision 0027 evaluations resolved the workers per call and planned full
 * statements).
 */
export async function evaluateRule(
  query: QueryService,
  accountId: string,
  def: AlertRuleDefinition,
  at: Date,
): Promise<EvaluationResult> {
  const started = performance.now();
  const toUs = BigInt(at.getTime()) * 1000n;
  const fromUs = toUs - BigInt(def.lookbackSeconds) * 1_000_000n;
  const { result } = await query.runCovered(def.query, (coverage, fresh) => query.catalog(accountId, { fresh, coverage }), {
    accountId,
    allowPartial: false,
    timeoutMs: def.timeoutSeconds * 1000,
    plan: { now: at, window: { fromUs, toUs } },
  });
  const rows = resultRows(result).results;
  return {
    rows: rows.length,
    firing: firingRecords(rows, def.condition!, def.dimensions),
    durationMs: Math.round(performance.now() - started),
  };
}
