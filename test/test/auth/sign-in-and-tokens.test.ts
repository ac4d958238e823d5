import assert from 'node:assert/strict';
import { startTestNode, TEST_ACCOUNT_ID, type TestNode } from '@strata/deploy/testing';
import jwt from 'jsonwebtoken';

const ADMIN = {
  userId: '00000000-0000-0000-0000-0000000000ad',
  username: 'root',
  password: 'root-password-1',
  global: ['Service.Global.Admin'],
};
const VIEWER = {
  userId: '00000000-0000-0000-0000-0000000000b1',
  username: 'viewer',
  password: 'viewer-password-1',
  accounts: { default: ['Service.Incident.Viewer'] },
};
const INFLOWER = {
  userId: '00000000-0000-0000-0000-0000000000c1',
  username: 'inflower',
  password: 'inflower-password-1',
  accounts: { default: ['Service.Account.Inflow'] },
};

function claims(token: string): jwt.JwtPayload {
  return jwt.decode(token, { complete: true })!.payload as jwt.JwtPayload;
}

async function expectError(res: Response, status: number, message?: RegExp) {
  const text = await res.text();
  assert.equal(res.status, status, text);
  const body = JSON.parse(text);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.stackTrace, null);
  assert.ok(Array.isArray(body.errors));
  if (message) assert.match(body.message, message);
}

describe('sign-in, tokens and identity (HTTP)', () => {
  let node: TestNode;
  let adminToken: string;

  before(async () => {
    node = await startTestNode({ users: [ADMIN, VIEWER, INFLOWER] });
    adminToken = await node.signIn('root', 'root-password-1');
  });
  after(async () => node?.stop());

  it('issues an HS512 session token with exp, issuer and audience', () => {
    const decoded = jwt.decode(adminToken, { complete: true })!;
    assert.equal(decoded.header.alg, 'HS512');
    const c = decoded.payload as jwt.JwtPayload;
    assert.equal(c.sub, ADMIN.userId);
    assert.equal(c.iss, 'strata');
    assert.equal(c.aud, 'strata');
    assert.ok(typeof c.exp === 'number' && c.exp > Date.now() / 1000);
  });

  it('answers wrong credentials with 401 and the standard error body', async () => {
    await expectError(
      await node.request('POST', '/auth/token', { body: { username: 'root', password: 'nope' } }),
      401,
      /Invalid user name or password/,
    );
    await expectError(
      await node.request('POST', '/auth/token', { body: { username: 'ghost', password: 'nope' } }),
      401,
      /Invalid user name or password/,
    );
  });

  it('binds request keys case-insensitively', async () => {
    const res = await node.request('POST', '/auth/token', { body: { UserName: 'viewer', PASSWORD: 'viewer-password-1' } });
    assert.equal(res.status, 200);
  });

  it('slows down repeated failures for one user name with 429 and Retry-After', async () => {
    let last: Response | undefined;
    for (let i = 0; i < 7; i++)
      last = await node.request('POST', '/auth/token', { body: { username: 'inflower', password: `wrong-${i}` } });
    assert.equal(last!.status, 429);
    assert.ok(Number(last!.headers.get('retry-after')) >= 1);
    // Even the right password waits out the back-off; other users are unaffected.
    assert.equal(
      (await node.request('POST', '/auth/token', { body: { username: 'inflower', password: 'inflower-password-1' } })).status,
      429,
    );
    assert.equal(
      (await node.request('POST', '/auth/token', { body: { username: 'viewer', password: 'viewer-password-1' } })).status,
      200,
    );
  });

  it('refuses tampered, alg:none, wrong-key and expired tokens with 401', async () => {
    const [h, p, s] = adminToken.split('.');
    const payload = JSON.parse(Buffer.from(p!, 'base64url').toString());
    const tampered = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: VIEWER.userId })).toString('base64url')}.${s}`;
    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${p}.`;
    const wrongKey = jwt.sign({ typ: 'session' }, 'x'.repeat(64), {
      algorithm: 'HS512',
      subject: ADMIN.userId,
      issuer: 'strata',
      audience: 'strata',
      expiresIn: 600,
    });
    const hs256 = jwt.sign({ typ: 'session' }, 'x'.repeat(64), {
      algorithm: 'HS256',
      subject: ADMIN.userId,
      issuer: 'strata',
      audience: 'strata',
      expiresIn: 600,
    });
    for (const token of [tampered, none, wrongKey, hs256, 'garbage']) {
      await expectError(await node.request('GET', '/whoami', { token }), 401, /invalid or expired/);
    }
    await expectError(await node.request('GET', '/whoami'), 401, /Authentication required/);
  });

  it('refuses an expired token', async () => {
    // Sign with the node's own key by exchanging through a long-lived token that expires in 1 s.
    const res = await node.request('POST', '/auth/pat-token', {
      token: adminToken,
      body: {
        expiration: new Date(Date.now() + 1500).toISOString(),
        accounts: [{ accountId: TEST_ACCOUNT_ID, inflow: { schemas: [{ schema: '*' }] } }],
      },
    });
    assert.equal(res.status, 200);
    const { token } = (await res.json()) as { token: string };
    assert.equal((await node.request('GET', '/whoami', { token })).status, 200);
    await new Promise((r) => setTimeout(r, 2600));
    await expectError(await node.request('GET', '/whoami', { token }), 401);
  });

  it('answers /whoami and the user accounts list', async () => {
    const token = await node.signIn('viewer', 'viewer-password-1');
    const who = (await (await node.request('GET', '/whoami', { token })).json()) as Record<string, string>;
    assert.deepEqual(
      { userId: who.userId, userName: who.userName, email: who.email },
      { userId: VIEWER.userId, userName: 'viewer', email: 'viewer@example.test' },
    );
    const accounts = await (await node.request('GET', `/users/${VIEWER.userId}/accounts`, { token })).json();
    assert.deepEqual(accounts, [
      { accountId: TEST_ACCOUNT_ID, accountName: 'default', permissions: ['Service.Incident.Viewer'] },
    ]);
    await expectError(await node.request('GET', `/users/${ADMIN.userId}/accounts`, { token }), 403, /No permission/);
    const all = (await (
      await node.request('GET', `/users/${ADMIN.userId}/accounts?allIfAdmin=true`, { token: adminToken })
    ).json()) as { accountId: string }[];
    assert.deepEqual(
      all.map((a: { accountId: string }) => a.accountId),
      [TEST_ACCOUNT_ID],
    );
  });

  describe('long-lived tokens', () => {
    const body = (expiration: string | null, schemas = ['*']) => ({
      expiration,
      accounts: [{ accountId: TEST_ACCOUNT_ID, inflow: { schemas: schemas.map((schema) => ({ schema })) } }],
    });

    it('refuses a past expiration with 400', async () => {
      await expectError(
        await node.request('POST', '/auth/pat-token', {
          token: adminToken,
          body: body(new Date(Date.now() - 60_000).toISOString()),
        }),
        400,
        /expiration must be in the future/,
      );
    });

    it('creates a token without expiry for null, carrying its scope', async () => {
      const res = await node.request('POST', '/auth/pat-token', {
        token: adminToken,
        body: body(null, ['logs.*', 'metrics.cpu']),
      });
      assert.equal(res.status, 200);
      const c = claims(((await res.json()) as { token: string }).token);
      assert.equal(c.exp, undefined);
      assert.equal(c.typ, 'pat');
      assert.deepEqual(c.scope.accounts[0].inflow.schemas, ['logs.*', 'metrics.cpu']);
    });

    it('refuses malformed schema patterns and missing accounts', async () => {
      await expectError(await node.request('POST', '/auth/pat-token', { token: adminToken, body: body(null, ['a b']) }), 400);
      await expectError(
        await node.request('POST', '/auth/pat-token', { token: adminToken, body: { expiration: null, accounts: [] } }),
        400,
      );
    });

    it('never grants more than the creator holds', async () => {
      const viewer = await node.signIn('viewer', 'viewer-password-1');
      await expectError(
        await node.request('POST', '/auth/pat-token', { token: viewer, body: body(null) }),
        403,
        /No permission to grant inflow/,
      );
      const inflower = await node.request('POST', '/auth/pat-token', {
        token: await node.signIn('viewer', 'viewer-password-1'),
        body: {
          expiration: null,
          accounts: [{ accountId: TEST_ACCOUNT_ID, inflow: { schemas: [] }, query: { schemas: [{ schema: '*' }] } }],
        },
      });
      assert.equal(inflower.status, 200, 'a viewer may grant query on its account');
    });

    it('a long-lived token cannot create tokens, and exchanges for a scoped session token', async () => {
      const pat = (
        (await (await node.request('POST', '/auth/pat-token', { token: adminToken, body: body(null, ['logs.*']) })).json()) as {
          token: string;
        }
      ).token;
      await expectError(await node.request('POST', '/auth/pat-token', { token: pat, body: body(null) }), 403);
      const exchanged = await node.request('POST', '/auth/pat-token', { token: pat });
      assert.equal(exchanged.status, 200);
      const session = ((await exchanged.json()) as { token: string }).token;
      const c = claims(session);
      assert.equal(c.typ, 'session');
      assert.deepEqual(c.scope.accounts[0].inflow.schemas, ['logs.*'], 'the exchange keeps the scope');
      // A scoped session may not do what its scope does not name: e.g. read system settings.
      assert.equal((await node.request('GET', '/whoami', { token: session })).status, 200);
    });

    it('refuses an exchange with a session token', async () => {
      await expectError(await node.request('POST', '/auth/pat-token', { token: adminToken }), 400);
    });
  });

  it('serves the OpenAPI document of every route', async () => {
    const doc = (await (await node.request('GET', '/openapi.json')).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/auth/token'].post);
    assert.ok(doc.paths['/users/{userId}/accounts'].get);
  });

  it('limits request bodies with 413', async () => {
    const res = await node.request('POST', '/auth/token', { body: { username: 'x'.repeat(70 * 1024 * 1024), password: 'y' } });
    await expectError(res, 413, /larger than the limit/);
  });
});
