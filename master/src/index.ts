export { hashPassword, verifyPassword } from './auth/password-hash.js';
export { CompactionDuty, type CompactionDutyOptions } from './compaction/compaction-duty.js';
export {
  type CompactionCycleReport,
  CompactionScheduler,
  type CompactionSchedulerOptions,
  DEFAULT_COMPACTION_MAX_FILE_SIZE,
} from './compaction/compaction-scheduler.js';
export { type CompactionJob, type PlannerSegment, planCompaction } from './compaction/planner.js';
export { DirectoryRepository } from './directory/directory-repository.js';
export type { LeaderDuty, LeaderState } from './leader-state.js';
export { startMaster, withPort } from './master-role.js';
export { redactedSettings, SettingsRepository } from './settings/settings-repository.js';
export { RelationalStore, type SqlExecutor, type SqlParam } from './store/relational-store.js';
