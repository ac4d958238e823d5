#!/usr/bin/env node
// Runs every compiled mocha test of every workspace (`<workspace>/dist/test/**/*.test.js`) and
// ends with the plain line `N passed, N failed` that CI reads.
// Usage: node test/run-tests.mjs [--grep PATTERN] [workspace ...]
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Mocha from 'mocha';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const WORKSPACES = ['common', 'master', 'worker', 'gateway', 'deploy', 'test'];

const args = process.argv.slice(2);
let grep;
const only = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--grep') grep = args[++i];
  else only.push(args[i]);
}

function findTests(dir) {
  let out = [];
  let entries;
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries.sort()) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) out = out.concat(findTests(full));
    else if (name.endsWith('.test.js')) out.push(full);
  }
  return out;
}

const mocha = new Mocha({ reporter: 'spec', timeout: 30_000, slow: 2_000 });
if (grep) mocha.grep(grep);
for (const ws of only.length ? only : WORKSPACES) {
  for (const file of findTests(path.join(root, ws, 'dist', 'test'))) mocha.addFile(file);
}

let passed = 0;
let failed = 0;
await mocha.loadFilesAsync();
const runner = mocha.run((failures) => {
  console.log(`${passed} passed, ${failed} failed`);
  // Let servers and child processes that tests forgot to close not keep CI waiting.
  setTimeout(() => process.exit(failures > 0 ? 1 : 0), 200).unref();
  process.exitCode = failures > 0 ? 1 : 0;
});
runner.on('pass', () => passed++);
runner.on('fail', () => failed++);
