import { directoryMigration } from './migrations/0001-directory.js';
import { settingsMigration } from './migrations/0002-settings.js';
import { incidentsMigration } from './migrations/0003-incidents.js';
import { membershipsMigration } from './migrations/0004-memberships.js';
import { savedQueriesMigration } from './migrations/0005-saved-queries.js';
import { agentsMigration } from './migrations/0006-agents.js';
import { storagePolicyMigration } from './migrations/0007-storage-policy.js';
import type { Migration } from './migrations.js';

/** Every migration of the relational store, in version order. Add new ones at the end. */
export const ALL_MIGRATIONS: Migration[] = [
  directoryMigration,
  settingsMigration,
  incidentsMigration,
  membershipsMigration,
  savedQueriesMigration,
  agentsMigration,
  storagePolicyMigration,
];
