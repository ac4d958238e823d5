import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Candidacy, createLogger, EtcdCoordinator, type ReplicatedLog } from '@strata/common';
import { type EtcdServer, startEtcd, waitFor } from '@strata/common/testing';
import { DirectoryRepository } from '../../src/directory/directory-repository.js';
import { commentRows } from '../../src/incidents/incident-repository.js';
import { IncidentService } from '../../src/incidents/incident-service.js';
import { ALL_MIGRATIONS } from '../../src/store/all-migrations.js';
import { runMigrations } from '../../src/store/migrations.js';
import { RelationalStore } from '../../src/store/relational-store.js';
import { ensurePositionTable, writePosition } from '../../src/store/replication/replica-position.js';
import { openSynced } from '../../src/store/replication/replica-sync.js';
import { StandbyReplica } from '../../src/store/replication/standby-replica.js';
import { openReplicatedStore, type StoreReplication, snapshotIfDue } from '../../src/store/replication/store-replication.js';

const log = createLogger('test', { level: 'silent' });
const ACCOUNT = '11111111-1111-4111-8111-111111111111';
const ALICE = 'aaaaaaaa-0000-4000-8000-000000000001';

/** Every table of a store with its rows, in a stable order: two equal dumps are equal stores. */
async function dump(store: RelationalStore): Promise<Record<string, unknown[]>> {
  const tables = await store.all<{ table_name: string }>(
    "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND schema_name = 'main' ORDER BY table_name",
  );
  const out: Record<string, unknown[]> = {};
  for (const { table_name } of tables) out[table_name] = await store.all(`SELECT * FROM "${table_name}" ORDER BY ALL`);
  return out;
}

/**
 * The leader's side and the standby's side of the replicated relational store (decision 0017) on
 * real etcd and real DuckDB files: what the master's services write on the leader is, table by
 * table and row by row, what a copy rebuilt from the log holds — also across rolled-back
 * transactions, snapshots, compaction and a copy started on an empty directory.
 */
describe('replicated relational store (real etcd, real DuckDB files)', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;
  let coordinator: EtcdCoordinator;
  let candidacy: Candidacy;
  let dbLog: ReplicatedLog;
  let root: string;
  const stores: RelationalStore[] = [];

  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    await etcd.stop();
  });

  beforeEach(async () => {
    root = mkdtempSync(path.join(os.tmpdir(), 'strata-replicated-'));
    coordinator = new EtcdCoordinator(
      { endpoints: [etcd.endpoint], prefix: `/replicated-${randomUUID()}`, leaseTtlSeconds: 3 },
      log,
    );
    candidacy = await coordinator.campaign('database', 'leader', { onElected: () => undefined, onDemoted: () => undefined });
    await waitFor('elected', () => candidacy.isLeader, { timeoutMs: 10_000 });
    dbLog = coordinator.replicatedLog('database');
  });

  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    await coordinator.close();
    rmSync(root, { recursive: true, force: true });
  });

  async function openLeader(snapshotEveryChanges = 1_000): Promise<{ store: RelationalStore; replication: StoreReplication }> {
    const opened = await openReplicatedStore({
      dir: path.join(root, 'leader'),
      log: dbLog,
      candidacy,
      term: candidacy.term!,
      snapshotEveryChanges,
      logger: log,
    });
    stores.push(opened.store);
    await runMigrations(opened.store, ALL_MIGRATIONS);
    return opened;
  }

  /** Writes through the master's own services: directory, incidents with comments and history. */
  async function workload(store: RelationalStore, incidents: number): Promise<void> {
    const directory = new DirectoryRepository(store);
    const service = new IncidentService(store);
    await directory.upsertAccount({ accountId: ACCOUNT, accountName: 'acme', createdAt: '' });
    await directory.upsertUser(
      { userId: ALICE, userName: `alice`, firstName: 'A', lastName: 'L', email: 'a@example.test', createdAt: '' },
      'a-password-1',
    );
    await directory.setPermissions(ALICE, ACCOUNT, ['Service.Incident.Editor']);
    for (let i = 0; i < incidents; i++) {
      const incidentId = randomUUID();
      const input = { title: `incident ${i}`, ownerType: 'USER', ownerId: ALICE };
      const actor = { type: 'USER' as const, id: ALICE };
      await service.putIncident({ accountId: ACCOUNT, incidentId, input, actor, creatorUserId: ALICE });
      // A transaction that fails after writing: rolled back on the leader, absent from the log.
      await assert.rejects(
        store.transaction(async (tx) => {
          // The real insert: its record number must not be consumed by a transaction that fails.
          await commentRows.insert(tx, {
            accountId: ACCOUNT,
            incidentId,
            commentId: randomUUID(),
            authorUserId: ALICE,
            body: 'lost',
            createdAt: new Date().toISOString(),
          });
          throw new Error('abandoned');
        }),
        /abandoned/,
      );
      await service.addComment(ACCOUNT, incidentId, ALICE, `first comment on ${i}`);
      await service.putIncident({
        accountId: ACCOUNT,
        incidentId,
        input: { ...input, state: 'IN_PROGRESS' },
        actor,
        creatorUserId: ALICE,
      });
      await service.addComment(ACCOUNT, incidentId, ALICE, `second comment on ${i}`);
    }
  }

  it('a copy built from the log equals the leader’s store, row for row (rolled-back transactions included)', async () => {
    const { store, replication } = await openLeader();
    await workload(store, 8);
    assert.ok(replication.journal.seq > 30, `entries logged: ${replication.journal.seq}`);
    const copy = await openSynced(path.join(root, 'standby'), dbLog, log);
    stores.push(copy.store);
    assert.equal(copy.position.seq, replication.journal.seq);
    assert.deepEqual(await dump(copy.store), await dump(store));
  });

  it('after a snapshot the log drops what it covers, and a copy on an empty directory starts from snapshot + log', async () => {
    const { store, replication } = await openLeader(10);
    await workload(store, 4);
    assert.ok(await snapshotIfDue(store, replication, log), 'a snapshot was due');
    const snapshotSeq = replication.snapshot.seq;
    assert.equal(snapshotSeq, replication.journal.seq);
    assert.deepEqual(await dbLog.read(0, 10), [], 'entries up to the snapshot are gone');
    assert.equal(await snapshotIfDue(store, replication, log), false, 'nothing new: no snapshot');
    const service = new IncidentService(store);
    await service.putIncident({
      accountId: ACCOUNT,
      incidentId: randomUUID(),
      input: { title: 'after the snapshot', ownerType: 'USER', ownerId: ALICE },
      actor: { type: 'USER', id: ALICE },
      creatorUserId: ALICE,
    });
    const copy = await openSynced(path.join(root, 'empty'), dbLog, log);
    stores.push(copy.store);
    assert.equal(copy.position.seq, snapshotSeq + 1);
    assert.deepEqual(await dump(copy.store), await dump(store));
  });

  it('a snapshot taken while writes go on stands exactly at the entry it names', async () => {
    const { store, replication } = await openLeader(1);
    await workload(store, 1);
    const service = new IncidentService(store);
    let writing = true;
    const writes = (async () => {
      for (let i = 0; i < 500 && writing; i++) {
        await service.putIncident({
          accountId: ACCOUNT,
          incidentId: randomUUID(),
          input: { title: `during the snapshot ${i}`, ownerType: 'USER', ownerId: ALICE },
          actor: { type: 'USER', id: ALICE },
          creatorUserId: ALICE,
        });
      }
    })();
    try {
      await waitFor('writes going on', () => replication.journal.seq > replication.snapshot.seq + 3, { timeoutMs: 10_000 });
      assert.ok(await snapshotIfDue(store, replication, log));
    } finally {
      writing = false;
      await writes;
    }
    // Restored from that snapshot and the entries after it: the leader's store exactly.
    const copy = await openSynced(path.join(root, 'empty'), dbLog, log);
    stores.push(copy.store);
    assert.equal(copy.position.seq, replication.journal.seq);
    assert.deepEqual(await dump(copy.store), await dump(store));
  });

  it('a standby copy follows the log as it grows, and keeps a file of another log aside when it restores', async () => {
    const { store, replication } = await openLeader();
    const standbyDir = path.join(root, 'standby');
    // A file that followed some other log (an earlier cluster): replaced, and kept aside.
    const foreign = await RelationalStore.open(standbyDir, { migrations: ALL_MIGRATIONS });
    await ensurePositionTable(foreign);
    await foreign.transaction((tx) => writePosition(tx, { logId: 'another-log', seq: 5 }));
    await foreign.close();
    const replica = new StandbyReplica(standbyDir, dbLog, log);
    try {
      await workload(store, 3);
      const head = replication.journal.seq;
      await waitFor('the standby at the end of the log', () => replica.describe() === `following the log at entry ${head}`, {
        timeoutMs: 20_000,
        intervalMs: 50,
      });
    } finally {
      await replica.stop();
    }
    assert.ok(existsSync(path.join(standbyDir, 'strata.duckdb.replaced')));
    const copy = await RelationalStore.openFile(standbyDir);
    stores.push(copy);
    assert.deepEqual(await dump(copy), await dump(store));
  });

  it('an upgraded store is the baseline of a new log, but is never replaced by a log created from an empty copy', async () => {
    // A store from before the log, with data: the first leader on it creates the log from it.
    const leaderDir = path.join(root, 'leader');
    const before = await RelationalStore.open(leaderDir, { migrations: ALL_MIGRATIONS });
    await workload(before, 1);
    const expected = await dump(before);
    await before.close();
    const { store, replication } = await openLeader();
    assert.equal(replication.snapshot.origin, 'existing');
    const { strata_replica_position: _a, ...leaderTables } = await dump(store);
    const { strata_replica_position: _b, ...beforeTables } = expected;
    assert.deepEqual(leaderTables, beforeTables);

    // Another cluster's log created by an instance that started empty...
    const other = new EtcdCoordinator(
      { endpoints: [etcd.endpoint], prefix: `/replicated-${randomUUID()}`, leaseTtlSeconds: 3 },
      log,
    );
    try {
      const otherCandidacy = await other.campaign('database', 'empty', {
        onElected: () => undefined,
        onDemoted: () => undefined,
      });
      await waitFor('elected', () => otherCandidacy.isLeader, { timeoutMs: 10_000 });
      const otherLog = other.replicatedLog('database');
      const emptyLeader = await openReplicatedStore({
        dir: path.join(root, 'empty'),
        log: otherLog,
        candidacy: otherCandidacy,
        term: otherCandidacy.term!,
        snapshotEveryChanges: 1000,
        logger: log,
      });
      stores.push(emptyLeader.store);
      assert.equal(emptyLeader.replication.snapshot.origin, 'empty');
      // ...meets a store from before the log: refused, and the file is left alone.
      const old = path.join(root, 'pre-log');
      const preLog = await RelationalStore.open(old, { migrations: ALL_MIGRATIONS });
      await workload(preLog, 1);
      const preLogTables = await dump(preLog);
      await preLog.close();
      await assert.rejects(openSynced(old, otherLog, log), /refusing to replace it/);
      const reopened = await RelationalStore.openFile(old);
      stores.push(reopened);
      const { strata_replica_position: _c, ...after } = await dump(reopened);
      assert.deepEqual(after, preLogTables);
      // A file that only ran the migrations (an instance started together with the first leader on
      // an empty volume) holds nothing to protect: it follows that log instead of being refused.
      const migratedOnly = path.join(root, 'migrated-only');
      await (await RelationalStore.open(migratedOnly, { migrations: ALL_MIGRATIONS })).close();
      const follower = await openSynced(migratedOnly, otherLog, log);
      stores.push(follower.store);
      assert.equal(follower.position.logId, follower.snapshot?.logId);
    } finally {
      await other.close();
    }
  });

  it('refuses a write outside a transaction on the leader (it would bypass the log)', async () => {
    const { store } = await openLeader();
    await assert.rejects(
      store.read((x) => x.run("INSERT INTO accounts VALUES ('44444444-4444-4444-8444-444444444444', 'sneaky', 'now')")),
      /read-only mode/,
    );
    assert.equal((await store.all("SELECT * FROM accounts WHERE account_name = 'sneaky'")).length, 0);
  });

  it('a deposed leader’s write is refused before it commits and is neither in the log nor in its store', async () => {
    const { store, replication } = await openLeader();
    await workload(store, 1);
    const seq = replication.journal.seq;
    await candidacy.resign();
    await assert.rejects(
      store.transaction((tx) => tx.run("INSERT INTO accounts VALUES ('33333333-3333-4333-8333-333333333333', 'late', 'now')")),
      /leadership of database lost/,
    );
    assert.equal((await store.all("SELECT * FROM accounts WHERE account_name = 'late'")).length, 0);
    assert.equal((await dbLog.read(seq, 10)).length, 0);
    assert.equal(replication.journal.seq, seq);
  });
});
