import type { Migration } from '../migrations.js';

/**
 * KQL alert rules, their alert records and evaluation log (docs/alerting.md). A rule's definition
 * is stored as the JSON of `AlertRuleDefinition` (proto/strata/alerting/v1): the gateway validates
 * it, and new fields need no migration. The scheduling columns are the leader's: the last applied
 * tick and the current claim (which gateway runs the due evaluation, until when).
 */
export const alertRulesMigration: Migration = {
  // 8, not 7: main's migration 7 (storage-policy) was written in parallel; versions need not be contiguous.
  version: 8,
  name: 'alert-rules',
  statements: [
    `CREATE TABLE alert_rules (
       account_id VARCHAR NOT NULL,
       alert_id VARCHAR NOT NULL,
       definition_json VARCHAR NOT NULL,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       status VARCHAR NOT NULL,
       last_error VARCHAR,
       last_tick_at VARCHAR,
       last_evaluated_at VARCHAR,
       claim_token VARCHAR,
       claim_tick_at VARCHAR,
       claim_expires_at VARCHAR,
       claimed_at VARCHAR,
       PRIMARY KEY (account_id, alert_id))`,
    `CREATE TABLE alert_records (
       account_id VARCHAR NOT NULL,
       alert_id VARCHAR NOT NULL,
       alert_record_id VARCHAR NOT NULL,
       dimensions_json VARCHAR NOT NULL,
       state VARCHAR NOT NULL,
       incident_id VARCHAR,
       first_fired_at VARCHAR,
       last_seen_at VARCHAR,
       clean_evaluations INTEGER NOT NULL,
       resolved_at VARCHAR,
       PRIMARY KEY (account_id, alert_record_id))`,
    `CREATE TABLE alert_evaluations (
       account_id VARCHAR NOT NULL,
       alert_id VARCHAR NOT NULL,
       tick_at VARCHAR NOT NULL,
       evaluated_at VARCHAR NOT NULL,
       claimed_at VARCHAR NOT NULL,
       evaluator VARCHAR NOT NULL,
       duration_ms BIGINT NOT NULL,
       row_count BIGINT NOT NULL,
       fired_json VARCHAR NOT NULL,
       resolved_json VARCHAR NOT NULL,
       error VARCHAR,
       PRIMARY KEY (account_id, alert_id, tick_at))`,
  ],
};
