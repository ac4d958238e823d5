import type { Migration } from '../migrations.js';

/**
 * System settings and per-account settings. Only stored values have rows; a missing row means
 * the catalogue's default applies (common/src/settings). Who changed a value and when is kept.
 */
export const settingsMigration: Migration = {
  version: 2,
  name: 'settings',
  statements: [
    `CREATE TABLE system_settings (
       setting_key VARCHAR PRIMARY KEY,
       value VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       updated_by VARCHAR NOT NULL DEFAULT '')`,
    `CREATE TABLE account_settings (
       account_id VARCHAR NOT NULL,
       setting_key VARCHAR NOT NULL,
       value VARCHAR NOT NULL,
       updated_at VARCHAR NOT NULL,
       updated_by VARCHAR NOT NULL DEFAULT '',
       PRIMARY KEY (account_id, setting_key))`,
  ],
};
