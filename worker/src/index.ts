export { EXECUTOR_SETTINGS_POLL_MS, type ExecutorLimitsListener, ExecutorSettingsPoller } from './executor-settings-poller.js';
export { ExecutorLimiter, Permits, threadsFor } from './query/executor-limits.js';
export { type LiveLimits, queryService } from './query/query-service.js';
export type { SegmentInfo, TableInfo } from './storage/catalog.js';
export { FreeSpaceGuard, type FreeSpaceState } from './storage/free-space-guard.js';
export type { AppendInput, AppendPart, AppendResult } from './storage/hot-writer.js';
export type { ScanRange, ScanRelation, ScanSnapshot } from './storage/scan.js';
export {
  DEFAULT_STORAGE_TUNING,
  type ScanHandle,
  type SchemaDescription,
  StorageEngine,
  type StorageTuning,
} from './storage/storage-engine.js';
export {
  startWorker,
  startWorkerWith,
  WORKER_SERVICE_FACTORIES,
  type WorkerHandle,
  type WorkerServiceDeps,
  type WorkerServiceEntry,
  type WorkerTestOptions,
} from './worker-role.js';
