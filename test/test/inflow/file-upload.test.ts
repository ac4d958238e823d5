import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startTestNode, TEST_ACCOUNT_ID, type TestNode } from '@strata/deploy/testing';

/**
 * logsh's file upload (compatibility reference §1.7 B): `POST /inflow/{accountId}/{schema}/{ext}`
 * for any extension. The delimiter comes from the extension, else the Content-Type, else the
 * first line (gateway/src/inflow/upload-format.ts); each case is checked by querying the rows back.
 */
const ADMIN = {
  userId: '00000000-0000-0000-0000-0000000000ad',
  username: 'root',
  password: 'root-password-1',
  global: ['Service.Global.Admin'],
};

describe('file upload for any extension (HTTP)', function () {
  this.timeout(60_000);
  let node: TestNode;
  let token: string;

  before(async () => {
    node = await startTestNode({ users: [ADMIN] });
    token = await node.signIn('root', ADMIN.password);
  });
  after(async () => node?.stop());

  const upload = (schema: string, ext: string, body: string | Buffer, headers: Record<string, string> = {}) =>
    fetch(`${node.baseUrl}/inflow/${TEST_ACCOUNT_ID}/${schema}/${ext}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'user-agent': 'logsh/0.9.0', ...headers },
      body,
    });
  const rows = async (schema: string) => {
    const res = await node.request('POST', `/search/${TEST_ACCOUNT_ID}/kusto`, {
      token,
      body: { query: `${schema} | project a, b | order by a asc` },
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return (JSON.parse(text) as { results: unknown[] }).results;
  };

  it('takes the delimiter from the Content-Type when the extension says nothing', async () => {
    const res = await upload('Files.Ct', 'txt', 'a\tb\n1\tx,y\n', { 'content-type': 'text/tab-separated-values' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { rows: 1 });
    assert.deepEqual(await rows('Files.Ct'), [{ a: 1, b: 'x,y' }]);
  });

  it('sniffs the first line of an octet-stream: a tab means TSV, otherwise CSV', async () => {
    assert.equal(
      (await upload('Files.Tab', 'log', 'a\tb\n2\tp,q\n', { 'content-type': 'application/octet-stream' })).status,
      200,
    );
    assert.deepEqual(await rows('Files.Tab'), [{ a: 2, b: 'p,q' }]);
    assert.equal(
      (await upload('Files.Comma', 'dat', 'a,b\n3,r\tt\n', { 'content-type': 'application/octet-stream' })).status,
      200,
    );
    assert.deepEqual(await rows('Files.Comma'), [{ a: 3, b: 'r\tt' }]);
  });

  it('sniffs after gzip decompression, and the extension wins over the Content-Type', async () => {
    const gz = gzipSync(Buffer.from('a\tb\n4\tu\n5\tv\n'));
    const res = await upload('Files.Gz', 'bin', gz, { 'content-type': 'application/octet-stream', 'content-encoding': 'gzip' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await rows('Files.Gz'), [
      { a: 4, b: 'u' },
      { a: 5, b: 'v' },
    ]);
    // `.CSV` (any case) is comma-separated even when the Content-Type claims TSV.
    assert.equal((await upload('Files.Ext', 'CSV', 'a,b\n6,w\n', { 'content-type': 'text/tab-separated-values' })).status, 200);
    assert.deepEqual(await rows('Files.Ext'), [{ a: 6, b: 'w' }]);
  });

  it('refuses JSON with a pointer to the JSON route, and keeps the token rules of CSV/TSV', async () => {
    const res = await upload('Files.Json', 'json', '[{"a":1}]\n', { 'content-type': 'application/octet-stream' });
    assert.equal(res.status, 400);
    assert.equal(
      ((await res.json()) as { message: string }).message,
      'The file looks like JSON; file uploads read CSV or TSV. Send JSON entries to PUT /inflow/{accountId}.',
    );
    const pat = await node.request('POST', '/auth/pat-token', {
      token,
      body: { expiration: null, accounts: [{ accountId: TEST_ACCOUNT_ID, inflow: { schemas: [{ schema: 'Files.*' }] } }] },
    });
    const scoped = ((await pat.json()) as { token: string }).token;
    const refused = await fetch(`${node.baseUrl}/inflow/${TEST_ACCOUNT_ID}/Files.Scoped/log`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scoped}` },
      body: 'a\n1\n',
    });
    assert.equal(refused.status, 403);
  });
});
