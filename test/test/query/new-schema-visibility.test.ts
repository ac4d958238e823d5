import assert from 'node:assert/strict';
import { type EtcdServer, startEtcd } from '@strata/common/testing';
import { startTestNode, TEST_ACCOUNT_ID, type TestNode } from '@strata/deploy/testing';

/**
 * docs/api.md promises that a new schema or column is queryable as soon as its inflow request
 * answered 200. Two gateways share one master and worker through real etcd: each has cached the
 * account's schema catalog before the write; the writing gateway drops its stale cache, the other
 * re-plans a failing query against a fresh catalog. No waiting anywhere.
 */
const ADMIN = {
  userId: '00000000-0000-0000-0000-0000000000ad',
  username: 'root',
  password: 'root-password-1',
  global: ['Service.Global.Admin'],
};

describe('a new schema or column is queryable as soon as inflow answered 200 (HTTP, two gateways)', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;
  let full: TestNode;
  let gatewayOnly: TestNode;
  let tokenFull: string;
  let tokenOther: string;

  before(async () => {
    etcd = await startEtcd();
    const shared = { etcd: { endpoints: [etcd.endpoint], prefix: `/strata-visibility-${process.pid}` } };
    full = await startTestNode({ users: [ADMIN], config: shared });
    gatewayOnly = await startTestNode({ users: [], roles: { database: false, backend: false }, config: shared });
    tokenFull = await full.signIn('root', ADMIN.password);
    tokenOther = await gatewayOnly.signIn('root', ADMIN.password);
  });
  after(async () => {
    await gatewayOnly?.stop();
    await full?.stop();
    await etcd?.stop();
  });

  const push = async (schema: string, data: Record<string, unknown>) => {
    const res = await full.request('PUT', `/inflow/${TEST_ACCOUNT_ID}`, {
      token: tokenFull,
      body: [{ schema, timestamp: new Date().toISOString(), data }],
    });
    assert.equal(res.status, 200, await res.text());
  };
  const query = async (node: TestNode, token: string, text: string) => {
    const res = await node.request('POST', `/search/${TEST_ACCOUNT_ID}/kusto`, { token, body: { query: text } });
    const body = await res.text();
    assert.equal(res.status, 200, `${text}: ${body}`);
    return JSON.parse(body) as { header: string[]; results: Record<string, unknown>[] };
  };

  it('answers a query on a schema written a moment ago, on the writing gateway and on another', async () => {
    await push('visible.one', { x: 1 });
    // Both gateways now hold a catalog without `visible.two`.
    await query(full, tokenFull, 'visible.one | count');
    await query(gatewayOnly, tokenOther, 'visible.one | count');
    await push('visible.two', { y: 'a' });
    assert.deepEqual((await query(full, tokenFull, 'visible.two | project y')).results, [{ y: 'a' }]);
    assert.deepEqual((await query(gatewayOnly, tokenOther, 'visible.two | project y')).results, [{ y: 'a' }]);
    const schemas = (await (await full.request('GET', `/search/${TEST_ACCOUNT_ID}/schemas`, { token: tokenFull })).json()) as {
      name: string;
    }[];
    assert.ok(schemas.some((s) => s.name === 'visible.two'));
  });

  it('answers a query on a column added a moment ago, and lists it in the writing gateway at once', async () => {
    await query(full, tokenFull, 'visible.one | count');
    await query(gatewayOnly, tokenOther, 'visible.one | count');
    await push('visible.one', { x: 2, z: 'new' });
    assert.deepEqual((await query(full, tokenFull, 'visible.one | where z == "new" | project x')).results, [{ x: 2 }]);
    assert.deepEqual((await query(gatewayOnly, tokenOther, 'visible.one | where z == "new" | project x')).results, [{ x: 2 }]);
    // Not named by the query, still there: the writing gateway dropped its stale catalog.
    assert.ok((await query(full, tokenFull, 'visible.one | take 5')).header.includes('z'));
  });
});
