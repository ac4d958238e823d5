import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { StrataError } from '@strata/common';
import { ACCOUNT, entries, input, openEngine, part, scanRows, storageTestContext } from './helpers/storage-fixtures.js';

/**
 * FenceKey on a worker that may have stored a keyed batch before its key ranked to another worker
 * (docs/decisions/0029-keyed-batches-across-owners.md): it tells whether the key is stored, and a
 * key it fenced is refused to appends routed by an older key-ranking history.
 */
describe('idempotency key fences', function () {
  this.timeout(60_000);
  const t = storageTestContext();
  const OTHER = '00000000-0000-0000-0000-0000000000f3';
  const fence = (key: string, keyViewRevision: number, contentHash = 'h', accountId = ACCOUNT) =>
    t.engine!.fenceKey({ accountId, idempotencyKey: key, contentHash, keyViewRevision });
  const keyed = (key: string, keyViewRevision: number, n = 3) =>
    input([part('Fenced', entries(n))], { idempotencyKey: key, contentHash: 'h', keyViewRevision });
  const count = async () =>
    Number((await scanRows(t.engine!, 'Fenced', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`))[0]?.n ?? 0);

  it('answers whether a key is stored, and refuses a different body under a stored key', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(keyed('stored', 0));
    assert.deepEqual(await fence('stored', 5), { stored: true });
    await assert.rejects(
      fence('stored', 5, 'another body'),
      (err: unknown) => err instanceof StrataError && err.kind === 'conflict',
    );
    // The stored key is untouched: a retry is still a duplicate.
    assert.deepEqual(await t.engine.append(keyed('stored', 0)), { rowsStored: 0, duplicate: true });
  });

  it('has nothing to say for an account it holds nothing of, and makes no directory for it', async () => {
    t.engine = await openEngine(t.dir);
    assert.deepEqual(await fence('k', 5, 'h', OTHER), { stored: false });
    assert.equal(existsSync(path.join(t.dir, 'accounts', OTHER)), false);
  });

  it('refuses a fenced key to an append routed by an older history, and stores it for one routed by the fencing history or a newer one', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('Fenced', entries(1))]));
    assert.deepEqual(await fence('moved', 10), { stored: false });
    await assert.rejects(
      t.engine.append(keyed('moved', 9)),
      (err: unknown) => err instanceof StrataError && err.kind === 'unavailable' && /moved to another worker/.test(err.message),
    );
    // A lower fence does not lower it.
    assert.deepEqual(await fence('moved', 4), { stored: false });
    await assert.rejects(
      t.engine.append(keyed('moved', 9)),
      (err: unknown) => err instanceof StrataError && err.kind === 'unavailable',
    );
    assert.equal(await count(), 1);
    // The fence holds across a restart.
    await t.engine.close();
    t.engine = await openEngine(t.dir);
    await assert.rejects(
      t.engine.append(keyed('moved', 9)),
      (err: unknown) => err instanceof StrataError && err.kind === 'unavailable',
    );
    // Routed by a history that knew of the fence (its gateway asked the other owners first): stored once.
    assert.deepEqual(await t.engine.append(keyed('moved', 10)), { rowsStored: 3, duplicate: false });
    assert.deepEqual(await t.engine.append(keyed('moved', 10)), { rowsStored: 0, duplicate: true });
    assert.deepEqual(await fence('moved', 11), { stored: true });
    assert.equal(await count(), 4);
  });

  it('an append under way when the key is fenced is either seen stored by the fence or refused, never both stored and unseen', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('Fenced', entries(1))]));
    for (let i = 0; i < 20; i++) {
      const key = `race-${i}`;
      const appended: Promise<boolean> = t.engine.append(keyed(key, 1, 1)).then(
        () => true,
        (err: unknown) => {
          if (err instanceof StrataError && err.kind === 'unavailable') return false;
          throw err;
        },
      );
      const fenced = fence(key, 2);
      const [stored, answer] = await Promise.all([appended, fenced]);
      assert.equal(answer.stored, stored, `key ${key}: stored ${stored}, fence saw ${answer.stored}`);
    }
  });
});
