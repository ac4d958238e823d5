import type { Migration } from '../migrations.js';

/** Accounts, users (scrypt password hashes) and their global and per-account permissions. */
export const directoryMigration: Migration = {
  version: 1,
  name: 'directory',
  statements: [
    `CREATE TABLE accounts (
       account_id VARCHAR PRIMARY KEY,
       account_name VARCHAR NOT NULL UNIQUE,
       created_at VARCHAR NOT NULL)`,
    `CREATE TABLE users (
       user_id VARCHAR PRIMARY KEY,
       user_name VARCHAR NOT NULL,
       user_name_key VARCHAR NOT NULL UNIQUE,
       first_name VARCHAR NOT NULL DEFAULT '',
       last_name VARCHAR NOT NULL DEFAULT '',
       email VARCHAR NOT NULL DEFAULT '',
       password_hash VARCHAR,
       created_at VARCHAR NOT NULL)`,
    `CREATE TABLE global_permissions (
       user_id VARCHAR NOT NULL,
       permission VARCHAR NOT NULL,
       PRIMARY KEY (user_id, permission))`,
    `CREATE TABLE account_permissions (
       user_id VARCHAR NOT NULL,
       account_id VARCHAR NOT NULL,
       permission VARCHAR NOT NULL,
       PRIMARY KEY (user_id, account_id, permission))`,
  ],
};
