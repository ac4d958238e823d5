import assert from 'node:assert/strict';
import type { WorkerRegistration } from '@strata/common';
import { planRebalance } from '../src/drain/rebalancer.js';
import type { SegmentInfo } from '../src/storage/catalog.js';

const worker = (workerId: string, segmentBytes: number, extra: Partial<WorkerRegistration> = {}): WorkerRegistration => ({
  endpoint: `127.0.0.1:${workerId.length}`,
  workerId,
  freeBytes: 1e12,
  writable: true,
  updatedAt: '',
  segmentBytes,
  ...extra,
});

const segments = (n: number, bytes: number): SegmentInfo[] =>
  Array.from({ length: n }, (_, i) => ({
    segmentId: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    tableId: 1,
    accountId: 'a',
    schema: 's',
    fileName: `${i}.duckdb`,
    format: 'duckdb',
    minTsUs: 0,
    maxTsUs: 0,
    rowCount: 1,
    byteSize: bytes,
    columns: [],
    createdAtMs: 1000 - i,
  }));

describe('rebalance plan', () => {
  it('a worker above the average gives its oldest segments to the workers below it, up to its share', () => {
    const own = segments(8, 100);
    const plan = planRebalance('a', own, [worker('a', 800), worker('b', 0), worker('c', 400)]);
    // Average 400: a gives 400 bytes, all to b (c is at the average).
    assert.equal(plan.moves.length, 4);
    assert.ok(plan.moves.every((m) => m.to.workerId === 'b'));
    assert.deepEqual(
      plan.moves.map((m) => m.segment.createdAtMs),
      [993, 994, 995, 996],
      'oldest first',
    );
  });

  it('two givers share a receiver instead of both filling it', () => {
    const workers = [worker('a', 600), worker('b', 600), worker('c', 0)];
    const moves = ['a', 'b'].flatMap((self) => planRebalance(self, segments(6, 100), workers).moves);
    // Average 400: c may take 400 in all, 200 from each.
    assert.equal(
      moves.reduce((n, m) => n + m.segment.byteSize, 0),
      400,
    );
  });

  it('nothing to do at or below the average, when draining, or alone', () => {
    assert.deepEqual(planRebalance('b', segments(2, 100), [worker('a', 800), worker('b', 200)]).moves, []);
    assert.deepEqual(planRebalance('a', segments(8, 100), [worker('a', 800)]).moves, []);
    assert.deepEqual(
      planRebalance('a', segments(8, 100), [worker('a', 800), worker('b', 0, { draining: true, writable: false })]).moves,
      [],
    );
  });
});
