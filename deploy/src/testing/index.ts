export * from './node-process.js';
export * from './test-node.js';
