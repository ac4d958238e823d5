import assert from 'node:assert/strict';
import { ACCOUNT, ALICE, BOB, CAROL, CAROL_ALIAS, Fixture, MALLORY, NOMAIL, newId } from './fixture.js';

const ZERO = '00000000-0000-0000-0000-000000000000';
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('IncidentService', () => {
  let f: Fixture;
  let group: string;
  before(async () => {
    f = await Fixture.create();
    group = newId();
    await f.groups.putGroup({ accountId: ACCOUNT, groupId: group, actorUserId: ALICE, name: 'On-call' });
    for (const u of [BOB, CAROL, CAROL_ALIAS, NOMAIL]) await f.groups.putMember(ACCOUNT, group, u, ALICE);
  });
  after(async () => {
    await f.close();
  });

  describe('create', () => {
    it('applies defaults OPEN and SEV3, records creator and ISO 8601 UTC times', async () => {
      const id = newId();
      const res = await f.put(id, { description: 'the data disk' }, BOB);
      assert.equal(res.created, true);
      const i = res.incident;
      assert.equal(i.state, 'OPEN');
      assert.equal(i.severity, 'SEV3');
      assert.equal(i.createdByUserId, BOB);
      assert.match(i.createdAt, ISO_UTC);
      assert.equal(i.updatedAt, i.createdAt);
      assert.equal(i.resolvedAt, undefined);
      assert.equal(i.version, 1);
      assert.deepEqual(await f.incidents.getIncident(ACCOUNT, id.toUpperCase()), i);
    });

    it('requires a title', async () => {
      await assert.rejects(f.put(newId(), { title: '  ' }), { kind: 'invalid', message: 'Incident title is required.' });
    });

    it('requires an owner: "Incident owner is required."', async () => {
      await assert.rejects(f.put(newId(), { ownerType: undefined, ownerId: undefined }), {
        kind: 'invalid',
        message: 'Incident owner is required.',
      });
      await assert.rejects(f.put(newId(), { ownerId: '' }), { message: 'Incident owner is required.' });
      await assert.rejects(f.put(newId(), { ownerType: ' ' }), { message: 'Incident owner is required.' });
    });

    it('refuses a group owner missing in the account', async () => {
      const missing = newId();
      await assert.rejects(f.put(newId(), { ownerType: 'GROUP', ownerId: missing }), {
        kind: 'invalid',
        message: `Incident group ${missing} does not exist.`,
      });
    });

    it('refuses a group of another account as owner', async () => {
      const foreign = newId();
      await f.groups.putGroup({
        accountId: '22222222-2222-4222-8222-222222222222',
        groupId: foreign,
        actorUserId: MALLORY,
        name: 'x',
      });
      await assert.rejects(f.put(newId(), { ownerType: 'GROUP', ownerId: foreign }), {
        message: `Incident group ${foreign} does not exist.`,
      });
    });

    it('refuses a user owner who is not a member of the account', async () => {
      await assert.rejects(f.put(newId(), { ownerType: 'USER', ownerId: MALLORY }), {
        kind: 'invalid',
        message: `Incident user owner ${MALLORY} is not a member of this account.`,
      });
    });

    it('refuses an assignee who is not a member of the account', async () => {
      await assert.rejects(f.put(newId(), { assigneeUserId: MALLORY }), {
        kind: 'invalid',
        message: `Incident assignee ${MALLORY} is not a member of this account.`,
      });
    });

    it('accepts every combination of user or group owner with or without assignee', async () => {
      for (const owner of [
        { ownerType: 'USER', ownerId: ALICE },
        { ownerType: 'GROUP', ownerId: group },
        { ownerType: 'INCIDENT_OWNER_TYPE_GROUP', ownerId: group },
      ]) {
        for (const assignee of [{}, { assigneeUserId: BOB }]) {
          const res = await f.put(newId(), { ...owner, ...assignee });
          assert.equal(res.incident.ownerType, owner.ownerType.replace('INCIDENT_OWNER_TYPE_', ''));
          assert.equal(res.incident.assigneeUserId, (assignee as { assigneeUserId?: string }).assigneeUserId);
        }
      }
    });

    it('refuses unknown enumeration values and malformed ids', async () => {
      await assert.rejects(f.put(newId(), { state: 'DONE' }), {
        message: 'Incident state must be one of OPEN, IN_PROGRESS, MITIGATED, RESOLVED.',
      });
      await assert.rejects(f.put(newId(), { severity: 'SEV5' }), {
        message: 'Incident severity must be one of SEV1, SEV2, SEV3, SEV4.',
      });
      await assert.rejects(f.put(newId(), { ownerType: 'TEAM' }), { message: 'Incident owner type must be one of USER, GROUP.' });
      await assert.rejects(f.put('not-a-guid', {}), { message: 'incidentId must be a GUID.' });
    });

    it('records INCIDENT_CREATED with the owner metadata and the incident as afterJson', async () => {
      const id = newId();
      const { incident } = await f.put(id, { ownerType: 'GROUP', ownerId: group });
      const [event, ...rest] = await f.incidents.listHistory(ACCOUNT, id);
      assert.equal(rest.length, 0);
      assert.equal(event!.eventType, 'INCIDENT_CREATED');
      assert.equal(event!.actorType, 'USER');
      assert.equal(event!.actorId, ALICE);
      assert.equal(event!.metadataJson, `owner=INCIDENT_OWNER_TYPE_GROUP:${group}`);
      assert.equal(event!.beforeJson, undefined);
      assert.deepEqual(JSON.parse(event!.afterJson!), {
        ...incident,
        description: null,
        assigneeUserId: null,
        resolvedAt: null,
        resolutionNote: null,
        reopenReason: null,
      });
      assert.match(event!.timestamp, ISO_UTC);
    });
  });

  describe('update', () => {
    it('writes each change kind in the spec format, in the spec order', async () => {
      const id = newId();
      await f.put(id, { description: 'a' });
      await f.put(id, {
        title: 'Disk really full',
        description: 'b',
        state: 'IN_PROGRESS',
        severity: 'SEV1',
        ownerType: 'GROUP',
        ownerId: group,
        assigneeUserId: BOB,
      });
      const last = (await f.incidents.listHistory(ACCOUNT, id)).at(-1)!;
      assert.equal(last.eventType, 'INCIDENT_UPDATED');
      assert.equal(
        last.metadataJson,
        `owner=INCIDENT_OWNER_TYPE_GROUP:${group};changes=State:OPEN->IN_PROGRESS|Severity:SEV3->SEV1|` +
          `Owner:INCIDENT_OWNER_TYPE_USER:${ALICE}->INCIDENT_OWNER_TYPE_GROUP:${group}|Assignee:${ZERO}->${BOB}|Title:updated|Description:updated`,
      );
      assert.equal(JSON.parse(last.beforeJson!).state, 'OPEN');
      assert.equal(JSON.parse(last.afterJson!).state, 'IN_PROGRESS');
    });

    it('writes one change item per kind on its own', async () => {
      const id = newId();
      await f.put(id, { assigneeUserId: BOB });
      const cases: [Record<string, string>, string][] = [
        [{ severity: 'SEV2' }, 'Severity:SEV3->SEV2'],
        [{ assigneeUserId: CAROL }, `Assignee:${BOB}->${CAROL}`],
        [{ assigneeUserId: '' }, `Assignee:${CAROL}->${ZERO}`],
        [{ title: 'New title' }, 'Title:updated'],
        [{ title: 'New title', description: 'details' }, 'Description:updated'],
        [{ title: 'New title', ownerId: BOB }, `Owner:INCIDENT_OWNER_TYPE_USER:${ALICE}->INCIDENT_OWNER_TYPE_USER:${BOB}`],
      ];
      for (const [input, item] of cases) {
        const res = await f.put(id, { ...input, ownerId: input.ownerId ?? (item.startsWith('Owner') ? BOB : ALICE) });
        assert.equal(res.changed, true, item);
        const last = (await f.incidents.listHistory(ACCOUNT, id)).at(-1)!;
        assert.equal(last.metadataJson.split(';changes=')[1], item);
        if (item.startsWith('Owner')) await f.put(id, { title: 'New title', ownerId: ALICE });
      }
    });

    it('writes no history, no mail and no version bump for a save that changes nothing', async () => {
      const id = newId();
      const first = await f.put(id, { description: 'same', severity: 'SEV2' });
      const history = await f.incidents.listHistory(ACCOUNT, id);
      const mails = await f.outbox(id);
      const again = await f.put(id, { description: 'same', severity: 'sev2', state: 'OPEN' });
      assert.equal(again.changed, false);
      assert.deepEqual(again.incident, first.incident);
      assert.equal((await f.incidents.listHistory(ACCOUNT, id)).length, history.length);
      assert.equal((await f.outbox(id)).length, mails.length);
      // Absent optional fields keep their value: also no change.
      assert.equal((await f.put(id, {})).changed, false);
    });

    it('sets resolvedAt and the note on resolve, clears them on reopen and appends reopenReason to the metadata', async () => {
      const id = newId();
      await f.put(id, {});
      const resolved = (await f.put(id, { state: 'RESOLVED', resolutionNote: 'replaced disk' })).incident;
      assert.match(resolved.resolvedAt!, ISO_UTC);
      assert.equal(resolved.resolutionNote, 'replaced disk');
      const reopened = (await f.put(id, { state: 'OPEN', reopenReason: 'full again; see graph' })).incident;
      assert.equal(reopened.resolvedAt, undefined);
      assert.equal(reopened.resolutionNote, undefined);
      assert.equal(reopened.reopenReason, 'full again; see graph');
      const [created, resolve, reopen] = await f.incidents.listHistory(ACCOUNT, id);
      assert.equal(created!.eventType, 'INCIDENT_CREATED');
      assert.equal(resolve!.eventType, 'INCIDENT_RESOLVED');
      assert.equal(resolve!.metadataJson, `owner=INCIDENT_OWNER_TYPE_USER:${ALICE};changes=State:OPEN->RESOLVED`);
      assert.equal(reopen!.eventType, 'INCIDENT_REOPENED');
      assert.equal(
        reopen!.metadataJson,
        `owner=INCIDENT_OWNER_TYPE_USER:${ALICE};changes=State:RESOLVED->OPEN;reopenReason=full again; see graph`,
      );
    });

    it('creating directly in RESOLVED is the move from OPEN and needs a note', async () => {
      await assert.rejects(f.put(newId(), { state: 'RESOLVED' }), {
        message: 'Resolution note is required when resolving an incident.',
      });
      const { incident } = await f.put(newId(), { state: 'RESOLVED', resolutionNote: 'false alarm' });
      assert.equal(incident.state, 'RESOLVED');
      assert.ok(incident.resolvedAt);
    });

    it('keeps the ownership rules on update', async () => {
      const id = newId();
      await f.put(id, {});
      await assert.rejects(f.put(id, { ownerId: MALLORY }), {
        message: `Incident user owner ${MALLORY} is not a member of this account.`,
      });
      await assert.rejects(f.put(id, { assigneeUserId: MALLORY }), {
        message: `Incident assignee ${MALLORY} is not a member of this account.`,
      });
    });

    it('checks preconditions: expected version, must exist, must not exist', async () => {
      const id = newId();
      const put = (input: Record<string, string>, precondition: object) =>
        f.incidents.putIncident({
          accountId: ACCOUNT,
          incidentId: id,
          input: { title: 't', ownerType: 'USER', ownerId: ALICE, ...input },
          actor: { type: 'USER', id: ALICE },
          creatorUserId: ALICE,
          precondition: { mustExist: false, mustNotExist: false, ...precondition },
        });
      await assert.rejects(put({}, { mustExist: true }), { kind: 'precondition_failed' });
      await assert.rejects(put({}, { expectedVersion: 1 }), { kind: 'precondition_failed' });
      const v1 = (await put({}, { mustNotExist: true })).incident;
      await assert.rejects(put({}, { mustNotExist: true }), {
        kind: 'precondition_failed',
        message: `Incident ${id} already exists.`,
      });
      const v2 = (await put({ title: 'edit A' }, { expectedVersion: v1.version })).incident;
      assert.equal(v2.version, 2);
      // A second editor who read version 1 cannot overwrite edit A.
      await assert.rejects(put({ title: 'edit B' }, { expectedVersion: 1 }), { kind: 'precondition_failed' });
      assert.equal((await f.incidents.getIncident(ACCOUNT, id)).title, 'edit A');
      await assert.rejects(
        f.incidents.deleteIncident(ACCOUNT, id, { expectedVersion: 1, mustExist: false, mustNotExist: false }),
        {
          kind: 'precondition_failed',
        },
      );
    });
  });

  describe('notifications', () => {
    it('queue one mail per distinct recipient: assignee, group members, de-duplicated by user and address', async () => {
      const id = newId();
      await f.put(id, { ownerType: 'GROUP', ownerId: group, assigneeUserId: BOB });
      const mails = await f.outbox(id);
      // Bob is assignee and member (once); Carol and her alias share a mailbox (once); no-mail user skipped.
      assert.deepEqual(mails.map((m) => m.recipient_address).sort(), ['bob@example.test', 'carol@example.test']);
      assert.ok(mails.every((m) => m.event_type === 'INCIDENT_CREATED' && m.status === 'pending'));
    });

    it('queue for the owner user and the assignee', async () => {
      const id = newId();
      await f.put(id, { ownerId: ALICE, assigneeUserId: ALICE });
      assert.deepEqual(
        (await f.outbox(id)).map((m) => m.recipient_user_id),
        [ALICE],
      );
      await f.put(id, { ownerId: ALICE, assigneeUserId: BOB, severity: 'SEV1' });
      assert.deepEqual(
        (await f.outbox(id))
          .slice(1)
          .map((m) => m.recipient_address)
          .sort(),
        ['alice@example.test', 'bob@example.test'],
      );
    });

    it('commit with the change: a refused save queues nothing', async () => {
      const id = newId();
      await f.put(id, {});
      const before = (await f.outbox(id)).length;
      await assert.rejects(f.put(id, { state: 'RESOLVED' }));
      assert.equal((await f.outbox(id)).length, before);
    });
  });

  describe('comments', () => {
    it('adds comments in order with a COMMENT_ADDED event and notification', async () => {
      const id = newId();
      await f.put(id, { assigneeUserId: BOB });
      const c1 = await f.incidents.addComment(ACCOUNT, id, BOB, 'looking');
      const c2 = await f.incidents.addComment(ACCOUNT, id, ALICE, 'found it');
      assert.deepEqual(
        (await f.incidents.listComments(ACCOUNT, id)).map((c) => [c.body, c.authorUserId]),
        [
          ['looking', BOB],
          ['found it', ALICE],
        ],
      );
      assert.match(c1.createdAt, ISO_UTC);
      const events = (await f.incidents.listHistory(ACCOUNT, id)).filter((e) => e.eventType === 'COMMENT_ADDED');
      assert.equal(events.length, 2);
      assert.equal(events[0]!.actorId, BOB);
      assert.equal(events[0]!.metadataJson, `owner=INCIDENT_OWNER_TYPE_USER:${ALICE}`);
      assert.equal(JSON.parse(events[1]!.afterJson!).commentId, c2.commentId);
      const mails = (await f.outbox(id)).filter((m) => m.event_type === 'COMMENT_ADDED');
      assert.equal(mails.length, 4, 'two comments × (owner Alice, assignee Bob)');
      // A comment does not change the incident.
      assert.equal((await f.incidents.getIncident(ACCOUNT, id)).version, 1);
    });

    it('rejects an empty or whitespace-only body and writes nothing', async () => {
      const id = newId();
      await f.put(id, {});
      for (const body of ['', '  \n\t '])
        await assert.rejects(f.incidents.addComment(ACCOUNT, id, ALICE, body), { kind: 'invalid' });
      assert.equal((await f.incidents.listComments(ACCOUNT, id)).length, 0);
      assert.equal((await f.incidents.listHistory(ACCOUNT, id)).length, 1);
    });

    it('answers not found for an unknown incident', async () => {
      const id = newId();
      await assert.rejects(f.incidents.addComment(ACCOUNT, id, ALICE, 'x'), {
        kind: 'not_found',
        message: `Incident ${id} does not exist.`,
      });
      await assert.rejects(f.incidents.listComments(ACCOUNT, id), { kind: 'not_found' });
      await assert.rejects(f.incidents.listHistory(ACCOUNT, id), { kind: 'not_found' });
    });
  });

  describe('list and delete', () => {
    it('filters by state, severity, owner and assignee and pages', async () => {
      const g = await Fixture.create();
      try {
        const ids: string[] = [];
        for (let k = 0; k < 5; k++) {
          const id = newId();
          ids.push(id);
          await g.put(id, {
            severity: k % 2 ? 'SEV1' : 'SEV4',
            assigneeUserId: k < 2 ? BOB : '',
            ownerId: k === 4 ? CAROL : ALICE,
          });
        }
        await g.put(ids[0]!, { state: 'MITIGATED', severity: 'SEV4', assigneeUserId: BOB });
        const list = (filter: object, page = { offset: 0, limit: 0 }) =>
          g.incidents.listIncidents(ACCOUNT, { states: [], severities: [], ownerIds: [], assigneeUserIds: [], ...filter }, page);
        assert.equal((await list({})).total, 5);
        assert.deepEqual(
          (await list({ states: ['mitigated'] })).incidents.map((i) => i.incidentId),
          [ids[0]],
        );
        assert.equal((await list({ severities: ['SEV1'] })).total, 2);
        assert.equal((await list({ states: ['OPEN', 'MITIGATED'], severities: ['SEV4'] })).total, 3);
        assert.deepEqual(
          (await list({ ownerIds: [CAROL] })).incidents.map((i) => i.incidentId),
          [ids[4]],
        );
        assert.equal((await list({ assigneeUserIds: [BOB] })).total, 2);
        const page1 = await list({}, { offset: 0, limit: 2 });
        const page2 = await list({}, { offset: 2, limit: 2 });
        const page3 = await list({}, { offset: 4, limit: 2 });
        assert.equal(page1.total, 5);
        assert.deepEqual(
          [...page1.incidents, ...page2.incidents, ...page3.incidents].map((i) => i.incidentId).sort(),
          [...ids].sort(),
        );
        assert.equal(page1.incidents[0]!.incidentId, ids[0], 'most recently updated first');
        await assert.rejects(list({ states: ['NOPE'] }), { kind: 'invalid' });
      } finally {
        await g.close();
      }
    });

    it('deletes an incident with its comments and history; unknown ones are not found', async () => {
      const id = newId();
      await f.put(id, {});
      await f.incidents.addComment(ACCOUNT, id, ALICE, 'x');
      await f.incidents.deleteIncident(ACCOUNT, id);
      await assert.rejects(f.incidents.getIncident(ACCOUNT, id), {
        kind: 'not_found',
        message: `Incident ${id} does not exist.`,
      });
      assert.equal((await f.store.all('SELECT * FROM incident_history WHERE incident_id = $1', [id])).length, 0);
      assert.equal((await f.store.all('SELECT * FROM incident_comments WHERE incident_id = $1', [id])).length, 0);
      await assert.rejects(f.incidents.deleteIncident(ACCOUNT, id), { kind: 'not_found' });
    });

    it('keeps accounts apart', async () => {
      const id = newId();
      await f.put(id, {});
      await assert.rejects(f.incidents.getIncident('22222222-2222-4222-8222-222222222222', id), { kind: 'not_found' });
    });
  });
});
