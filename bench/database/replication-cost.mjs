// What the database log costs a write (decision 0017): the same incident writes through the
// master's IncidentService on one local etcd, (a) fenced only — one etcd Txn with the leader's
// fencing check before each COMMIT, the store of the previous release —, (b) replicated — the
// Txn also appends the transaction's statements to the log —, plus what a standby's catch-up
// (applying entries) and a snapshot cost on the resulting store.
//
//   npm run build && node bench/database/replication-cost.mjs [--writes 2000]
//
// Needs /usr/bin/etcd (Debian's etcd-server). Files go to .bench-data/dbrep-<time>/ and are removed.
import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: args } = parseArgs({ options: { writes: { type: 'string', default: '2000' } } });
const WRITES = Number(args.writes);
const work = path.join(root, '.bench-data', `dbrep-${Date.now()}`);
mkdirSync(work, { recursive: true });

const common = await import(path.join(root, 'common', 'dist', 'src', 'index.js'));
const testing = await import(path.join(root, 'common', 'dist', 'src', 'testing', 'index.js'));
const m = (p) => import(path.join(root, 'master', 'dist', 'src', p));
const { RelationalStore } = await m('store/relational-store.js');
const { ALL_MIGRATIONS } = await m('store/all-migrations.js');
const { runMigrations } = await m('store/migrations.js');
const { IncidentService } = await m('incidents/incident-service.js');
const { DirectoryRepository } = await m('directory/directory-repository.js');
const { openReplicatedStore, snapshotIfDue } = await m('store/replication/store-replication.js');
const { openSynced } = await m('store/replication/replica-sync.js');

const ACCOUNT = '11111111-1111-4111-8111-111111111111';
const ALICE = 'aaaaaaaa-0000-4000-8000-000000000001';
const log = common.createLogger('bench', { level: 'silent' });
const etcd = await testing.startEtcd();

async function leader(prefix) {
  const coordinator = new common.EtcdCoordinator({ endpoints: [etcd.endpoint], prefix, leaseTtlSeconds: 10 }, log);
  const candidacy = await coordinator.campaign('database', 'bench', { onElected() {}, onDemoted() {} });
  await testing.waitFor('elected', () => candidacy.isLeader, { timeoutMs: 10_000 });
  return { coordinator, candidacy };
}

async function writes(store) {
  const directory = new DirectoryRepository(store);
  await directory.upsertAccount({ accountId: ACCOUNT, accountName: 'acme', createdAt: '' });
  await directory.upsertUser(
    { userId: ALICE, userName: 'alice', firstName: 'A', lastName: 'L', email: 'a@example.test', createdAt: '' },
    'a-password-1',
  );
  await directory.setPermissions(ALICE, ACCOUNT, ['Service.Incident.Editor']);
  const service = new IncidentService(store);
  const latencies = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < WRITES; i++) {
    const t = process.hrtime.bigint();
    await service.putIncident({
      accountId: ACCOUNT,
      incidentId: randomUUID(),
      input: { title: `incident ${i} ${'x'.repeat(200)}`, ownerType: 'USER', ownerId: ALICE },
      actor: { type: 'USER', id: ALICE },
      creatorUserId: ALICE,
    });
    latencies.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const totalMs = Number(process.hrtime.bigint() - started) / 1e6;
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.floor(p * (latencies.length - 1))].toFixed(2);
  return { perSecond: Math.round((WRITES / totalMs) * 1000), p50: q(0.5), p99: q(0.99) };
}

try {
  // (a) fenced only
  {
    const { coordinator, candidacy } = await leader('/bench-fenced');
    const store = await RelationalStore.open(path.join(work, 'fenced'), {
      migrations: ALL_MIGRATIONS,
      commitGuard: () => candidacy.assertLeadership(),
    });
    const r = await writes(store);
    console.log(`fenced only:  ${r.perSecond} writes/s, p50 ${r.p50} ms, p99 ${r.p99} ms`);
    await store.close();
    await coordinator.close();
  }
  // (b) replicated
  {
    const { coordinator, candidacy } = await leader('/bench-replicated');
    const dbLog = coordinator.replicatedLog('database');
    const { store, replication } = await openReplicatedStore({
      dir: path.join(work, 'leader'),
      log: dbLog,
      candidacy,
      term: candidacy.term,
      snapshotEveryChanges: 1_000_000,
      logger: log,
    });
    await runMigrations(store, ALL_MIGRATIONS);
    const r = await writes(store);
    console.log(
      `replicated:   ${r.perSecond} writes/s, p50 ${r.p50} ms, p99 ${r.p99} ms (${replication.journal.seq} entries, ${replication.journal.loggedBytes} bytes logged)`,
    );
    let t = Date.now();
    const copy = await openSynced(path.join(work, 'standby'), dbLog, log);
    const applyMs = Date.now() - t;
    console.log(
      `catch-up of an empty standby from the log: ${applyMs} ms for ${copy.position.seq} entries (${((applyMs / copy.position.seq) * 1000).toFixed(0)} µs each)`,
    );
    await copy.store.close();
    replication.snapshotEveryChanges = 1;
    t = Date.now();
    await snapshotIfDue(store, replication, log);
    const snapMs = Date.now() - t;
    console.log(
      `snapshot of the store with ${WRITES} incidents: ${replication.snapshot.bytes} bytes gzipped, ${snapMs} ms to take and publish`,
    );
    t = Date.now();
    const restored = await openSynced(path.join(work, 'restored'), dbLog, log);
    console.log(`restore of an empty standby from that snapshot: ${Date.now() - t} ms`);
    await restored.store.close();
    await store.close();
    await coordinator.close();
  }
} finally {
  await etcd.stop();
  rmSync(work, { recursive: true, force: true });
}
