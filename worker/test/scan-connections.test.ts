import assert from 'node:assert/strict';
import type { ScanHandle } from '../src/storage/storage-engine.js';
import { ACCOUNT, entries, input, openEngine, part, scanRows, storageTestContext } from './helpers/storage-fixtures.js';

/**
 * Query snapshots on connections kept between queries (scan-connections.ts, decision 0032): a kept
 * connection is reused, and what it held before never hides a row acknowledged since — a row
 * whose append returned is counted by every scan opened after, also on a connection that held a
 * snapshot from before the row.
 */
describe('scan connections kept between queries', function () {
  this.timeout(60_000);
  const t = storageTestContext();

  const count = async () => {
    const [row] = await scanRows(t.engine!, 'R', (r) => `SELECT count(*)::INTEGER AS n FROM ${r}`);
    return row?.n;
  };

  it('reuses a released snapshot’s connection; scans open at once get their own', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('R', entries(3))]));
    const first = await t.engine.openScan(ACCOUNT, 'R');
    assert.ok(first);
    const connection = first.connection;
    await first.release();
    const second = await t.engine.openScan(ACCOUNT, 'R');
    const third = await t.engine.openScan(ACCOUNT, 'R');
    try {
      assert.equal(second!.connection, connection, 'the kept connection serves the next scan');
      assert.notEqual(third!.connection, connection, 'a scan open at the same time has its own');
    } finally {
      await second!.release();
      await third!.release();
    }
  });

  it('a row acknowledged before a scan opened is counted, also on a connection that held an older snapshot', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('R', entries(1))]));
    let acknowledged = 1;
    for (let i = 0; i < 20; i++) {
      // A snapshot from before the next row, held while it is appended and acknowledged.
      const held: ScanHandle | undefined = await t.engine.openScan(ACCOUNT, 'R');
      await t.engine.append(input([part('R', entries(1, Date.UTC(2024, 0, 1), acknowledged))]));
      acknowledged++;
      // Opened while `held` is open: another connection.
      assert.equal(await count(), acknowledged);
      const heldConnection: ScanHandle['connection'] = held!.connection;
      const [old] = (await (
        await heldConnection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${held!.relation}`)
      ).getRowObjectsJS()) as {
        n: number;
      }[];
      assert.equal(old?.n, acknowledged - 1, 'the held snapshot does not see the newer row');
      await held!.release();
      // The held snapshot's connection is kept and reused now: its new snapshot sees the row.
      const next: ScanHandle | undefined = await t.engine.openScan(ACCOUNT, 'R');
      try {
        assert.equal(next!.connection, heldConnection);
        const [row] = (await (
          await next!.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${next!.relation}`)
        ).getRowObjectsJS()) as {
          n: number;
        }[];
        assert.equal(row?.n, acknowledged);
      } finally {
        await next!.release();
      }
      if (i % 5 === 4) await t.engine.sealAll();
    }
    assert.equal(await count(), acknowledged);
  });

  it('a connection whose snapshot could not be ended is closed, not kept', async () => {
    t.engine = await openEngine(t.dir);
    await t.engine.append(input([part('R', entries(3))]));
    const scan = await t.engine.openScan(ACCOUNT, 'R');
    const connection = scan!.connection;
    // Ended behind the scan's back: its own ROLLBACK then fails.
    await connection.run('ROLLBACK');
    await scan!.release();
    const next = await t.engine.openScan(ACCOUNT, 'R');
    try {
      assert.notEqual(next!.connection, connection);
    } finally {
      await next!.release();
    }
    assert.equal(await count(), 3);
  });
});
