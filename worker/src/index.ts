export { EXECUTOR_SETTINGS_POLL_MS, type ExecutorLimitsListener, ExecutorSettingsPoller } from './executor-settings-poller.js';
export { startWorker } from './worker-role.js';
