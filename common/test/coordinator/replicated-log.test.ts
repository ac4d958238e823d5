import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import { SNAPSHOT_CHUNK_BYTES } from '../../src/coordinator/etcd-replicated-log.js';
import {
  type Candidacy,
  createLogger,
  EmbeddedCoordinator,
  EtcdCoordinator,
  type ReplicatedLog,
  StrataError,
} from '../../src/index.js';
import { type EtcdServer, startEtcd, waitFor } from '../../src/testing/index.js';

const log = createLogger('test', { level: 'silent' });
const noHandlers = { onElected: () => undefined, onDemoted: () => undefined };

/**
 * The replicated log on real etcd (decision 0017): appends are fenced by the leader's election
 * key in the same Txn, a position is written once, snapshots are chunked, checked and replace
 * each other only in order, and publishing one drops the entries it covers.
 */
describe('EtcdReplicatedLog (real etcd)', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;
  let raw: Etcd3;
  let prefix: string;
  const opened: EtcdCoordinator[] = [];

  const open = () => {
    const coord = new EtcdCoordinator({ endpoints: [etcd.endpoint], prefix, leaseTtlSeconds: 2 }, log);
    opened.push(coord);
    return coord;
  };

  async function leader(coord: EtcdCoordinator): Promise<Candidacy> {
    const candidacy = await coord.campaign('database', `endpoint-${opened.length}`, noHandlers);
    await waitFor('elected', () => candidacy.isLeader, { timeoutMs: 10_000 });
    return candidacy;
  }

  before(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: [etcd.endpoint] });
  });

  beforeEach(() => {
    prefix = `/log-test-${Math.random().toString(36).slice(2)}`;
  });

  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
  });

  after(async () => {
    raw.close();
    await etcd.stop();
  });

  it('appends entries in order, reads them after a position, and refuses a position already written', async () => {
    const coord = open();
    const dbLog: ReplicatedLog = coord.replicatedLog('database');
    const candidacy = await leader(coord);
    for (let seq = 1; seq <= 5; seq++) await dbLog.append(candidacy, seq, Buffer.from(`entry ${seq}`));
    const read = await dbLog.read(2, 10);
    assert.deepEqual(
      read.map((e) => [e.seq, e.value.toString()]),
      [
        [3, 'entry 3'],
        [4, 'entry 4'],
        [5, 'entry 5'],
      ],
    );
    assert.deepEqual(
      (await dbLog.read(0, 2)).map((e) => e.seq),
      [1, 2],
    );
    // Writing seq 3 again means the writer's view is stale: refused, and it is demoted.
    await assert.rejects(dbLog.append(candidacy, 3, Buffer.from('again')), (err: unknown) => {
      assert.ok(err instanceof StrataError && err.kind === 'unavailable');
      return true;
    });
    assert.equal(candidacy.isLeader, false);
    assert.equal((await dbLog.read(2, 1))[0]!.value.toString(), 'entry 3');
  });

  it('a deposed leader cannot append: its election key is gone, so the Txn fails and nothing lands', async () => {
    const first = open();
    const old = await leader(first);
    const oldTerm = old.term!;
    const second = open();
    const next = await second.campaign('database', 'second', noHandlers);
    // Depose the first leader the way a lease expiry does: its election key disappears.
    const { kvs } = await raw.getAll().prefix(`${prefix}/election/database/`).sort('Create', 'Ascend').limit(1).exec();
    await raw.leaseClient.leaseRevoke({ ID: kvs[0]!.lease });
    // At once, before its keep-alive notices: it still believes it leads, so only etcd can refuse.
    const dbLog = first.replicatedLog('database');
    const stillBelieves = old.isLeader;
    await assert.rejects(dbLog.append(old, 1, Buffer.from('from the deposed leader')), /leadership of database lost/);
    assert.equal(old.isLeader, false, 'a refused append demotes');
    await waitFor('the second candidate elected', () => next.isLeader, { timeoutMs: 10_000 });
    assert.ok(next.term! > oldTerm);
    assert.deepEqual(await dbLog.read(0, 10), [], 'the deposed leader appended nothing');
    await second.replicatedLog('database').append(next, 1, Buffer.from('from the new leader'));
    assert.deepEqual(
      (await dbLog.read(0, 10)).map((e) => e.value.toString()),
      ['from the new leader'],
    );
    if (!stillBelieves) console.log('      (the deposed leader had noticed before the append: refused locally)');
  });

  it('stores a snapshot in chunks, checks it on reading, replaces it only in order and drops the entries it covers', async () => {
    const coord = open();
    const dbLog = coord.replicatedLog('database');
    const candidacy = await leader(coord);
    assert.equal(await dbLog.snapshot(), undefined);
    const first = await dbLog.publishSnapshot(
      candidacy,
      { logId: 'log-a', seq: 0, data: Buffer.from('empty'), origin: 'empty' },
      undefined,
    );
    assert.equal(first.seq, 0);
    // A second "first" snapshot (another leader creating the log) is refused.
    await assert.rejects(
      dbLog.publishSnapshot(candidacy, { logId: 'log-b', seq: 0, data: Buffer.from('x'), origin: 'empty' }, undefined),
      /leadership of database lost/,
    );
    const again = await leader(coord);
    for (let seq = 1; seq <= 6; seq++) await dbLog.append(again, seq, Buffer.from(`e${seq}`));
    // Bigger than one chunk, with bytes that differ per position.
    const data = Buffer.alloc(SNAPSHOT_CHUNK_BYTES * 2 + 123);
    for (let i = 0; i < data.length; i++) data[i] = (i * 31) % 251;
    const second = await dbLog.publishSnapshot(again, { logId: 'log-a', seq: 4, data, origin: 'empty' }, first);
    assert.equal(second.chunks, 3);
    assert.deepEqual(await dbLog.readSnapshot((await dbLog.snapshot())!), data);
    assert.deepEqual(
      (await dbLog.read(0, 10)).map((e) => e.seq),
      [5, 6],
      'entries up to the snapshot are dropped',
    );
    const chunkKeys = await raw.getAll().prefix(`${prefix}/log/database/snapshots/`).keys();
    assert.equal(chunkKeys.length, 3, `only the current snapshot's chunks are kept: ${chunkKeys.join(', ')}`);
    // Replacing a snapshot that is no longer current is refused.
    await assert.rejects(
      dbLog.publishSnapshot(again, { logId: 'log-a', seq: 5, data: Buffer.from('stale'), origin: 'empty' }, first),
      /leadership of database lost/,
    );
    // A chunk changed behind the record's back is detected.
    await raw.put(chunkKeys[1]!).value(Buffer.from('tampered'));
    await assert.rejects(dbLog.readSnapshot((await dbLog.snapshot())!), /does not match its hash/);
  });

  it('calls watchers when entries or the snapshot change', async () => {
    const coord = open();
    const dbLog = coord.replicatedLog('database');
    const candidacy = await leader(coord);
    let calls = 0;
    const stop = dbLog.watch(() => calls++);
    await waitFor('the first call', () => calls >= 1, { timeoutMs: 5_000 });
    const before = calls;
    await dbLog.append(candidacy, 1, Buffer.from('x'));
    await waitFor('a call after the append', () => calls > before, { timeoutMs: 5_000 });
    stop();
  });

  it('has no replicated log on the embedded coordinator (one process: nothing to replicate to)', async () => {
    const embedded = new EmbeddedCoordinator(log);
    assert.equal(embedded.replicatedLog('database'), undefined);
    await embedded.close();
  });
});
