export { main } from './cli.js';
export { type RunningProcess, startProcess } from './process-runner.js';
export { DEFAULT_ACCOUNT_ID, DEFAULT_ADMIN_USER_ID, singleNodeConfig } from './single-node-config.js';
export { generateTlsFiles } from './tls-command.js';
