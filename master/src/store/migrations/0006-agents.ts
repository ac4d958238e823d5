import type { Migration } from '../migrations.js';

/**
 * Collection agents (compatibility reference §1.8): registration tokens an account admin creates,
 * and the devices that registered with them. Secrets are stored as SHA-256 hashes only (they are
 * random 256-bit values, so a fast hash is enough; nothing to brute-force).
 */
export const agentsMigration: Migration = {
  version: 6,
  name: 'agents',
  statements: [
    `CREATE TABLE agent_registration_tokens (
       account_id VARCHAR NOT NULL,
       token_id VARCHAR NOT NULL,
       secret_hash VARCHAR NOT NULL UNIQUE,
       description VARCHAR NOT NULL,
       created_by_user_id VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       expires_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, token_id))`,
    `CREATE TABLE agent_devices (
       account_id VARCHAR NOT NULL,
       device_id VARCHAR NOT NULL,
       name VARCHAR NOT NULL,
       host_name VARCHAR NOT NULL,
       attributes_json VARCHAR NOT NULL,
       state VARCHAR NOT NULL,
       registration_token_id VARCHAR NOT NULL,
       refresh_hash VARCHAR NOT NULL,
       created_at VARCHAR NOT NULL,
       approved_at VARCHAR NOT NULL DEFAULT '',
       approved_by_user_id VARCHAR NOT NULL DEFAULT '',
       last_seen_at VARCHAR NOT NULL,
       PRIMARY KEY (account_id, device_id))`,
  ],
};
