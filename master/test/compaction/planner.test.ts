import assert from 'node:assert/strict';
import { type PlannerSegment, planCompaction } from '../../src/compaction/planner.js';

const A = '00000000-0000-0000-0000-00000000000a';
const B = '00000000-0000-0000-0000-00000000000b';

function seg(id: string, byteSize: number, minTimestampMs: number, extra: Partial<PlannerSegment> = {}): PlannerSegment {
  return { segmentId: id, accountId: A, schema: 'Logs', byteSize, minTimestampMs, createdAtMs: minTimestampMs, ...extra };
}

describe('compaction planner', () => {
  it('takes small segments oldest first and stops adding once the total reaches MaxFileSize', () => {
    const segments = [seg('s3', 40, 3), seg('s1', 40, 1), seg('s2', 40, 2), seg('s4', 40, 4), seg('s5', 40, 5)];
    const jobs = planCompaction(segments, { maxFileSize: () => 100, minSegmentsPerPartialJob: 2 });
    // 40+40 = 80 < 100, +40 = 120 ≥ 100: stop. The rest (s4, s5) makes a second job.
    assert.deepEqual(jobs, [
      { accountId: A, schema: 'Logs', segmentIds: ['s1', 's2', 's3'], totalBytes: 120 },
      { accountId: A, schema: 'Logs', segmentIds: ['s4', 's5'], totalBytes: 80 },
    ]);
  });

  it('leaves segments of MaxFileSize or more alone', () => {
    const jobs = planCompaction([seg('big', 100, 1), seg('s1', 10, 2), seg('s2', 10, 3)], {
      maxFileSize: () => 100,
      minSegmentsPerPartialJob: 2,
    });
    assert.deepEqual(
      jobs.map((j) => j.segmentIds),
      [['s1', 's2']],
    );
  });

  it('plans an unfilled job only with enough segments', () => {
    const few = [seg('a', 1, 1), seg('b', 1, 2), seg('c', 1, 3)];
    assert.deepEqual(planCompaction(few, { maxFileSize: () => 100 }), []);
    assert.equal(planCompaction(few, { maxFileSize: () => 100, minSegmentsPerPartialJob: 3 }).length, 1);
    assert.deepEqual(planCompaction([seg('only', 1, 1)], { maxFileSize: () => 100, minSegmentsPerPartialJob: 1 }), []);
  });

  it('plans per account and schema with each account its own MaxFileSize', () => {
    const segments = [
      seg('a1', 30, 1),
      seg('a2', 30, 2),
      seg('m1', 30, 1, { schema: 'Metrics' }),
      seg('m2', 30, 2, { schema: 'Metrics' }),
      seg('b1', 30, 1, { accountId: B }),
      seg('b2', 30, 2, { accountId: B }),
    ];
    const jobs = planCompaction(segments, { maxFileSize: (acc) => (acc === A ? 50 : 1000), minSegmentsPerPartialJob: 8 });
    assert.deepEqual(
      jobs.map((j) => [j.accountId === A ? 'A' : 'B', j.schema, j.segmentIds]),
      [
        ['A', 'Logs', ['a1', 'a2']],
        ['A', 'Metrics', ['m1', 'm2']],
      ],
    );
  });

  it('breaks time ties by creation time, then id, and ignores accounts without a positive size', () => {
    const jobs = planCompaction(
      [seg('z', 60, 1, { createdAtMs: 5 }), seg('y', 60, 1, { createdAtMs: 2 }), seg('x', 60, 1, { createdAtMs: 2 })],
      {
        maxFileSize: () => 100,
      },
    );
    assert.deepEqual(
      jobs.map((j) => j.segmentIds),
      [['x', 'y']],
    );
    assert.deepEqual(planCompaction([seg('a', 1, 1), seg('b', 1, 2)], { maxFileSize: () => 0, minSegmentsPerPartialJob: 2 }), []);
  });
});
