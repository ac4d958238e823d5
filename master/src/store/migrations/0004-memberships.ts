import type { Migration } from '../migrations.js';

/**
 * Membership of an account becomes its own fact (`account_members`), separate from the permissions
 * held there: a member may hold none. Until this version a user was a member exactly when they held
 * a permission on the account, so every (account, user) pair of `account_permissions` becomes a
 * membership — existing data directories keep every member. From now on a permission row implies a
 * membership row (the repository keeps both in step).
 */
export const membershipsMigration: Migration = {
  version: 4,
  name: 'memberships',
  statements: [
    `CREATE TABLE account_members (
       account_id VARCHAR NOT NULL,
       user_id VARCHAR NOT NULL,
       added_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, user_id))`,
    `INSERT INTO account_members
       SELECT DISTINCT account_id, user_id, strftime(now() AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') FROM account_permissions`,
  ],
};
