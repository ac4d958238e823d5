import type { Migration } from '../migrations.js';

/** Named queries of an account (logsh's TUI): shared by everyone who may query the account. */
export const savedQueriesMigration: Migration = {
  version: 5,
  name: 'saved-queries',
  statements: [
    `CREATE TABLE saved_queries (
       account_id VARCHAR NOT NULL,
       query_id VARCHAR NOT NULL,
       name VARCHAR NOT NULL,
       query VARCHAR NOT NULL,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, query_id))`,
  ],
};
