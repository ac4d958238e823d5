import assert from 'node:assert/strict';
import { StrataError } from '@strata/common';
import { describe, it } from 'mocha';
import { ExecutorLimiter, Permits, threadsFor } from '../../src/query/executor-limits.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('query executor limits', () => {
  it('admits up to the limit and queues the rest in order', async () => {
    const p = new Permits(2);
    const signal = new AbortController().signal;
    const r1 = await p.acquire(signal);
    const r2 = await p.acquire(signal);
    const order: number[] = [];
    const w3 = p.acquire(signal).then((r) => {
      order.push(3);
      return r;
    });
    const w4 = p.acquire(signal).then((r) => {
      order.push(4);
      return r;
    });
    await tick();
    assert.equal(p.used, 2);
    assert.equal(p.waiting, 2);
    r1();
    const r3 = await w3;
    assert.deepEqual(order, [3]);
    r2();
    const r4 = await w4;
    assert.deepEqual(order, [3, 4]);
    r3();
    r4();
    assert.equal(p.used, 0);
  });

  it('refuses beyond the bounded queue with resource_exhausted', async () => {
    const p = new Permits(1, () => 1);
    const signal = new AbortController().signal;
    const held = await p.acquire(signal);
    const queued = p.acquire(signal);
    await assert.rejects(p.acquire(signal), (e: unknown) => e instanceof StrataError && e.kind === 'resource_exhausted');
    held();
    (await queued)();
  });

  it('an aborted waiter leaves the queue', async () => {
    const p = new Permits(1);
    const held = await p.acquire(new AbortController().signal);
    const c = new AbortController();
    const waiting = p.acquire(c.signal);
    c.abort(new StrataError('timeout', 'deadline'));
    await assert.rejects(waiting, (e: unknown) => e instanceof StrataError && e.kind === 'timeout');
    assert.equal(p.waiting, 0);
    held();
    assert.equal(p.used, 0);
  });

  it('a raised limit admits waiters at once; a lowered one lets holders finish', async () => {
    const p = new Permits(1);
    const signal = new AbortController().signal;
    const a = await p.acquire(signal);
    const b = p.acquire(signal);
    p.setLimit(2);
    const rb = await b;
    p.setLimit(1);
    a();
    const c = p.acquire(signal);
    await tick();
    assert.equal(p.waiting, 1, 'still over the lowered limit');
    rb();
    (await c)();
  });

  it('weighted permits are capped at the limit', async () => {
    const p = new Permits(3);
    const r = await p.acquire(new AbortController().signal, 10);
    assert.equal(p.used, 3);
    r();
    assert.equal(p.used, 0);
  });

  it('maps Rowgroup.MaxConcurrentRead onto DuckDB threads, capped by cores', () => {
    assert.equal(threadsFor(100, 2), 2);
    assert.equal(threadsFor(1, 2), 1);
    assert.equal(threadsFor(0, 8), 1);
    assert.equal(threadsFor(4, 8), 4);
  });

  it('applies new limits live', async () => {
    const limiter = new ExecutorLimiter({ queryMaxConcurrent: 1, fileMaxConcurrentRead: 10, rowgroupMaxConcurrentRead: 1 });
    const signal = new AbortController().signal;
    const first = await limiter.admit(signal);
    const state: { second?: () => void } = {};
    const waiting = limiter.admit(signal).then((r) => {
      state.second = r;
    });
    await tick();
    assert.equal(state.second, undefined);
    limiter.apply({ queryMaxConcurrent: 2, fileMaxConcurrentRead: 10, rowgroupMaxConcurrentRead: 1 });
    await waiting;
    assert.ok(state.second);
    first();
    (state.second as unknown as () => void)();
    assert.equal(limiter.queries.used, 0);
    assert.equal(limiter.fileReads.used, 0);
  });
});
