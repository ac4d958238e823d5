import assert from 'node:assert/strict';
import { startTestNode, type TestNode } from '@strata/deploy/testing';

/**
 * Users, accounts and memberships over HTTP on a real node: who may do what, every refusal with
 * its message, and what deleting removes. docs/api.md "Users, accounts and members".
 */
const A = 'a0000000-0000-4000-8000-00000000000a';
const B = 'b0000000-0000-4000-8000-00000000000b';
const id = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ROOT = id(1);
const ADMIN_A = id(2);
const EDITOR_A = id(3);
const ADMIN_B = id(4);
const pw = (name: string) => `${name}-password-1`;

// biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
type Body = any;

describe('users, accounts and members API (HTTP)', function () {
  this.timeout(60_000);
  let node: TestNode;
  const tokens = new Map<string, string>();
  const token = async (name: string, password = pw(name)) => {
    let t = tokens.get(name);
    if (!t) {
      t = await node.signIn(name, password);
      tokens.set(name, t);
    }
    return t;
  };
  const call = async (as: string | undefined, method: string, path: string, body?: unknown) => {
    const res = await node.request(method, path, { token: as ? await token(as) : undefined, body });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
  };
  const refused = async (answer: Promise<{ status: number; body: Body }>, status: number, message: string | RegExp) => {
    const { status: got, body } = await answer;
    assert.equal(got, status, JSON.stringify(body));
    assert.equal(body.stackTrace, null);
    assert.ok(Array.isArray(body.errors));
    if (typeof message === 'string') assert.equal(body.message, message);
    else assert.match(body.message, message);
  };

  before(async () => {
    node = await startTestNode({
      accounts: { [A]: 'alpha', [B]: 'beta' },
      users: [
        { userId: ROOT, username: 'root', password: pw('root'), global: ['Service.Global.Admin'] },
        { userId: ADMIN_A, username: 'adminA', password: pw('adminA'), accounts: { alpha: ['Service.Account.Admin'] } },
        { userId: EDITOR_A, username: 'editorA', password: pw('editorA'), accounts: { alpha: ['Service.Incident.Editor'] } },
        { userId: ADMIN_B, username: 'adminB', password: pw('adminB'), accounts: { beta: ['Service.Account.Admin'] } },
      ],
    });
  });
  after(async () => node?.stop());

  describe('users (global admin)', () => {
    it('creates (201), reads, lists and updates (200) a user who can then sign in', async () => {
      const created = await call('root', 'PUT', `/users/${id(10).toUpperCase()}`, {
        UserName: 'Frank',
        firstName: 'Frank',
        lastName: 'Lee',
        email: 'frank@example.test',
        password: 'frank-password-1',
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(
        { ...created.body, createdAt: undefined },
        {
          userId: id(10),
          userName: 'Frank',
          firstName: 'Frank',
          lastName: 'Lee',
          email: 'frank@example.test',
          createdAt: undefined,
        },
      );
      assert.equal(created.body.password, undefined);
      await token('Frank', 'frank-password-1');
      const updated = await call('root', 'PUT', `/users/${id(10)}`, { username: 'frank', email: 'f@example.test' });
      assert.equal(updated.status, 200);
      assert.equal(updated.body.email, 'f@example.test');
      const list = await call('root', 'GET', '/users');
      assert.deepEqual(
        list.body.map((u: Body) => u.userName),
        ['adminA', 'adminB', 'editorA', 'frank', 'root'],
      );
      const one = await call('root', 'GET', `/users/${EDITOR_A}`);
      assert.deepEqual(one.body.globalPermissions, []);
      assert.deepEqual(one.body.accounts, [{ accountId: A, accountName: 'alpha', permissions: ['Service.Incident.Editor'] }]);
      await refused(call('root', 'GET', `/users/${id(99)}`), 404, `User ${id(99)} does not exist.`);
    });

    it('refuses bad input with clear messages', async () => {
      await refused(
        call('root', 'PUT', '/users/not-a-guid', { username: 'x', password: 'long-enough-pw' }),
        400,
        'The user id must be a GUID.',
      );
      await refused(
        call('root', 'PUT', `/users/${id(11)}`, { username: 'ghost' }),
        400,
        'password is required when creating a user.',
      );
      await refused(
        call('root', 'PUT', `/users/${id(11)}`, { username: 'ghost', password: 'short' }),
        400,
        'The password must be at least 12 characters long.',
      );
      await refused(
        call('root', 'PUT', `/users/${id(11)}`, { username: 'ROOT', password: 'long-enough-pw' }),
        409,
        'The user name ROOT is already taken.',
      );
      await refused(
        call('root', 'PUT', `/users/${id(11)}`, {
          username: 'ghost',
          password: 'long-enough-pw',
          globalPermissions: ['Service.Global.Owner'],
        }),
        400,
        'Unknown global permission: Service.Global.Owner.',
      );
      await refused(call('root', 'PUT', `/users/${id(11)}`, { password: 'long-enough-pw' }), 400, /username/);
      await refused(
        call('root', 'PUT', `/users/${ROOT}`, { username: 'root', globalPermissions: [] }),
        403,
        'You cannot remove your own global admin permission.',
      );
      await refused(call('root', 'DELETE', `/users/${ROOT}`), 403, 'You cannot delete your own user.');
    });

    it('is refused to everyone but global admins', async () => {
      for (const who of ['adminA', 'editorA']) {
        await refused(call(who, 'GET', '/users'), 403, 'No permission.');
        await refused(call(who, 'GET', `/users/${EDITOR_A}`), 403, 'No permission.');
        await refused(call(who, 'PUT', `/users/${id(12)}`, { username: 'x', password: 'long-enough-pw' }), 403, 'No permission.');
        await refused(call(who, 'DELETE', `/users/${EDITOR_A}`), 403, 'No permission.');
        await refused(call(who, 'PUT', `/users/${EDITOR_A}/password`, { password: 'long-enough-pw' }), 403, 'No permission.');
      }
      await refused(call(undefined, 'GET', '/users'), 401, /Authentication required/);
    });

    it('grants global admin through globalPermissions (legacy Logship. names accepted)', async () => {
      await call('root', 'PUT', `/users/${id(13)}`, {
        username: 'gina',
        password: 'gina-password-1',
        globalPermissions: ['Logship.Global.Admin'],
      });
      assert.equal((await call('root', 'GET', `/users/${id(13)}`)).body.globalPermissions[0], 'Service.Global.Admin');
      assert.equal((await call('gina', 'GET', '/users')).status, 200);
    });

    it('deletes a user: memberships and group memberships go, their tokens stop working; refused while they hold incidents', async () => {
      await call('root', 'PUT', `/users/${id(14)}`, { username: 'hank', password: 'hank-password-1' });
      await call('adminA', 'PUT', `/accounts/${A}/users/${id(14)}`, { permissions: [] });
      const hank = await token('hank', 'hank-password-1');
      const incident = '30000000-0000-4000-8000-000000000014';
      assert.equal(
        (
          await call('adminA', 'PUT', `/accounts/${A}/incidents/${incident}`, {
            title: 't',
            ownerType: 'USER',
            ownerId: EDITOR_A,
            assigneeUserId: id(14),
          })
        ).status,
        201,
      );
      await refused(call('root', 'DELETE', `/users/${id(14)}`), 400, `User ${id(14)} still owns or is assigned 1 incidents.`);
      assert.equal((await call('adminA', 'DELETE', `/accounts/${A}/incidents/${incident}`)).status, 204);
      assert.equal((await call('root', 'DELETE', `/users/${id(14)}`)).status, 204);
      await refused(call('root', 'DELETE', `/users/${id(14)}`), 404, `User ${id(14)} does not exist.`);
      const members = (await call('adminA', 'GET', `/accounts/${A}/users`)).body.map((m: Body) => m.userId);
      assert.ok(!members.includes(id(14)));
      // The deleted user's session no longer authenticates (the directory revision ends the cached permissions, decision 0049).
      let status = 0;
      for (let i = 0; i < 40 && status !== 401; i++) {
        status = (await node.request('GET', '/whoami', { token: hank })).status;
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401);
    });
  });

  describe('passwords', () => {
    it('an admin sets a password; the old one stops working, existing sessions stay valid until they expire', async () => {
      await call('root', 'PUT', `/users/${id(20)}`, { username: 'ivy', password: 'ivy-password-1' });
      const before = await token('ivy', 'ivy-password-1');
      await refused(
        call('root', 'PUT', `/users/${id(20)}/password`, { password: 'short' }),
        400,
        'The password must be at least 12 characters long.',
      );
      assert.equal((await call('root', 'PUT', `/users/${id(20)}/password`, { password: 'ivy-new-password' })).status, 204);
      assert.equal(
        (await node.request('POST', '/auth/token', { body: { username: 'ivy', password: 'ivy-password-1' } })).status,
        401,
      );
      assert.equal(
        (await node.request('POST', '/auth/token', { body: { username: 'ivy', password: 'ivy-new-password' } })).status,
        200,
      );
      assert.equal((await node.request('GET', '/whoami', { token: before })).status, 200);
      await refused(
        call('root', 'PUT', `/users/${id(98)}/password`, { password: 'long-enough-pw' }),
        404,
        `User ${id(98)} does not exist.`,
      );
    });

    it('a user changes their own with the current password', async () => {
      await call('root', 'PUT', `/users/${id(21)}`, { username: 'jack', password: 'jack-password-1' });
      const jack = await token('jack', 'jack-password-1');
      const change = (body: unknown) => node.request('PUT', '/whoami/password', { token: jack, body });
      const wrong = await change({ currentPassword: 'nope', password: 'jack-new-password' });
      assert.equal(wrong.status, 400);
      assert.equal(((await wrong.json()) as Body).message, 'The current password is wrong.');
      const short = await change({ currentPassword: 'jack-password-1', password: 'short' });
      assert.equal(short.status, 400);
      assert.equal((await change({ CurrentPassword: 'jack-password-1', Password: 'jack-new-password' })).status, 204);
      // Guessing the current password is throttled like sign-in (LoginThrottle): refused with 429 soon after 5 failures.
      let last = 0;
      for (let i = 0; i < 7 && last !== 429; i++)
        last = (await change({ currentPassword: `guess-${i}`, password: 'jack-other-password' })).status;
      assert.equal(last, 429);
      assert.equal(
        (await node.request('POST', '/auth/token', { body: { username: 'jack', password: 'jack-new-password' } })).status,
        200,
      );
    });

    it('a scoped token cannot change a password', async () => {
      const pat = await node.request('POST', '/auth/pat-token', {
        token: await token('adminA'),
        body: { expiration: null, accounts: [{ accountId: A, inflow: { schemas: [{ schema: '*' }] } }] },
      });
      const scoped = ((await pat.json()) as Body).token;
      const res = await node.request('PUT', '/whoami/password', {
        token: scoped,
        body: { currentPassword: pw('adminA'), password: 'x'.repeat(20) },
      });
      assert.equal(res.status, 403);
    });
  });

  describe('accounts', () => {
    it('lists every account for a global admin and only their own for others', async () => {
      const all = await call('root', 'GET', '/accounts');
      assert.deepEqual(
        all.body.map((a: Body) => a.accountName),
        ['alpha', 'beta'],
      );
      const mine = await call('editorA', 'GET', '/accounts');
      assert.deepEqual(
        mine.body.map((a: Body) => a.accountId),
        [A],
      );
    });

    it('creates (201) and renames (200); duplicate names and non-admins are refused', async () => {
      const C = 'c0000000-0000-4000-8000-00000000000c';
      assert.equal((await call('root', 'PUT', `/accounts/${C}`, { AccountName: 'gamma' })).status, 201);
      const renamed = await call('root', 'PUT', `/accounts/${C}`, { accountName: 'gamma-2' });
      assert.equal(renamed.status, 200);
      assert.equal(renamed.body.accountName, 'gamma-2');
      await refused(
        call('root', 'PUT', `/accounts/${C}`, { accountName: 'alpha' }),
        409,
        'The account name alpha is already taken.',
      );
      await refused(call('root', 'PUT', '/accounts/xyz', { accountName: 'q' }), 400, 'The account id must be a GUID.');
      await refused(call('root', 'PUT', `/accounts/${C}`, {}), 400, /accountName/);
      await refused(call('adminA', 'PUT', `/accounts/${A}`, { accountName: 'mine' }), 403, 'No permission.');
      await refused(call('adminA', 'DELETE', `/accounts/${A}`), 403, 'No permission.');
    });

    it('deletes an account: refused while incidents, groups or stored data remain; then removes memberships and settings', async () => {
      const D = 'd0000000-0000-4000-8000-00000000000d';
      await call('root', 'PUT', `/accounts/${D}`, { accountName: 'delta' });
      await call('root', 'PUT', `/accounts/${D}/users/${EDITOR_A}`, { permissions: ['Service.Incident.Editor'] });
      await call('root', 'PUT', `/accounts/${D}/settings/Service.Dashboards.Default`, { value: 'home' });
      const group = '20000000-0000-4000-8000-0000000000d1';
      const incident = '30000000-0000-4000-8000-0000000000d1';
      await call('root', 'PUT', `/accounts/${D}/groups/${group}`, { name: 'ops' });
      await call('root', 'PUT', `/accounts/${D}/incidents/${incident}`, { title: 't', ownerType: 'GROUP', ownerId: group });
      await refused(
        call('root', 'DELETE', `/accounts/${D}`),
        400,
        `Account ${D} still has 1 incidents, 1 groups; delete them first.`,
      );
      await call('root', 'DELETE', `/accounts/${D}/incidents/${incident}`);
      await call('root', 'DELETE', `/accounts/${D}/groups/${group}`);
      const E = 'e0000000-0000-4000-8000-00000000000e';
      await call('root', 'PUT', `/accounts/${E}`, { accountName: 'epsilon' });
      const push = await call('root', 'PUT', `/inflow/${E}`, [
        { schema: 'app.logs', timestamp: new Date().toISOString(), data: { m: 'x' } },
      ]);
      assert.equal(push.status, 200);
      await refused(
        call('root', 'DELETE', `/accounts/${E}`),
        400,
        `Account ${E} still has stored data in 1 schemas; it cannot be deleted while it holds data.`,
      );
      assert.equal((await call('root', 'DELETE', `/accounts/${D}`)).status, 204);
      await refused(call('root', 'DELETE', `/accounts/${D}`), 404, `Account ${D} does not exist.`);
      const editorAccounts = await call('editorA', 'GET', `/users/${EDITOR_A}/accounts`);
      assert.deepEqual(
        editorAccounts.body.map((a: Body) => a.accountId),
        [A],
      );
      // Re-created with the same id, nothing of the old account comes back.
      await call('root', 'PUT', `/accounts/${D}`, { accountName: 'delta' });
      assert.deepEqual((await call('root', 'GET', `/accounts/${D}/users`)).body, []);
      const settings = await call('root', 'GET', `/accounts/${D}/settings`);
      assert.equal(JSON.stringify(settings.body).includes('home'), false);
    });
  });

  describe('members (account admin)', () => {
    it('adds a member with no permissions (201), changes permissions (200) and lists them', async () => {
      await call('root', 'PUT', `/users/${id(30)}`, { username: 'kim', password: 'kim-password-1' });
      const added = await call('adminA', 'PUT', `/accounts/${A}/users/${id(30)}`, {});
      assert.equal(added.status, 201);
      assert.deepEqual(added.body, { accountId: A, userId: id(30), permissions: [] });
      const kim = await call('kim', 'GET', `/users/${id(30)}/accounts`);
      assert.deepEqual(kim.body, [{ accountId: A, accountName: 'alpha', permissions: [] }]);
      const changed = await call('adminA', 'PUT', `/accounts/${A}/users/${id(30)}`, {
        Permissions: ['Service.Incident.Viewer', 'Logship.Account.Admin'],
      });
      assert.equal(changed.status, 200);
      assert.deepEqual(changed.body.permissions, ['Service.Account.Admin', 'Service.Incident.Viewer']);
      const list = await call('adminA', 'GET', `/accounts/${A}/users`);
      const kimRow = list.body.find((m: Body) => m.userId === id(30));
      assert.deepEqual(kimRow.permissions, ['Service.Account.Admin', 'Service.Incident.Viewer']);
      assert.equal(kimRow.userName, 'kim');
      await call('adminA', 'PUT', `/accounts/${A}/users/${id(30)}`, { permissions: [] });
    });

    it('refuses unknown permissions, unknown users, non-GUIDs and another account', async () => {
      await refused(
        call('adminA', 'PUT', `/accounts/${A}/users/${EDITOR_A}`, { permissions: ['Service.Account.Owner'] }),
        400,
        'Unknown account permission: Service.Account.Owner.',
      );
      await refused(
        call('adminA', 'PUT', `/accounts/${A}/users/${id(97)}`, { permissions: [] }),
        404,
        `User ${id(97)} does not exist.`,
      );
      await refused(call('adminA', 'PUT', `/accounts/${A}/users/nope`, { permissions: [] }), 400, 'The user id must be a GUID.');
      for (const [method, body] of [
        ['GET', undefined],
        ['PUT', { permissions: [] }],
        ['DELETE', undefined],
      ] as const) {
        await refused(
          call('adminA', method, `/accounts/${B}/users${method === 'GET' ? '' : `/${EDITOR_A}`}`, body),
          403,
          'No permission.',
        );
      }
      await refused(call('editorA', 'GET', `/accounts/${A}/users`), 403, 'No permission.');
      await refused(call('root', 'GET', `/accounts/${id(96)}/users`), 404, `Account ${id(96)} does not exist.`);
    });

    it('removes a member with their group memberships; refused while they own or are assigned incidents', async () => {
      await call('root', 'PUT', `/users/${id(31)}`, { username: 'lou', password: 'lou-password-1' });
      await call('adminA', 'PUT', `/accounts/${A}/users/${id(31)}`, { permissions: ['Service.Incident.Viewer'] });
      const group = '20000000-0000-4000-8000-000000000031';
      await call('adminA', 'PUT', `/accounts/${A}/groups/${group}`, { name: 'lou-group' });
      assert.equal((await call('adminA', 'PUT', `/accounts/${A}/groups/${group}/members/${id(31)}`)).status, 201);
      const i1 = '30000000-0000-4000-8000-000000000031';
      const i2 = '30000000-0000-4000-8000-000000000032';
      await call('adminA', 'PUT', `/accounts/${A}/incidents/${i1}`, { title: 'a', ownerType: 'USER', ownerId: id(31) });
      await call('adminA', 'PUT', `/accounts/${A}/incidents/${i2}`, {
        title: 'b',
        ownerType: 'GROUP',
        ownerId: group,
        assigneeUserId: id(31),
      });
      await refused(
        call('adminA', 'DELETE', `/accounts/${A}/users/${id(31)}`),
        400,
        `User ${id(31)} still owns or is assigned 2 incidents of this account.`,
      );
      await call('adminA', 'DELETE', `/accounts/${A}/incidents/${i1}`);
      await call('adminA', 'DELETE', `/accounts/${A}/incidents/${i2}`);
      assert.equal((await call('adminA', 'DELETE', `/accounts/${A}/users/${id(31)}`)).status, 204);
      assert.deepEqual((await call('adminA', 'GET', `/accounts/${A}/groups/${group}/members`)).body, []);
      assert.deepEqual((await call('lou', 'GET', `/users/${id(31)}/accounts`, undefined)).body, []);
      await refused(
        call('adminA', 'DELETE', `/accounts/${A}/users/${id(31)}`),
        404,
        `User ${id(31)} is not a member of this account.`,
      );
    });
  });

  describe('schema.users tables', () => {
    it('list the members of the queried account and their permissions there', async () => {
      const q = async (who: string, account: string, query: string) => call(who, 'POST', `/search/${account}/kusto`, { query });
      const users = await q('editorA', A, 'schema.users | project UserName, Email | order by UserName asc');
      assert.equal(users.status, 200, JSON.stringify(users.body));
      const names = users.body.results.map((r: Body) => r.UserName);
      assert.ok(names.includes('adminA') && names.includes('editorA'));
      assert.ok(!names.includes('adminB') && !names.includes('root'), names.join());
      assert.deepEqual(users.body.header, ['UserName', 'Email']);
      const perms = await q('editorA', A, `schema.users.permissions | where UserName == 'editorA'`);
      assert.deepEqual(perms.body.results, [
        { UserId: EDITOR_A, UserName: 'editorA', AccountId: A, Permission: 'Service.Incident.Editor' },
      ]);
      const other = await q('adminB', B, 'schema.users | project UserName');
      assert.deepEqual(
        other.body.results.map((r: Body) => r.UserName),
        ['adminB'],
      );
    });
  });

  it('describes every new route in the OpenAPI document with its response schema', async () => {
    const doc = (await call(undefined, 'GET', '/openapi.json')).body;
    const expect: [string, string, string][] = [
      ['get', '/users', '200'],
      ['get', '/users/{userId}', '200'],
      ['put', '/users/{userId}', '201'],
      ['get', '/accounts', '200'],
      ['put', '/accounts/{accountId}', '201'],
      ['get', '/accounts/{accountId}/users', '200'],
      ['put', '/accounts/{accountId}/users/{userId}', '200'],
    ];
    for (const [method, path, status] of expect) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path}`);
      assert.ok(op.responses[status].content['application/json'].schema, `${method} ${path} ${status}`);
    }
    for (const [method, path] of [
      ['delete', '/users/{userId}'],
      ['put', '/users/{userId}/password'],
      ['put', '/whoami/password'],
      ['delete', '/accounts/{accountId}'],
      ['delete', '/accounts/{accountId}/users/{userId}'],
    ])
      assert.ok(doc.paths[path]?.[method]?.responses['204'], `${method} ${path}`);
  });
});
