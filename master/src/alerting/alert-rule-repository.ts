import {
  type AlertEvaluation,
  type AlertRecord,
  type AlertRule,
  AlertRuleDefinition,
} from '@strata/proto/alerting/v1/alert_rules';
import type { SqlExecutor } from '../store/relational-store.js';

/** SQL of alert rules, alert records and the evaluation log (migration 8). */

interface RuleRow {
  account_id: string;
  alert_id: string;
  definition_json: string;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
  status: string;
  last_error: string | null;
  last_tick_at: string | null;
  last_evaluated_at: string | null;
  claim_token: string | null;
  claim_tick_at: string | null;
  claim_expires_at: string | null;
  claimed_at: string | null;
  [k: string]: unknown;
}

/** A rule with the leader's scheduling columns. */
export interface StoredRule {
  rule: AlertRule;
  claim?: RuleClaim;
}

export interface RuleClaim {
  token: string;
  tickAt: string;
  expiresAt: string;
  claimedAt: string;
}

const toStored = (r: RuleRow): StoredRule => ({
  rule: {
    accountId: r.account_id,
    alertId: r.alert_id,
    definition: AlertRuleDefinition.fromJSON(JSON.parse(r.definition_json)),
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    status: {
      state: r.status,
      lastError: r.last_error ?? '',
      lastTickAt: r.last_tick_at ?? '',
      lastEvaluatedAt: r.last_evaluated_at ?? '',
    },
  },
  ...(r.claim_token && r.claim_tick_at && r.claim_expires_at
    ? { claim: { token: r.claim_token, tickAt: r.claim_tick_at, expiresAt: r.claim_expires_at, claimedAt: r.claimed_at ?? '' } }
    : {}),
});

export const ruleRows = {
  async list(x: SqlExecutor, accountId: string): Promise<StoredRule[]> {
    const rows = await x.all<RuleRow>('SELECT * FROM alert_rules WHERE account_id = $1 ORDER BY created_at, alert_id', [
      accountId,
    ]);
    return rows.map(toStored);
  },

  /** Every rule of every account: the scheduler's view (rules are few; no index, see migration 3). */
  async all(x: SqlExecutor): Promise<StoredRule[]> {
    return (await x.all<RuleRow>('SELECT * FROM alert_rules ORDER BY account_id, alert_id')).map(toStored);
  },

  async get(x: SqlExecutor, accountId: string, alertId: string): Promise<StoredRule | undefined> {
    const row = await x.one<RuleRow>('SELECT * FROM alert_rules WHERE account_id = $1 AND alert_id = $2', [accountId, alertId]);
    return row && toStored(row);
  },

  async insert(x: SqlExecutor, rule: AlertRule): Promise<void> {
    await x.run(
      `INSERT INTO alert_rules (account_id, alert_id, definition_json, created_by_user_id, created_at, updated_at, status)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        rule.accountId,
        rule.alertId,
        JSON.stringify(AlertRuleDefinition.toJSON(rule.definition!)),
        rule.createdByUserId,
        rule.createdAt,
        rule.updatedAt,
        rule.status!.state,
      ],
    );
  },

  async updateDefinition(x: SqlExecutor, rule: AlertRule): Promise<void> {
    await x.run('UPDATE alert_rules SET definition_json = $3, updated_at = $4 WHERE account_id = $1 AND alert_id = $2', [
      rule.accountId,
      rule.alertId,
      JSON.stringify(AlertRuleDefinition.toJSON(rule.definition!)),
      rule.updatedAt,
    ]);
  },

  async claim(x: SqlExecutor, accountId: string, alertId: string, claim: RuleClaim) {
    await x.run(
      `UPDATE alert_rules SET claim_token = $3, claim_tick_at = $4, claim_expires_at = $5, claimed_at = $6
       WHERE account_id = $1 AND alert_id = $2`,
      [accountId, alertId, claim.token, claim.tickAt, claim.expiresAt, claim.claimedAt],
    );
  },

  /** Records an applied evaluation: its tick, outcome and the end of its claim. */
  async evaluated(
    x: SqlExecutor,
    accountId: string,
    alertId: string,
    outcome: { tickAt: string; evaluatedAt: string; status: string; error?: string },
  ): Promise<void> {
    await x.run(
      `UPDATE alert_rules SET status = $3, last_error = $4, last_tick_at = $5, last_evaluated_at = $6,
         claim_token = NULL, claim_tick_at = NULL, claim_expires_at = NULL, claimed_at = NULL
       WHERE account_id = $1 AND alert_id = $2`,
      [accountId, alertId, outcome.status, outcome.error ?? null, outcome.tickAt, outcome.evaluatedAt],
    );
  },

  async delete(x: SqlExecutor, accountId: string, alertId: string): Promise<void> {
    const key = [accountId, alertId];
    await x.run('DELETE FROM alert_evaluations WHERE account_id = $1 AND alert_id = $2', key);
    await x.run('DELETE FROM alert_records WHERE account_id = $1 AND alert_id = $2', key);
    await x.run('DELETE FROM alert_rules WHERE account_id = $1 AND alert_id = $2', key);
  },
};

interface RecordRow {
  account_id: string;
  alert_id: string;
  alert_record_id: string;
  dimensions_json: string;
  state: string;
  incident_id: string | null;
  first_fired_at: string | null;
  last_seen_at: string | null;
  clean_evaluations: number;
  resolved_at: string | null;
  [k: string]: unknown;
}

const toRecord = (r: RecordRow): AlertRecord => ({
  accountId: r.account_id,
  alertId: r.alert_id,
  alertRecordId: r.alert_record_id,
  dimensionsJson: r.dimensions_json,
  state: r.state,
  incidentId: r.incident_id ?? '',
  firstFiredAt: r.first_fired_at ?? '',
  lastSeenAt: r.last_seen_at ?? '',
  cleanEvaluations: Number(r.clean_evaluations),
  resolvedAt: r.resolved_at ?? '',
});

export const recordRows = {
  async list(x: SqlExecutor, accountId: string, alertId: string): Promise<AlertRecord[]> {
    const rows = await x.all<RecordRow>(
      'SELECT * FROM alert_records WHERE account_id = $1 AND alert_id = $2 ORDER BY first_fired_at, alert_record_id',
      [accountId, alertId],
    );
    return rows.map(toRecord);
  },

  async upsert(x: SqlExecutor, r: AlertRecord): Promise<void> {
    await x.run(`INSERT OR REPLACE INTO alert_records VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, [
      r.accountId,
      r.alertId,
      r.alertRecordId,
      r.dimensionsJson,
      r.state,
      r.incidentId || null,
      r.firstFiredAt || null,
      r.lastSeenAt || null,
      r.cleanEvaluations,
      r.resolvedAt || null,
    ]);
  },
};

interface EvaluationRow {
  account_id: string;
  alert_id: string;
  tick_at: string;
  evaluated_at: string;
  claimed_at: string;
  evaluator: string;
  duration_ms: bigint | number;
  row_count: bigint | number;
  fired_json: string;
  resolved_json: string;
  error: string | null;
  [k: string]: unknown;
}

const toEvaluation = (r: EvaluationRow): AlertEvaluation => ({
  accountId: r.account_id,
  alertId: r.alert_id,
  tickAt: r.tick_at,
  evaluatedAt: r.evaluated_at,
  durationMs: Number(r.duration_ms),
  rows: Number(r.row_count),
  firedRecordIds: JSON.parse(r.fired_json) as string[],
  resolvedRecordIds: JSON.parse(r.resolved_json) as string[],
  error: r.error ?? '',
  claimedAt: r.claimed_at,
});

export const evaluationRows = {
  async list(x: SqlExecutor, accountId: string, alertId: string, limit: number): Promise<AlertEvaluation[]> {
    const rows = await x.all<EvaluationRow>(
      'SELECT * FROM alert_evaluations WHERE account_id = $1 AND alert_id = $2 ORDER BY tick_at DESC LIMIT $3',
      [accountId, alertId, limit],
    );
    return rows.map(toEvaluation);
  },

  async insert(x: SqlExecutor, e: AlertEvaluation, evaluator: string): Promise<void> {
    await x.run('INSERT INTO alert_evaluations VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)', [
      e.accountId,
      e.alertId,
      e.tickAt,
      e.evaluatedAt,
      e.claimedAt,
      evaluator,
      e.durationMs,
      e.rows,
      JSON.stringify(e.firedRecordIds),
      JSON.stringify(e.resolvedRecordIds),
      e.error || null,
    ]);
  },

  /** Drops a rule's log entries older than `before` (the log is kept for a bounded time). */
  async prune(x: SqlExecutor, accountId: string, alertId: string, before: string): Promise<void> {
    await x.run('DELETE FROM alert_evaluations WHERE account_id = $1 AND alert_id = $2 AND tick_at < $3', [
      accountId,
      alertId,
      before,
    ]);
  },
};
