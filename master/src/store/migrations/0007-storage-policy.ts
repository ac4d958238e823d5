import type { Migration } from '../migrations.js';

/**
 * What workers must keep and delete (docs/architecture.md, "Data lifecycle"): per-schema retention
 * overrides (the account and system retention are settings) and schema drops for workers that
 * were unreachable when a schema was dropped, and purge jobs with their progress per worker.
 */
export const storagePolicyMigration: Migration = {
  version: 7,
  name: 'storage-policy',
  statements: [
    `CREATE TABLE schema_retention (
       account_id VARCHAR NOT NULL,
       schema_name VARCHAR NOT NULL,
       retention VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       updated_by VARCHAR NOT NULL,
       PRIMARY KEY (account_id, schema_name))`,
    `CREATE TABLE schema_drops (
       drop_id VARCHAR PRIMARY KEY,
       account_id VARCHAR NOT NULL,
       schema_name VARCHAR NOT NULL,
       dropped_at VARCHAR NOT NULL,
       dropped_by VARCHAR NOT NULL)`,
    // A purge job and, per worker that held data when it started, how far it got (JSON).
    `CREATE TABLE purge_jobs (
       job_id VARCHAR PRIMARY KEY,
       account_id VARCHAR NOT NULL,
       schema_name VARCHAR NOT NULL,
       predicate VARCHAR NOT NULL,
       fragment VARCHAR NOT NULL,
       requested_by VARCHAR NOT NULL,
       requested_at VARCHAR NOT NULL,
       state VARCHAR NOT NULL,
       finished_at VARCHAR,
       error VARCHAR,
       workers VARCHAR NOT NULL)`,
  ],
};
