import assert from 'node:assert/strict';
import {
  createLogger,
  EmbeddedCoordinator,
  EtcdCoordinator,
  type KeyRankingHistory,
  keyRankingId,
  StrataError,
} from '@strata/common';
import { startEtcd } from '@strata/common/testing';
import { firstForKey, KeyRankingCache, previousOwners } from '../../src/inflow/key-ranking.js';

/** The key-ranking side of decision 0029: who owns a key, who owned it before, and the history a gateway routes by. */
describe('key ranking across sets of workers', () => {
  const w = (n: number) => ({ endpoint: `10.0.0.${n}:7000`, workerId: `worker-${n}` });
  const history = (...sets: ReturnType<typeof w>[][]): KeyRankingHistory => ({
    rankings: sets.map((workers) => ({ id: keyRankingId(workers), workers, recordedAt: '' })),
    revision: 7,
  });
  const keys = Array.from({ length: 300 }, (_, i) => `key-${i}`);

  it('ranks a key the same way whatever the order of the workers', () => {
    const set = [w(1), w(2), w(3)];
    for (const key of keys) {
      assert.equal(firstForKey(key, set), firstForKey(key, [...set].reverse()));
      assert.deepEqual(firstForKey(key, set), firstForKey(key, [w(3), w(1), w(2)]));
    }
    assert.equal(firstForKey('k', []), undefined);
  });

  it('names no previous owner while the workers stay the same', () => {
    const set = [w(1), w(2)];
    for (const key of keys) assert.deepEqual(previousOwners(key, history(set), firstForKey(key, set)!), []);
  });

  it('after a join, the keys that moved to the newcomer name the worker they ranked to before, and only those', () => {
    const before = [w(1), w(2)];
    const after = [w(1), w(2), w(3)];
    let moved = 0;
    for (const key of keys) {
      const owner = firstForKey(key, after)!;
      const previous = previousOwners(key, history(before, after), owner);
      if (owner.workerId === 'worker-3') {
        moved++;
        assert.deepEqual(previous, [firstForKey(key, before)]);
      } else assert.deepEqual(previous, []);
    }
    assert.ok(moved > 50 && moved < 150, `about a third of the keys moved (${moved})`);
  });

  it('while a worker is away, its keys name it as previous owner; back, they name the worker that stood in', () => {
    const all = [w(1), w(2)];
    const without1 = [w(2)];
    for (const key of keys) {
      const usual = firstForKey(key, all)!;
      const away = previousOwners(key, history(all, without1), w(2));
      assert.deepEqual(away, usual.workerId === 'worker-1' ? [w(1)] : []);
      const back = previousOwners(key, history(all, without1), usual);
      assert.deepEqual(back, usual.workerId === 'worker-1' ? [w(2)] : []);
    }
  });

  it('a worker back on a fresh volume at its old endpoint is another worker: its predecessor is a previous owner', () => {
    const old = [w(1), w(2)];
    const fresh = { endpoint: w(1).endpoint, workerId: 'worker-1-new-volume' };
    for (const key of keys) {
      const owner = firstForKey(key, [fresh, w(2)])!;
      const previous = previousOwners(key, history(old), owner);
      assert.deepEqual(previous, owner === fresh ? [w(1)] : []);
    }
  });

  it('records a set before the history it answers with, and reads the history again once it recorded one', async () => {
    const coordinator = new EmbeddedCoordinator(createLogger('test', { level: 'silent' }));
    try {
      const cache = new KeyRankingCache(coordinator);
      const first = await cache.historyFor([w(1), w(2)]);
      assert.deepEqual(
        first.rankings.map((r) => r.id),
        [keyRankingId([w(1), w(2)])],
      );
      const second = await cache.historyFor([w(2)]);
      assert.deepEqual(second.rankings.map((r) => r.id).sort(), [keyRankingId([w(1), w(2)]), keyRankingId([w(2)])].sort());
      assert.ok(second.revision > first.revision);
      // The same set again: from the cache, no new record.
      const again = await cache.historyFor([w(2), w(1)]);
      assert.equal(again.revision, second.revision);
    } finally {
      await coordinator.close();
    }
  });

  it('while etcd cannot be read, routes by the last history that holds the current set, and refuses a new set', async function () {
    this.timeout(60_000);
    const etcd = await startEtcd();
    const coordinator = new EtcdCoordinator(
      { endpoints: [etcd.endpoint], prefix: `/key-ranking-${process.pid}`, leaseTtlSeconds: 3, requestTimeoutMs: 1_000 },
      createLogger('test', { level: 'silent' }),
    );
    try {
      const cache = new KeyRankingCache(coordinator);
      const before = await cache.historyFor([w(1), w(2)]);
      await etcd.stop();
      // Past the refresh interval, so the cache tries etcd again.
      await new Promise((r) => setTimeout(r, 1_200));
      assert.deepEqual(await cache.historyFor([w(1), w(2)]), before);
      await assert.rejects(cache.historyFor([w(2)]), (err: unknown) => err instanceof StrataError && err.kind === 'unavailable');
    } finally {
      await coordinator.close().catch(() => undefined);
      await etcd.stop().catch(() => undefined);
    }
  });
});
