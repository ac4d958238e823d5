import assert from 'node:assert/strict';
import { ACCOUNT, ALICE, BOB, CAROL, Fixture, MALLORY, newId, OTHER_ACCOUNT } from './fixture.js';

describe('GroupService', () => {
  let f: Fixture;
  before(async () => {
    f = await Fixture.create();
  });
  after(async () => {
    await f.close();
  });

  const put = (groupId: string, fields: Record<string, string | undefined>, actor = ALICE) =>
    f.groups.putGroup({ accountId: ACCOUNT, groupId, actorUserId: actor, ...fields });

  it('creates then updates by upsert; updatedAt always now, createdBy/createdAt kept', async () => {
    const id = newId();
    const created = await put(id, { name: 'SRE', description: 'site reliability' }, BOB);
    assert.equal(created.created, true);
    assert.equal(created.group.createdByUserId, BOB);
    assert.equal(created.group.createdAt, created.group.updatedAt);
    await new Promise((r) => setTimeout(r, 5));
    const updated = await put(id, { name: 'SRE team' }, ALICE);
    assert.equal(updated.created, false);
    assert.equal(updated.group.name, 'SRE team');
    assert.equal(updated.group.createdByUserId, BOB, 'stored creator kept');
    assert.equal(updated.group.createdAt, created.group.createdAt);
    assert.ok(updated.group.updatedAt > created.group.updatedAt);
    assert.equal(updated.group.description, 'site reliability', 'a PUT without description keeps it');
    assert.deepEqual(await f.groups.getGroup(ACCOUNT, id), updated.group);
  });

  it('keeps a supplied createdByUserId and createdAt', async () => {
    const id = newId();
    const { group } = await put(id, { name: 'Imported', createdByUserId: CAROL, createdAt: '2020-01-02T03:04:05Z' });
    assert.equal(group.createdByUserId, CAROL);
    assert.equal(group.createdAt, '2020-01-02T03:04:05.000Z');
    assert.notEqual(group.updatedAt, group.createdAt);
    await assert.rejects(put(newId(), { name: 'x', createdAt: 'yesterday' }), { kind: 'invalid' });
  });

  it('stores an empty description as absent', async () => {
    const id = newId();
    await put(id, { name: 'Empty', description: 'to be cleared' });
    const { group } = await put(id, { name: 'Empty', description: '' });
    assert.equal(group.description, undefined);
    const row = await f.store.one<{ description: string | null }>('SELECT description FROM incident_groups WHERE group_id = $1', [
      group.groupId,
    ]);
    assert.equal(row!.description, null);
  });

  it('requires a usable name: "Group name is required."', async () => {
    for (const name of [undefined, '', '   ']) {
      await assert.rejects(put(newId(), { name }), { kind: 'invalid', message: 'Group name is required.' });
    }
  });

  it('lists the groups of one account only', async () => {
    const g = await Fixture.create();
    try {
      await g.groups.putGroup({ accountId: ACCOUNT, groupId: newId(), actorUserId: ALICE, name: 'b' });
      await g.groups.putGroup({ accountId: ACCOUNT, groupId: newId(), actorUserId: ALICE, name: 'A' });
      await g.groups.putGroup({ accountId: OTHER_ACCOUNT, groupId: newId(), actorUserId: MALLORY, name: 'c' });
      assert.deepEqual(
        (await g.groups.listGroups(ACCOUNT)).map((x) => x.name),
        ['A', 'b'],
      );
    } finally {
      await g.close();
    }
  });

  describe('members', () => {
    it('adds account members; adding twice replaces the record instead of duplicating', async () => {
      const id = newId();
      await put(id, { name: 'On-call' });
      const first = await f.groups.putMember(ACCOUNT, id, BOB, ALICE);
      assert.equal(first.created, true);
      await new Promise((r) => setTimeout(r, 5));
      const second = await f.groups.putMember(ACCOUNT, id, BOB.toUpperCase(), CAROL);
      assert.equal(second.created, false);
      const members = await f.groups.listMembers(ACCOUNT, id);
      assert.equal(members.length, 1);
      assert.equal(members[0]!.addedByUserId, CAROL, 'the latest add replaces the record');
      assert.ok(members[0]!.addedAt > first.member.addedAt);
    });

    it('refuses a missing group: "Incident group <id> does not exist."', async () => {
      const missing = newId();
      await assert.rejects(f.groups.putMember(ACCOUNT, missing, BOB, ALICE), {
        kind: 'invalid',
        message: `Incident group ${missing} does not exist.`,
      });
    });

    it('refuses a user who is not an account member: "User <id> is not a member of this account."', async () => {
      const id = newId();
      await put(id, { name: 'x' });
      await assert.rejects(f.groups.putMember(ACCOUNT, id, MALLORY, ALICE), {
        kind: 'invalid',
        message: `User ${MALLORY} is not a member of this account.`,
      });
    });

    it('removes one membership', async () => {
      const id = newId();
      await put(id, { name: 'x' });
      await f.groups.putMember(ACCOUNT, id, BOB, ALICE);
      await f.groups.putMember(ACCOUNT, id, CAROL, ALICE);
      await f.groups.deleteMember(ACCOUNT, id, BOB);
      assert.deepEqual(
        (await f.groups.listMembers(ACCOUNT, id)).map((m) => m.userId),
        [CAROL],
      );
      await assert.rejects(f.groups.deleteMember(ACCOUNT, id, BOB), { kind: 'not_found' });
    });

    it('publish no notification', async () => {
      const id = newId();
      await put(id, { name: 'quiet' });
      await f.groups.putMember(ACCOUNT, id, BOB, ALICE);
      await f.groups.deleteMember(ACCOUNT, id, BOB);
      await f.groups.deleteGroup(ACCOUNT, id);
      assert.equal((await f.outbox()).length, 0);
    });
  });

  describe('delete', () => {
    it('is blocked while the group owns incidents: "Incident group <id> still owns <n> incidents."', async () => {
      const id = newId();
      await put(id, { name: 'owners' });
      await f.groups.putMember(ACCOUNT, id, BOB, ALICE);
      const incidents = [newId(), newId()];
      for (const i of incidents) await f.put(i, { ownerType: 'GROUP', ownerId: id });
      await assert.rejects(f.groups.deleteGroup(ACCOUNT, id), {
        kind: 'invalid',
        message: `Incident group ${id} still owns 2 incidents.`,
      });
      assert.equal((await f.groups.listMembers(ACCOUNT, id)).length, 1, 'nothing removed');
      await f.put(incidents[0]!, { ownerType: 'USER', ownerId: ALICE });
      await assert.rejects(f.groups.deleteGroup(ACCOUNT, id), { message: `Incident group ${id} still owns 1 incidents.` });
      await f.incidents.deleteIncident(ACCOUNT, incidents[1]!);
      await f.groups.deleteGroup(ACCOUNT, id);
      await assert.rejects(f.groups.getGroup(ACCOUNT, id), { kind: 'not_found' });
      const rows = await f.store.all('SELECT * FROM incident_group_members WHERE group_id = $1', [id]);
      assert.equal(rows.length, 0, 'memberships deleted with the group');
    });

    it('answers not found for an unknown group', async () => {
      await assert.rejects(f.groups.deleteGroup(ACCOUNT, newId()), { kind: 'not_found' });
    });
  });
});
