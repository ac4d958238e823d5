import type { Migration } from '../migrations.js';

/**
 * Incidents, comments, history, groups and members, alert links and runtime states, and the
 * notification outbox. Times are ISO 8601 UTC strings (fixed width, so they sort as text).
 * Deliberately no secondary indexes: DuckDB rewrites an UPDATE of an indexed column as delete +
 * insert, and the tables stay small enough for scans per account.
 */
export const incidentsMigration: Migration = {
  version: 3,
  name: 'incidents',
  statements: [
    `CREATE TABLE incident_groups (
       account_id VARCHAR NOT NULL,
       group_id VARCHAR NOT NULL,
       name VARCHAR NOT NULL,
       description VARCHAR,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, group_id))`,
    `CREATE TABLE incident_group_members (
       account_id VARCHAR NOT NULL,
       group_id VARCHAR NOT NULL,
       user_id VARCHAR NOT NULL,
       added_by_user_id VARCHAR NOT NULL,
       added_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, group_id, user_id))`,
    `CREATE TABLE incidents (
       account_id VARCHAR NOT NULL,
       incident_id VARCHAR NOT NULL,
       title VARCHAR NOT NULL,
       description VARCHAR,
       state VARCHAR NOT NULL,
       severity VARCHAR NOT NULL,
       owner_type VARCHAR NOT NULL,
       owner_id VARCHAR NOT NULL,
       assignee_user_id VARCHAR,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       resolved_at VARCHAR,
       resolution_note VARCHAR,
       reopen_reason VARCHAR,
       version INTEGER NOT NULL,
       PRIMARY KEY (account_id, incident_id))`,
    // seq orders comments and events written within the same millisecond.
    'CREATE SEQUENCE incident_record_seq START 1',
    `CREATE TABLE incident_comments (
       account_id VARCHAR NOT NULL,
       incident_id VARCHAR NOT NULL,
       comment_id VARCHAR NOT NULL,
       seq BIGINT NOT NULL,
       author_user_id VARCHAR NOT NULL,
       body VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, comment_id))`,
    `CREATE TABLE incident_history (
       account_id VARCHAR NOT NULL,
       incident_id VARCHAR NOT NULL,
       event_id VARCHAR NOT NULL PRIMARY KEY,
       seq BIGINT NOT NULL,
       event_type VARCHAR NOT NULL,
       actor_type VARCHAR NOT NULL,
       actor_id VARCHAR NOT NULL,
       timestamp VARCHAR NOT NULL,
       before_json VARCHAR,
       after_json VARCHAR,
       metadata_json VARCHAR NOT NULL)`,
    `CREATE TABLE alert_incident_links (
       account_id VARCHAR NOT NULL,
       alert_record_id VARCHAR NOT NULL,
       incident_id VARCHAR NOT NULL,
       link_source VARCHAR NOT NULL,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, alert_record_id, incident_id))`,
    `CREATE TABLE alert_runtime_states (
       account_id VARCHAR NOT NULL,
       alert_record_id VARCHAR NOT NULL,
       state VARCHAR NOT NULL,
       updated_by_user_id VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, alert_record_id))`,
    // One row per e-mail to one recipient. status: pending, sent, failed (permanent SMTP error)
    // or dropped (older than the account's Drop.Unsent.After when processed).
    `CREATE TABLE notification_outbox (
       mail_id VARCHAR NOT NULL PRIMARY KEY,
       account_id VARCHAR NOT NULL,
       incident_id VARCHAR NOT NULL,
       event_type VARCHAR NOT NULL,
       recipient_user_id VARCHAR NOT NULL,
       recipient_address VARCHAR NOT NULL,
       message_id VARCHAR NOT NULL,
       payload_json VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       status VARCHAR NOT NULL,
       attempts INTEGER NOT NULL,
       next_attempt_at VARCHAR NOT NULL,
       last_error VARCHAR,
       finished_at VARCHAR)`,
  ],
};
