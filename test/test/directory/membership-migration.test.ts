import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestNode, type TestNode, type TestUser } from '@strata/deploy/testing';

/**
 * Membership became its own fact in migration 4. These tests start real nodes on a copy of a data
 * directory written by the version before it (test/fixtures/data-v0.1.0, made by
 * test/fixtures/make-data-v0.1.0.mjs at that version): every member, permission, group
 * membership and incident survives, and provisioning now records members without permissions.
 */
const FIXTURE = fileURLToPath(new URL('../../../fixtures/data-v0.1.0', import.meta.url));
const A = 'a0000000-0000-4000-8000-00000000000a';
const B = 'b0000000-0000-4000-8000-00000000000b';
const user = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const GROUP = '20000000-0000-4000-8000-000000000001';
const INCIDENT = '30000000-0000-4000-8000-000000000001';

/** The provisioning config the fixture was written with. */
const USERS: TestUser[] = [
  { userId: user(1), username: 'root', password: 'root-password-1', global: ['Service.Global.Admin'] },
  { userId: user(2), username: 'alice', password: 'alice-password-1', accounts: { alpha: ['Service.Account.Admin'] } },
  {
    userId: user(3),
    username: 'bob',
    password: 'bob-password-1',
    accounts: { alpha: ['Service.Incident.Editor'], beta: ['Service.Incident.Viewer'] },
  },
  { userId: user(4), username: 'dora', password: 'dora-password-1', accounts: { alpha: [] } },
];

async function json(res: Response) {
  const text = await res.text();
  assert.ok(res.ok, `${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

describe('membership migration of a data directory written by the previous version (HTTP)', function () {
  this.timeout(60_000);

  describe('without provisioning: the migration alone', () => {
    let node: TestNode;
    before(async () => {
      node = await startTestNode({ seedDataRoot: FIXTURE, accounts: {}, users: [] });
    });
    after(async () => node?.stop());

    it('keeps every member with their permissions, and passwords still sign in', async () => {
      const alice = await node.signIn('alice', 'alice-password-1');
      const members = await json(await node.request('GET', `/accounts/${A}/users`, { token: alice }));
      assert.deepEqual(
        members.map((m: { userName: string; permissions: string[] }) => [m.userName, m.permissions]),
        [
          ['alice', ['Service.Account.Admin']],
          ['bob', ['Service.Incident.Editor']],
        ],
      );
      const bob = await node.signIn('bob', 'bob-password-1');
      const accounts = await json(await node.request('GET', `/users/${user(3)}/accounts`, { token: bob }));
      assert.deepEqual(accounts, [
        { accountId: A, accountName: 'alpha', permissions: ['Service.Incident.Editor'] },
        { accountId: B, accountName: 'beta', permissions: ['Service.Incident.Viewer'] },
      ]);
    });

    it('keeps incidents and group memberships, and membership checks still pass for migrated members', async () => {
      const alice = await node.signIn('alice', 'alice-password-1');
      const incident = await json(await node.request('GET', `/accounts/${A}/incidents/${INCIDENT}`, { token: alice }));
      assert.equal(incident.ownerId, user(3));
      assert.equal(incident.assigneeUserId, user(3));
      const groupMembers = await json(await node.request('GET', `/accounts/${A}/groups/${GROUP}/members`, { token: alice }));
      assert.deepEqual(
        groupMembers.map((m: { userId: string }) => m.userId),
        [user(3)],
      );
      // Re-adding bob to the group reads the new membership table.
      const again = await node.request('PUT', `/accounts/${A}/groups/${GROUP}/members/${user(3)}`, { token: alice });
      assert.equal(again.status, 200, await again.text());
    });

    it('does not invent memberships the old version never recorded', async () => {
      const dora = await node.signIn('dora', 'dora-password-1');
      assert.deepEqual(await json(await node.request('GET', `/users/${user(4)}/accounts`, { token: dora })), []);
    });
  });

  describe('with the same provisioning config as before', () => {
    let node: TestNode;
    before(async () => {
      node = await startTestNode({ seedDataRoot: FIXTURE, accounts: { [A]: 'alpha', [B]: 'beta' }, users: USERS });
    });
    after(async () => node?.stop());

    it('makes a user whose defaultAccounts entry has no permissions a member holding none', async () => {
      const dora = await node.signIn('dora', 'dora-password-1');
      assert.deepEqual(await json(await node.request('GET', `/users/${user(4)}/accounts`, { token: dora })), [
        { accountId: A, accountName: 'alpha', permissions: [] },
      ]);
    });

    it('lets such a member own and be assigned incidents and join groups', async () => {
      const alice = await node.signIn('alice', 'alice-password-1');
      const id = '30000000-0000-4000-8000-000000000002';
      const res = await node.request('PUT', `/accounts/${A}/incidents/${id}`, {
        token: alice,
        body: { title: 'Disk full', ownerType: 'USER', ownerId: user(4), assigneeUserId: user(4) },
      });
      assert.equal(res.status, 201, await res.text());
      const join = await node.request('PUT', `/accounts/${A}/groups/${GROUP}/members/${user(4)}`, { token: alice });
      assert.equal(join.status, 201, await join.text());
      // Not a member of beta: refused with the spec's message.
      const other = await node.request('PUT', `/accounts/${B}/incidents/${id}`, {
        token: await node.signIn('root', 'root-password-1'),
        body: { title: 'Disk full', ownerType: 'USER', ownerId: user(4) },
      });
      assert.equal(other.status, 400);
      assert.equal(
        ((await other.json()) as { message: string }).message,
        `Incident user owner ${user(4)} is not a member of this account.`,
      );
    });
  });
});
