import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { ACCOUNT_A, ACCOUNT_B, IncidentsCluster, type UserName, userId } from './incidents-cluster.js';

const A = `/accounts/${ACCOUNT_A}`;

/**
 * The incident, group and alert endpoints over HTTP on a real node: permissions per role with real
 * tokens, status codes, spec messages in the error body, headers (ETag, paging) and JSON shapes.
 */
describe('incidents, groups and alerts API (HTTP)', function () {
  this.timeout(60_000);
  let c: IncidentsCluster;
  before(async () => {
    c = await IncidentsCluster.start();
  });
  after(async () => c?.stop());

  const incident = (owner: UserName = 'editor', extra: Record<string, unknown> = {}) => ({
    title: 'Checkout errors',
    ownerType: 'USER',
    ownerId: userId(owner),
    ...extra,
  });
  const create = async (as: UserName = 'editor', body: unknown = incident()) => {
    const id = randomUUID();
    const res = await c.request('PUT', `${A}/incidents/${id}`, { as, body });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { id, res };
  };

  describe('permissions', () => {
    const readers: UserName[] = ['globalAdmin', 'admin', 'viewer', 'editor', 'manager'];
    const writers: UserName[] = ['globalAdmin', 'admin', 'editor', 'manager'];
    const groupWriters: UserName[] = ['globalAdmin', 'admin', 'manager'];
    const everyone: UserName[] = ['globalAdmin', 'admin', 'viewer', 'editor', 'manager', 'inflow', 'query', 'editorB', 'nobody'];

    it('read incidents: global admin, account admin, viewer, editor, manager', async () => {
      const { id } = await create();
      for (const user of everyone) {
        const list = await c.request('GET', `${A}/incidents`, { as: user });
        const one = await c.request('GET', `${A}/incidents/${id}`, { as: user });
        const history = await c.request('GET', `${A}/incidents/${id}/history`, { as: user });
        const expected = readers.includes(user) ? 200 : 403;
        assert.deepEqual([list.status, one.status, history.status], [expected, expected, expected], user);
        if (expected === 403) assert.equal(one.body.message, 'No permission.');
      }
    });

    it('write incidents: editor, manager and admins; authenticated access alone is not enough', async () => {
      for (const user of everyone) {
        const res = await c.request('PUT', `${A}/incidents/${randomUUID()}`, { as: user, body: incident() });
        assert.equal(res.status, writers.includes(user) ? 201 : 403, `${user}: ${JSON.stringify(res.body)}`);
        if (res.status === 201) assert.equal(res.body.createdByUserId, userId(user));
      }
      const { id } = await create();
      for (const user of ['viewer', 'nobody', 'editorB'] as UserName[]) {
        assert.equal((await c.request('POST', `${A}/incidents/${id}/comments`, { as: user, body: { body: 'x' } })).status, 403);
        assert.equal((await c.request('DELETE', `${A}/incidents/${id}`, { as: user })).status, 403);
        assert.equal(
          (await c.request('POST', `${A}/incidents/from-alert/${randomUUID()}`, { as: user, body: incident() })).status,
          403,
        );
      }
    });

    it('read groups: account admin, viewer, editor, manager, global admin', async () => {
      for (const user of everyone) {
        const res = await c.request('GET', `${A}/groups`, { as: user });
        assert.equal(res.status, readers.includes(user) ? 200 : 403, user);
      }
    });

    it('manage groups and membership: account admin, manager, global admin; others get "No permission."', async () => {
      for (const user of everyone) {
        const groupId = randomUUID();
        const put = await c.request('PUT', `${A}/groups/${groupId}`, { as: user, body: { name: `g-${user}` } });
        if (groupWriters.includes(user)) {
          assert.equal(put.status, 201, user);
          const member = await c.request('PUT', `${A}/groups/${groupId}/members/${userId('viewer')}`, { as: user });
          assert.equal(member.status, 201, user);
          assert.equal(
            (await c.request('DELETE', `${A}/groups/${groupId}/members/${userId('viewer')}`, { as: user })).status,
            204,
          );
          assert.equal((await c.request('DELETE', `${A}/groups/${groupId}`, { as: user })).status, 204);
        } else {
          assert.equal(put.status, 403, user);
          assert.equal(put.body.message, 'No permission.');
        }
      }
      const groupId = randomUUID();
      await c.request('PUT', `${A}/groups/${groupId}`, { as: 'manager', body: { name: 'ops' } });
      for (const user of ['editor', 'viewer'] as UserName[]) {
        const add = await c.request('PUT', `${A}/groups/${groupId}/members/${userId('viewer')}`, { as: user });
        assert.equal(add.status, 403);
        assert.equal(add.body.message, 'No permission.');
        assert.equal((await c.request('DELETE', `${A}/groups/${groupId}`, { as: user })).body.message, 'No permission.');
      }
    });

    it("an account's permissions do not reach another account", async () => {
      assert.equal((await c.request('GET', `/accounts/${ACCOUNT_B}/incidents`, { as: 'editor' })).status, 403);
      assert.equal((await c.request('GET', `/accounts/${ACCOUNT_B}/incidents`, { as: 'editorB' })).status, 200);
      assert.equal((await c.request('GET', `/accounts/${ACCOUNT_B}/incidents`, { as: 'globalAdmin' })).status, 200);
    });

    it('refuses long-lived (scoped) tokens and anonymous calls', async () => {
      const session = await c.token('admin');
      const pat = await c.request('POST', '/auth/pat-token', {
        token: session,
        body: { expiration: null, accounts: [{ accountId: ACCOUNT_A, inflow: { schemas: [{ schema: '*' }] } }] },
      });
      assert.equal(pat.status, 200);
      assert.equal((await c.request('GET', `${A}/incidents`, { token: pat.body.token })).status, 403);
      assert.equal((await c.request('GET', `${A}/incidents`)).status, 401);
    });
  });

  describe('incidents', () => {
    it('creates with 201, ETag and Location, reads back the same shape, updates with 200', async () => {
      const { id, res } = await create('editor', incident('editor', { description: 'since 10:02' }));
      assert.equal(res.headers.get('etag'), '"1"');
      assert.equal(res.headers.get('location'), `${A}/incidents/${id}`);
      const body = res.body;
      assert.deepEqual(Object.keys(body).sort(), [
        'accountId',
        'assigneeUserId',
        'createdAt',
        'createdByUserId',
        'description',
        'incidentId',
        'ownerId',
        'ownerType',
        'reopenReason',
        'resolutionNote',
        'resolvedAt',
        'severity',
        'state',
        'title',
        'updatedAt',
        'version',
      ]);
      assert.equal(body.state, 'OPEN');
      assert.equal(body.severity, 'SEV3');
      assert.equal(body.assigneeUserId, null);
      assert.equal(body.resolvedAt, null);
      const got = await c.request('GET', `${A}/incidents/${id.toUpperCase()}`, { as: 'viewer' });
      assert.deepEqual(got.body, body);
      assert.equal(got.headers.get('etag'), '"1"');
      const updated = await c.request('PUT', `${A}/incidents/${id}`, { as: 'manager', body: { ...body, state: 'IN_PROGRESS' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.state, 'IN_PROGRESS');
      assert.equal(updated.headers.get('etag'), '"2"');
    });

    it('matches JSON keys without regard to case', async () => {
      const { res } = await create('editor', {
        TITLE: 'Shouting',
        OwnerType: 'user',
        ownerid: userId('editor'),
        Severity: 'sev1',
      });
      assert.equal(res.body.title, 'Shouting');
      assert.equal(res.body.severity, 'SEV1');
    });

    it("answers the spec's messages as bad requests", async () => {
      const { id } = await create();
      const groupId = randomUUID();
      const cases: [unknown, string][] = [
        [{ title: 'x' }, 'Incident owner is required.'],
        [incident('editor', { ownerType: 'GROUP', ownerId: groupId }), `Incident group ${groupId} does not exist.`],
        [incident('editorB'), `Incident user owner ${userId('editorB')} is not a member of this account.`],
        [
          incident('editor', { assigneeUserId: userId('editorB') }),
          `Incident assignee ${userId('editorB')} is not a member of this account.`,
        ],
        [incident('editor', { state: 'RESOLVED' }), 'Resolution note is required when resolving an incident.'],
      ];
      for (const [body, message] of cases) {
        const res = await c.request('PUT', `${A}/incidents/${id}`, { as: 'editor', body });
        assert.equal(res.status, 400, message);
        assert.deepEqual(res.body, { message, stackTrace: null, errors: [] });
      }
      await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        body: incident('editor', { state: 'RESOLVED', resolutionNote: 'ok' }),
      });
      const reopen = await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        body: incident('editor', { state: 'OPEN' }),
      });
      assert.equal(reopen.status, 400);
      assert.equal(reopen.body.message, 'Reopen reason is required when reopening a resolved incident.');
      const invalid = await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        body: incident('editor', { state: 'MITIGATED' }),
      });
      assert.equal(invalid.status, 400);
      assert.equal(invalid.body.message, 'Invalid incident state transition');
    });

    it('answers 404 for an unknown incident and 400 for a malformed id', async () => {
      const missing = randomUUID();
      const res = await c.request('GET', `${A}/incidents/${missing}`, { as: 'viewer' });
      assert.equal(res.status, 404);
      assert.equal(res.body.message, `Incident ${missing} does not exist.`);
      assert.equal((await c.request('DELETE', `${A}/incidents/${missing}`, { as: 'editor' })).status, 404);
      assert.equal((await c.request('GET', `${A}/incidents/${missing}/comments`, { as: 'viewer' })).status, 404);
      assert.equal((await c.request('GET', `${A}/incidents/nope`, { as: 'viewer' })).status, 400);
    });

    it('refuses a stale If-Match with 412 so two editors cannot overwrite each other', async () => {
      const { id, res } = await create();
      const etag = res.headers.get('etag')!;
      const first = await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        headers: { 'if-match': etag },
        body: { ...res.body, title: 'edit by one' },
      });
      assert.equal(first.status, 200);
      const second = await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'manager',
        headers: { 'if-match': etag },
        body: { ...res.body, title: 'edit by two' },
      });
      assert.equal(second.status, 412);
      assert.match(second.body.message, /changed by someone else/);
      assert.equal((await c.request('GET', `${A}/incidents/${id}`, { as: 'viewer' })).body.title, 'edit by one');
      const createOnly = await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        headers: { 'if-none-match': '*' },
        body: incident(),
      });
      assert.equal(createOnly.status, 412);
      const staleDelete = await c.request('DELETE', `${A}/incidents/${id}`, { as: 'editor', headers: { 'if-match': etag } });
      assert.equal(staleDelete.status, 412);
      const del = await c.request('DELETE', `${A}/incidents/${id}`, {
        as: 'editor',
        headers: { 'if-match': first.headers.get('etag')! },
      });
      assert.equal(del.status, 204);
      assert.equal(
        (await c.request('PUT', `${A}/incidents/${id}`, { as: 'editor', headers: { 'if-match': 'abc' }, body: incident() }))
          .status,
        400,
      );
    });

    it('lists with filters and paging headers, the body staying an array', async () => {
      const mine = [];
      for (const severity of ['SEV1', 'SEV2', 'SEV1']) mine.push((await create('editor', incident('manager', { severity }))).id);
      const sev1 = await c.request('GET', `${A}/incidents?severity=SEV1&ownerId=${userId('manager')}`, { as: 'viewer' });
      assert.equal(sev1.status, 200);
      assert.ok(Array.isArray(sev1.body));
      assert.deepEqual(sev1.body.map((i: { incidentId: string }) => i.incidentId).sort(), [mine[0], mine[2]].sort());
      assert.equal(sev1.headers.get('x-total-count'), '2');
      const page = await c.request('GET', `${A}/incidents?ownerId=${userId('manager')}&limit=2`, { as: 'viewer' });
      assert.equal(page.body.length, 2);
      assert.equal(page.headers.get('x-total-count'), '3');
      const next = /<([^>]+)>; rel="next"/.exec(page.headers.get('link') ?? '')?.[1];
      assert.ok(next, page.headers.get('link') ?? 'no link header');
      const rest = await c.request('GET', next, { as: 'viewer' });
      assert.equal(rest.body.length, 1);
      assert.match(rest.headers.get('link') ?? '', /rel="prev"/);
      const all = [...page.body, ...rest.body].map((i: { incidentId: string }) => i.incidentId).sort();
      assert.deepEqual(all, [...mine].sort());
      const states = await c.request('GET', `${A}/incidents?state=RESOLVED,MITIGATED&ownerId=${userId('manager')}`, {
        as: 'viewer',
      });
      assert.deepEqual(states.body, []);
      assert.equal((await c.request('GET', `${A}/incidents?state=DONE`, { as: 'viewer' })).status, 400);
      for (const bad of ['limit=abc', 'limit=0', 'limit=1001', 'offset=-1'])
        assert.equal((await c.request('GET', `${A}/incidents?${bad}`, { as: 'viewer' })).status, 400, bad);
    });

    it('adds and lists comments; history shows every event in order with metadata', async () => {
      const { id, res } = await create('editor', incident('editor', { assigneeUserId: userId('manager') }));
      const comment = await c.request('POST', `${A}/incidents/${id}/comments`, { as: 'manager', body: { Body: 'on it' } });
      assert.equal(comment.status, 201);
      assert.equal(comment.body.authorUserId, userId('manager'));
      const blank = await c.request('POST', `${A}/incidents/${id}/comments`, { as: 'manager', body: { body: '  ' } });
      assert.equal(blank.status, 400);
      const comments = await c.request('GET', `${A}/incidents/${id}/comments`, { as: 'viewer' });
      assert.deepEqual(comments.body, [comment.body]);
      await c.request('PUT', `${A}/incidents/${id}`, {
        as: 'editor',
        body: { ...res.body, severity: 'SEV2', assigneeUserId: null },
      });
      const history = await c.request('GET', `${A}/incidents/${id}/history`, { as: 'viewer' });
      assert.deepEqual(
        history.body.map((e: { eventType: string }) => e.eventType),
        ['INCIDENT_CREATED', 'COMMENT_ADDED', 'INCIDENT_UPDATED'],
      );
      const updated = history.body[2];
      assert.equal(
        updated.metadataJson,
        `owner=INCIDENT_OWNER_TYPE_USER:${userId('editor')};changes=Severity:SEV3->SEV2|Assignee:${userId('manager')}->00000000-0000-0000-0000-000000000000`,
      );
      assert.equal(JSON.parse(updated.beforeJson).severity, 'SEV3');
      assert.equal(updated.actorType, 'USER');
      assert.equal(updated.actorId, userId('editor'));
    });
  });

  describe('alerts', () => {
    it('creates from an alert once (201), then links (200); concurrent calls create one incident', async () => {
      const alert = randomUUID();
      const first = await c.request('POST', `${A}/incidents/from-alert/${alert}`, { as: 'editor', body: incident() });
      assert.equal(first.status, 201);
      assert.equal(first.body.created, true);
      assert.equal(first.body.link.linkSource, 'alert-triggered');
      const again = await c.request('POST', `${A}/incidents/from-alert/${alert}`, { as: 'editor', body: incident() });
      assert.equal(again.status, 200);
      assert.equal(again.body.incident.incidentId, first.body.incident.incidentId);

      const burst = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () =>
          c.request('POST', `${A}/incidents/from-alert/${burst}`, { as: 'editor', body: incident() }),
        ),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 201]);
      assert.equal(new Set(answers.map((a) => a.body.incident.incidentId)).size, 1);

      const states = await c.request('GET', `${A}/alert-runtime-states`, { as: 'viewer' });
      for (const id of [alert, burst])
        assert.equal(states.body.find((s: { alertRecordId: string }) => s.alertRecordId === id).state, 'ACTIVE');
      const links = await c.request('GET', `${A}/alert-incident-links`, { as: 'viewer' });
      assert.equal(links.body.filter((l: { alertRecordId: string }) => l.alertRecordId === burst).length, 1);
    });

    it('manages manual links and runtime states', async () => {
      const { id } = await create();
      const alert = randomUUID();
      const link = await c.request('PUT', `${A}/alert-incident-links/${alert}/incidents/${id}`, { as: 'editor' });
      assert.equal(link.status, 201);
      assert.equal(link.body.linkSource, 'manual');
      const del = await c.request('DELETE', `${A}/alert-incident-links/${alert}/incidents/${id}`, { as: 'editor' });
      assert.equal(del.status, 204);
      assert.equal(
        (await c.request('DELETE', `${A}/alert-incident-links/${alert}/incidents/${id}`, { as: 'editor' })).status,
        404,
      );
      const state = await c.request('PUT', `${A}/alert-runtime-states/${alert}`, { as: 'editor', body: { state: 'ACTIVE' } });
      assert.equal(state.status, 201);
      assert.equal(state.body.state, 'ACTIVE');
      assert.equal(
        (await c.request('PUT', `${A}/alert-runtime-states/${alert}`, { as: 'viewer', body: { state: 'ACTIVE' } })).status,
        403,
      );
    });
  });

  describe('groups', () => {
    it('upserts, lists, manages members and refuses to delete a group that owns incidents', async () => {
      const groupId = randomUUID();
      const created = await c.request('PUT', `${A}/groups/${groupId}`, {
        as: 'manager',
        body: { name: 'Payments', description: '' },
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.description, null);
      assert.equal(created.body.createdByUserId, userId('manager'));
      const updated = await c.request('PUT', `${A}/groups/${groupId}`, { as: 'admin', body: { name: 'Payments team' } });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.createdByUserId, userId('manager'));
      const blank = await c.request('PUT', `${A}/groups/${randomUUID()}`, { as: 'admin', body: { name: ' ' } });
      assert.equal(blank.status, 400);
      assert.equal(blank.body.message, 'Group name is required.');
      const list = await c.request('GET', `${A}/groups`, { as: 'viewer' });
      assert.ok(list.body.some((g: { groupId: string; name: string }) => g.groupId === groupId && g.name === 'Payments team'));

      const missingGroup = randomUUID();
      const noGroup = await c.request('PUT', `${A}/groups/${missingGroup}/members/${userId('viewer')}`, { as: 'manager' });
      assert.equal(noGroup.status, 400);
      assert.equal(noGroup.body.message, `Incident group ${missingGroup} does not exist.`);
      const outsider = await c.request('PUT', `${A}/groups/${groupId}/members/${userId('editorB')}`, { as: 'manager' });
      assert.equal(outsider.status, 400);
      assert.equal(outsider.body.message, `User ${userId('editorB')} is not a member of this account.`);
      assert.equal((await c.request('PUT', `${A}/groups/${groupId}/members/${userId('viewer')}`, { as: 'manager' })).status, 201);
      assert.equal((await c.request('PUT', `${A}/groups/${groupId}/members/${userId('viewer')}`, { as: 'admin' })).status, 200);
      const members = await c.request('GET', `${A}/groups/${groupId}/members`, { as: 'viewer' });
      assert.equal(members.body.length, 1);
      assert.equal(members.body[0].addedByUserId, userId('admin'));

      const { id } = await create('editor', { title: 'owned', ownerType: 'GROUP', ownerId: groupId });
      const blocked = await c.request('DELETE', `${A}/groups/${groupId}`, { as: 'manager' });
      assert.equal(blocked.status, 400);
      assert.equal(blocked.body.message, `Incident group ${groupId} still owns 1 incidents.`);
      await c.request('DELETE', `${A}/incidents/${id}`, { as: 'editor' });
      assert.equal((await c.request('DELETE', `${A}/groups/${groupId}`, { as: 'manager' })).status, 204);
      assert.equal((await c.request('GET', `${A}/groups/${groupId}/members`, { as: 'viewer' })).status, 404);
    });
  });

  it('lists every route in the OpenAPI document', async () => {
    const doc = await c.request('GET', '/openapi.json');
    for (const p of [
      '/accounts/{accountId}/incidents/{incidentId}',
      '/accounts/{accountId}/incidents/from-alert/{alertRecordId}',
      '/accounts/{accountId}/alert-incident-links/{alertRecordId}/incidents/{incidentId}',
      '/accounts/{accountId}/groups/{groupId}/members/{memberUserId}',
    ]) {
      assert.ok(doc.body.paths[p], p);
    }
    assert.equal(ACCOUNT_B.length, 36);
  });
});
