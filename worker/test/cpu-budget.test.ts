import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'mocha';
import { workerCores } from '../src/cpu-budget.js';
import { ExecutorLimiter } from '../src/query/executor-limits.js';

describe('worker CPU budget', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-cpu-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cpuMax = (text: string) => {
    const file = path.join(dir, `cpu.max-${Math.random()}`);
    writeFileSync(file, text);
    return file;
  };
  const host = availableParallelism();

  it('uses the configured cores, within 1 and the host cores', () => {
    assert.equal(workerCores(1, cpuMax('max 100000')), 1);
    assert.equal(workerCores(10_000, cpuMax('max 100000')), host);
  });

  it('follows a cgroup v2 CPU limit (rounded up), else the host cores', () => {
    assert.equal(workerCores(undefined, cpuMax('50000 100000\n')), 1);
    assert.equal(workerCores(undefined, cpuMax('100001 100000')), Math.min(2, host));
    assert.equal(workerCores(undefined, cpuMax('max 100000')), host);
    assert.equal(workerCores(undefined, path.join(dir, 'absent')), host);
    assert.equal(workerCores(undefined, cpuMax('garbage')), host);
  });

  it('caps the DuckDB threads of queries at the budget', () => {
    const limits = { queryMaxConcurrent: 4, fileMaxConcurrentRead: 100, rowgroupMaxConcurrentRead: 100 };
    assert.equal(new ExecutorLimiter(limits, 1).threads(), 1);
    assert.equal(new ExecutorLimiter({ ...limits, rowgroupMaxConcurrentRead: 1 }, host).threads(), 1);
    assert.equal(new ExecutorLimiter(limits, host).threads(), host);
  });
});
