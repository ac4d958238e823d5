import assert from 'node:assert/strict';
import { StrataError } from '@strata/common';
import { FreeSpaceGuard, type FreeSpaceState, statFreeBytes } from '../src/storage/free-space-guard.js';
import { testLog } from './helpers/storage-fixtures.js';

describe('free-space guard', () => {
  it('refuses writes below the minimum, counts bytes written between measurements, and resumes by itself', async () => {
    let free = 1_000;
    const changes: FreeSpaceState[] = [];
    const guard = new FreeSpaceGuard({
      path: '/',
      minimumFreeBytes: 500,
      statFreeBytes: async () => free,
      log: testLog(),
      intervalMs: 10,
    });
    guard.onChange((s) => changes.push(s));
    await guard.start();
    try {
      assert.equal(guard.writable, true);
      guard.assertWritable();
      guard.noteWritten(600); // 400 left by estimate
      assert.equal(guard.writable, false);
      assert.throws(
        () => guard.assertWritable(),
        (err: unknown) =>
          err instanceof StrataError &&
          err.kind === 'insufficient_storage' &&
          err.retryAfterSeconds === 30 &&
          /below its minimum of 500 bytes/.test(err.message),
      );
      free = 100;
      await guard.check();
      assert.deepEqual(guard.state, { freeBytes: 100, writable: false });
      free = 10_000;
      // The periodic measurement brings it back without any call.
      const deadline = Date.now() + 5_000;
      while (!guard.writable && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      assert.equal(guard.writable, true);
      assert.ok(changes.some((c) => !c.writable));
      assert.ok(changes.at(-1)!.writable);
    } finally {
      guard.stop();
    }
  });

  it('measures the real file system', async () => {
    const bytes = await statFreeBytes(process.cwd());
    assert.ok(Number.isSafeInteger(bytes) && bytes > 0);
  });
});
