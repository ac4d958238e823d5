import assert from 'node:assert/strict';
import { startTestNode, type TestNode } from '@strata/deploy/testing';

/**
 * Saved queries as logsh's TUI calls them (compatibility reference §1.6): list, create, delete per
 * account, with the permission running a query needs.
 */
const A = 'a0000000-0000-4000-8000-00000000000a';
const B = 'b0000000-0000-4000-8000-00000000000b';
const id = (n: number) => `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const USERS = [
  { userId: id(1), username: 'root', global: ['Service.Global.Admin'] },
  { userId: id(2), username: 'admin', accounts: { alpha: ['Service.Account.Admin'] } },
  { userId: id(3), username: 'viewer', accounts: { alpha: ['Service.Incident.Viewer'] } },
  { userId: id(4), username: 'querier', accounts: { alpha: ['Service.Account.Query'] } },
  { userId: id(5), username: 'pusher', accounts: { alpha: ['Service.Account.Inflow'] } },
].map((u) => ({ ...u, password: `${u.username}-password-1` }));

// biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
type Body = any;

describe('saved queries (HTTP, as logsh calls them)', function () {
  this.timeout(60_000);
  let node: TestNode;
  const tokens = new Map<string, string>();

  before(async () => {
    node = await startTestNode({ accounts: { [A]: 'alpha', [B]: 'beta' }, users: USERS });
    for (const u of USERS) tokens.set(u.username, await node.signIn(u.username, u.password));
  });
  after(async () => node?.stop());

  /** The headers logsh sends through its client builder. */
  const call = async (who: string, method: string, path: string, body?: unknown) => {
    const res = await node.request(method, path, {
      token: tokens.get(who),
      body,
      headers: { 'user-agent': 'logsh/0.9.0', 'x-ls-hostname': 'laptop' },
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
  };

  it('lists, creates and deletes; the list answers [{ queryId, name, query }]', async () => {
    assert.deepEqual((await call('viewer', 'GET', `/search/${A}/saved-queries`)).body, []);
    const created = await call('viewer', 'POST', `/search/${A}/saved-queries`, {
      name: 'errors',
      query: 'app.logs | where level == "Error"',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.match(created.body.queryId, /^[0-9a-f-]{36}$/);
    await call('querier', 'POST', `/search/${A}/saved-queries`, { Name: 'Counts', Query: 'app.logs | count' });
    const list = await call('querier', 'GET', `/search/${A}/saved-queries`);
    assert.deepEqual(
      list.body.map((q: Body) => [q.name, q.query, q.createdByUserId]),
      [
        ['Counts', 'app.logs | count', id(4)],
        ['errors', 'app.logs | where level == "Error"', id(3)],
      ],
    );
    assert.equal((await call('viewer', 'DELETE', `/search/${A}/saved-queries/${created.body.queryId}`)).status, 204);
    assert.deepEqual(
      (await call('viewer', 'GET', `/search/${A}/saved-queries`)).body.map((q: Body) => q.name),
      ['Counts'],
    );
  });

  it('needs the permission a query needs, on that account only', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['POST', { name: 'x', query: 'x' }],
    ] as const) {
      const pusher = await call('pusher', method, `/search/${A}/saved-queries`, body);
      assert.equal(pusher.status, 403);
      assert.equal(pusher.body.message, 'No permission.');
      assert.equal((await call('viewer', method, `/search/${B}/saved-queries`, body)).status, 403);
    }
  });

  it('deletes only for the creator, an account admin or a global admin', async () => {
    const mine = (await call('querier', 'POST', `/search/${A}/saved-queries`, { name: 'mine', query: 'T | take 1' })).body
      .queryId;
    const refused = await call('viewer', 'DELETE', `/search/${A}/saved-queries/${mine}`);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'Only the creator of a saved query or an account admin can delete it.');
    assert.equal((await call('admin', 'DELETE', `/search/${A}/saved-queries/${mine}`)).status, 204);
    const missing = await call('admin', 'DELETE', `/search/${A}/saved-queries/${mine}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.message, `Saved query ${mine} does not exist.`);
    assert.equal((await call('admin', 'DELETE', `/search/${A}/saved-queries/nope`)).status, 400);
  });

  it('refuses empty names and queries with the standard error body', async () => {
    const res = await call('viewer', 'POST', `/search/${A}/saved-queries`, { name: ' ', query: '' });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /name: name is required/);
    assert.match(res.body.message, /query: query is required/);
    assert.equal(res.body.stackTrace, null);
  });

  it('lets a token with a query scope list and save', async () => {
    const pat = await call('admin', 'POST', '/auth/pat-token', {
      expiration: null,
      accounts: [{ accountId: A, inflow: { schemas: [] }, query: { schemas: [{ schema: '*' }] } }],
    });
    tokens.set('scoped', pat.body.token);
    assert.equal((await call('scoped', 'POST', `/search/${A}/saved-queries`, { name: 'by token', query: 'T' })).status, 201);
    assert.equal((await call('scoped', 'GET', `/search/${A}/saved-queries`)).status, 200);
  });

  it('go with their account when it is deleted', async () => {
    const C = 'c0000000-0000-4000-8000-00000000000c';
    await call('root', 'PUT', `/accounts/${C}`, { accountName: 'gamma' });
    await call('root', 'POST', `/search/${C}/saved-queries`, { name: 'q', query: 'T' });
    assert.equal((await call('root', 'DELETE', `/accounts/${C}`)).status, 204);
    await call('root', 'PUT', `/accounts/${C}`, { accountName: 'gamma' });
    assert.deepEqual((await call('root', 'GET', `/search/${C}/saved-queries`)).body, []);
  });
});
