import type { Migration } from '../migrations.js';

/**
 * Webhook endpoints of an account and their delivery outbox (docs/alerting.md, "Webhooks"). Like
 * the mail outbox, a delivery row is written in the transaction of the event it announces, and
 * the leader sends it; the rows of an endpoint are its delivery log. The signing secret is kept
 * in the clear because every delivery is signed with it; the API never returns it after creation.
 */
export const webhooksMigration: Migration = {
  version: 9,
  name: 'webhooks',
  statements: [
    `CREATE TABLE webhook_endpoints (
       account_id VARCHAR NOT NULL,
       webhook_id VARCHAR NOT NULL,
       name VARCHAR NOT NULL,
       url VARCHAR NOT NULL,
       format VARCHAR NOT NULL,
       events_json VARCHAR NOT NULL,
       enabled BOOLEAN NOT NULL,
       secret VARCHAR NOT NULL,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, webhook_id))`,
    `CREATE TABLE webhook_outbox (
       delivery_id VARCHAR NOT NULL PRIMARY KEY,
       account_id VARCHAR NOT NULL,
       webhook_id VARCHAR NOT NULL,
       event_type VARCHAR NOT NULL,
       payload_json VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       status VARCHAR NOT NULL,
       attempts INTEGER NOT NULL,
       next_attempt_at VARCHAR NOT NULL,
       last_status_code INTEGER,
       last_error VARCHAR,
       finished_at VARCHAR)`,
  ],
};
