import assert from 'node:assert/strict';
import { coverageOf, type Placement, type WorkerRegistration } from '../../src/index.js';

const placement = (workerId: string, endpoint: string): Placement => ({
  accountId: 'a',
  workerId,
  endpoint,
  since: '2026-01-01T00:00:00Z',
});
const worker = (endpoint: string, workerId?: string): WorkerRegistration => ({
  endpoint,
  workerId,
  freeBytes: 1,
  writable: true,
  updatedAt: '2026-01-01T00:00:00Z',
});

describe('coverageOf (which holders a query can reach)', () => {
  it('asks every registered worker and misses the holders that are not registered', () => {
    const workers = [worker('h1:1', 'w1'), worker('h3:1', 'w3')];
    const c = coverageOf([placement('w1', 'h1:1'), placement('w2', 'h2:1')], workers);
    assert.deepEqual(c.reachable, workers);
    assert.deepEqual(
      c.missing.map((p) => p.workerId),
      ['w2'],
    );
  });

  it('matches holders by worker id, not endpoint: a fresh volume on the same endpoint does not cover the old data', () => {
    const c = coverageOf([placement('old', 'h1:1')], [worker('h1:1', 'new')]);
    assert.deepEqual(
      c.missing.map((p) => p.workerId),
      ['old'],
    );
  });

  it('a worker that moved to another endpoint with its data still covers its placements', () => {
    assert.deepEqual(coverageOf([placement('w1', 'h1:1')], [worker('h9:1', 'w1')]).missing, []);
  });

  it('an account without placements misses nothing, with or without workers', () => {
    assert.deepEqual(coverageOf([], []).missing, []);
    assert.deepEqual(coverageOf([], [worker('h1:1')]).missing, []);
  });
});
