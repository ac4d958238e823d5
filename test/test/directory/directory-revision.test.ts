import assert from 'node:assert/strict';
import { ChannelPool, createLogger, EtcdCoordinator } from '@strata/common';
import { type EtcdServer, startEtcd, testIdentity } from '@strata/common/testing';
import { startTestNode, type TestNode } from '@strata/deploy/testing';
import { MasterClient, PrincipalLoader } from '@strata/gateway';
import { DirectoryServiceService } from '@strata/proto/directory/v1/directory';

/**
 * The directory revision (docs/decisions/0049-directory-revision.md): the master bumps it in etcd
 * after every committed change of users, permissions, memberships and accounts; a gateway keeps a
 * user's permissions while it reads the same revision. A real node (master and gateway) on real
 * etcd; beside it, in this process, a PrincipalLoader on a real MasterClient whose clock is frozen,
 * so every "seen at once" below happens inside the old 2 s cache window by construction.
 */
const A = 'a0000000-0000-4000-8000-00000000000a';
const B = 'b0000000-0000-4000-8000-00000000000b';
const id = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ROOT = { userId: id(1), username: 'root', password: 'root-password-1', global: ['Service.Global.Admin'] };
const user = (n: number, accounts: Record<string, string[]>, global: string[] = []) => ({
  userId: id(n),
  username: `user${n}`,
  password: `user${n}-password-1`,
  accounts,
  global,
});
const GLOBAL_VIEWER = user(2, {}, ['Service.Global.Admin']);
const EDITOR = user(3, { alpha: ['Service.Incident.Editor', 'Service.Incident.Viewer'] });
const MEMBER = user(4, { alpha: ['Service.Incident.Viewer'] });
const DOOMED = user(5, { alpha: ['Service.Incident.Viewer'] });
const BETA_MEMBER = user(6, { alpha: ['Service.Incident.Viewer'], beta: ['Service.Incident.Viewer'] });
const DASHBOARD = user(7, { alpha: ['Service.Incident.Viewer'] });
const HTTP_MEMBER = user(8, { alpha: ['Service.Incident.Viewer'] });

describe('directory revision: cached permissions end with the change that alters them', function () {
  this.timeout(90_000);
  let etcd: EtcdServer;
  let node: TestNode;
  let coordinator: EtcdCoordinator;
  let channels: ChannelPool;
  let master: MasterClient;
  let masterReads = 0;
  let clock = 1_000_000;
  let loader: PrincipalLoader;

  const claims = (userId: string) => ({ sub: userId, typ: 'session' as const, iat: 0, jti: 'test' });
  const load = (u: { userId: string }) => loader.load(claims(u.userId));
  const directory = () => master.service(DirectoryServiceService);

  /** The real MasterClient, counted: every listUserPermissions a loader sends reaches the real master. */
  const countingMaster = () =>
    ({
      service: (definition: unknown) => {
        const client = master.service(definition as typeof DirectoryServiceService);
        if (definition !== DirectoryServiceService) return client;
        return {
          listUserPermissions: (req: { userId: string }) => {
            masterReads++;
            return client.listUserPermissions(req);
          },
        };
      },
    }) as unknown as MasterClient;

  before(async () => {
    etcd = await startEtcd();
    const etcdConfig = { endpoints: [etcd.endpoint], prefix: `/strata-dirrev-${process.pid}`, leaseTtlSeconds: 5 };
    node = await startTestNode({
      accounts: { [A]: 'alpha', [B]: 'beta' },
      users: [ROOT, GLOBAL_VIEWER, EDITOR, MEMBER, DOOMED, BETA_MEMBER, DASHBOARD, HTTP_MEMBER],
      config: { etcd: etcdConfig },
    });
    coordinator = new EtcdCoordinator(etcdConfig, createLogger('test', { level: 'silent' }));
    channels = new ChannelPool(testIdentity(['gateway']));
    master = new MasterClient(coordinator, channels);
    master.start();
    loader = new PrincipalLoader(countingMaster(), coordinator, () => clock);
  });
  after(async () => {
    master?.stop();
    channels?.close();
    await coordinator?.close();
    await node?.stop();
    await etcd?.stop();
  });

  /** Runs a change through the real master and checks that it raised the directory revision. */
  const bumps = async (change: () => Promise<unknown>) => {
    const before = await coordinator.readDirectoryRevision();
    await change();
    assert.ok((await coordinator.readDirectoryRevision()) > before, 'the change did not bump the directory revision');
  };

  it('is bumped by provisioning at election (the node provisioned its users)', async () => {
    assert.ok((await coordinator.readDirectoryRevision()) > 0);
  });

  it("keeps a user's unchanged permissions without asking the master, up to the 60 s backstop", async () => {
    const first = await load(DASHBOARD);
    assert.deepEqual([...(first.accountPermissions.get(A) ?? [])], ['Service.Incident.Viewer']);
    const reads = masterReads;
    // A dashboard refreshing every 10 s for 50 s: the same permissions, no master call.
    for (let i = 0; i < 5; i++) {
      clock += 10_000;
      assert.deepEqual([...((await load(DASHBOARD)).accountPermissions.get(A) ?? [])], ['Service.Incident.Viewer']);
    }
    assert.equal(masterReads, reads);
    // Past the backstop the master is asked again even though nothing changed.
    clock += PrincipalLoader.BACKSTOP_TTL_MS;
    await load(DASHBOARD);
    assert.equal(masterReads, reads + 1);
  });

  it('a changed global permission is seen on the next request (setPermissions)', async () => {
    assert.ok((await load(GLOBAL_VIEWER)).globalPermissions.has('Service.Global.Admin'));
    await bumps(() => directory().setPermissions({ userId: GLOBAL_VIEWER.userId, accountId: '', permissions: [] }));
    assert.equal((await load(GLOBAL_VIEWER)).globalPermissions.size, 0);
  });

  it("a member's replaced account permissions are seen on the next request (putMember, setPermissions)", async () => {
    assert.ok((await load(EDITOR)).accountPermissions.get(A)?.has('Service.Incident.Editor'));
    await bumps(() => directory().putMember({ accountId: A, userId: EDITOR.userId, permissions: ['Service.Incident.Viewer'] }));
    assert.deepEqual([...((await load(EDITOR)).accountPermissions.get(A) ?? [])], ['Service.Incident.Viewer']);
    await bumps(() => directory().setPermissions({ userId: EDITOR.userId, accountId: A, permissions: [] }));
    assert.deepEqual([...((await load(EDITOR)).accountPermissions.get(A) ?? [])], []);
  });

  it('a removed membership is seen on the next request (removeMember)', async () => {
    assert.ok((await load(MEMBER)).accountPermissions.has(A));
    await bumps(() => directory().removeMember({ accountId: A, userId: MEMBER.userId }));
    assert.equal((await load(MEMBER)).accountPermissions.has(A), false);
  });

  it("a deleted user's token is refused on the next request (deleteUser)", async () => {
    await load(DOOMED);
    await bumps(() => directory().deleteUser({ userId: DOOMED.userId }));
    await assert.rejects(load(DOOMED), /The token is invalid or expired/);
  });

  it("a deleted account's permissions are gone on the next request (deleteAccount)", async () => {
    assert.ok((await load(BETA_MEMBER)).accountPermissions.has(B));
    await bumps(() => directory().deleteAccount({ accountId: B }));
    const after = await load(BETA_MEMBER);
    assert.equal(after.accountPermissions.has(B), false);
    assert.ok(after.accountPermissions.has(A));
  });

  it('creating or renaming a user or an account bumps the revision (upsertUser, upsertAccount)', async () => {
    await assert.rejects(load({ userId: id(20) }), /The token is invalid or expired/);
    await bumps(() =>
      directory().upsertUser({
        user: { userId: id(20), userName: 'newcomer', firstName: '', lastName: '', email: '', createdAt: '' },
        password: 'newcomer-password-1',
      }),
    );
    assert.equal((await load({ userId: id(20) })).userId, id(20));
    await bumps(() =>
      directory().upsertAccount({
        account: { accountId: 'c0000000-0000-4000-8000-00000000000c', accountName: 'gamma', createdAt: '' },
      }),
    );
  });

  it('a refused change (nothing committed) leaves the revision alone', async () => {
    const before = await coordinator.readDirectoryRevision();
    await assert.rejects(directory().removeMember({ accountId: A, userId: id(99) }), /is not a member/);
    assert.equal(await coordinator.readDirectoryRevision(), before);
  });

  it('with etcd unreachable, behaves as before: a 2 s cache, then the master', async () => {
    // A real etcd client whose etcd is gone: every revision read fails, and the loader falls back.
    const gone = await startEtcd();
    const unreachable = new EtcdCoordinator(
      { endpoints: [gone.endpoint], prefix: '/strata-dirrev-gone', leaseTtlSeconds: 5, requestTimeoutMs: 300 },
      createLogger('test', { level: 'silent' }),
    );
    await gone.stop();
    try {
      const fallback = new PrincipalLoader(countingMaster(), unreachable, () => clock);
      const reads = masterReads;
      await fallback.load(claims(DASHBOARD.userId));
      clock += 1_000;
      await fallback.load(claims(DASHBOARD.userId));
      assert.equal(masterReads, reads + 1, 'within 2 s: from the cache');
      clock += 1_500;
      await fallback.load(claims(DASHBOARD.userId));
      assert.equal(masterReads, reads + 2, 'after 2 s: the master again');
    } finally {
      await unreachable.close();
    }
  });

  it("over HTTP: a removed member is refused on the node's gateway on the very next request", async () => {
    const token = await node.signIn(HTTP_MEMBER.username, HTTP_MEMBER.password);
    const list = () => node.request('GET', `/accounts/${A}/incidents`, { token });
    assert.equal((await list()).status, 200);
    const rootToken = await node.signIn(ROOT.username, ROOT.password);
    const removed = await node.request('DELETE', `/accounts/${A}/users/${HTTP_MEMBER.userId}`, { token: rootToken });
    assert.equal(removed.status, 204, await removed.text());
    assert.equal((await list()).status, 403);
  });
});
