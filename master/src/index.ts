export { hashPassword, verifyPassword } from './auth/password-hash.js';
export { DirectoryRepository } from './directory/directory-repository.js';
export type { LeaderDuty, LeaderState } from './leader-state.js';
export { startMaster, withPort } from './master-role.js';
export { redactedSettings, SettingsRepository } from './settings/settings-repository.js';
export { RelationalStore, type SqlExecutor, type SqlParam } from './store/relational-store.js';
