// Test helpers for every workspace's tests: `import { … } from '@strata/common/testing'`.
// Not part of the runtime API; nothing under src/ outside this folder imports it.

export * from './etcd-server.js';
export * from './memory-duckdb.js';
export * from './test-identity.js';
export * from './wait-for.js';
