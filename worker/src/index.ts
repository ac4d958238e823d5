export { startWorker } from './worker-role.js';
