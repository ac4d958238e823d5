/**
 * The backend (worker) role's public API: starting the role, and the storage engine and query
 * service that cross-role tests and benchmarks run in-process.
 */
export { type LiveLimits, queryService } from './query/query-service.js';
export { FreeSpaceGuard } from './storage/free-space-guard.js';
export type { AppendInput, AppendPart, AppendResult } from './storage/hot-writer.js';
export { StorageEngine, type StorageTuning } from './storage/storage-engine.js';
export { startWorker, startWorkerWith, type WorkerHandle, type WorkerTestOptions } from './worker-role.js';
