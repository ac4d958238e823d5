import { invalid } from '@strata/common';
import type { AlertRuleDefinition } from '@strata/proto/alerting/v1/alert_rules';
import { planQuery } from '../query/engine.js';
import type { QueryService } from '../query/query-service.js';

const NUMERIC = new Set(['long', 'real']);

/**
 * Checks a rule before it is saved or tried: the query parses and binds against the account's
 * tables as it would at evaluation (the engine's own error, with token positions, when not), and
 * the dimension and threshold columns are result columns (a threshold column numeric).
 */
export async function checkAlertRule(query: QueryService, accountId: string, def: AlertRuleDefinition): Promise<void> {
  const now = new Date();
  const toUs = BigInt(now.getTime()) * 1000n;
  const options = { now, window: { fromUs: toUs - BigInt(def.lookbackSeconds) * 1_000_000n, toUs } };
  let plan: ReturnType<typeof planQuery>;
  try {
    plan = planQuery(def.query, await query.catalog(accountId), options);
  } catch {
    plan = planQuery(def.query, await query.catalog(accountId, { fresh: true }), options);
  }
  // Planned in phases (partition; bag_unpack / pivot without an output schema): the columns are
  // only known when the query runs, and a rule is checked without running it.
  if (plan.nextPhase)
    throw invalid(
      'An alert rule needs result columns known without running the query: partition, and evaluate bag_unpack or pivot without an output schema, are not usable in alert rules.',
    );
  const columns = new Map(plan.columns.map((c) => [c.name, c.type] as const));
  const names = [...columns.keys()].join(', ');
  for (const d of def.dimensions) {
    if (!columns.has(d)) throw invalid(`The dimension column '${d}' is not a result column of the query (${names}).`);
  }
  const c = def.condition!;
  if (c.kind === 'threshold') {
    const type = columns.get(c.column);
    if (!type) throw invalid(`The condition column '${c.column}' is not a result column of the query (${names}).`);
    if (!NUMERIC.has(type)) throw invalid(`The condition column '${c.column}' is a ${type}, not a number.`);
  }
}
