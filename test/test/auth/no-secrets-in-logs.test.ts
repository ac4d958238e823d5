import assert from 'node:assert/strict';
import { startNodeProcess } from '@strata/deploy/testing';

/**
 * Runs a real node at trace level as its own process, signs in with a wrong and a right password,
 * uses the token, and checks that neither the password, the token, the signing key nor a stack
 * trace reaches any log line or response.
 */
describe('no secrets in logs or responses', function () {
  this.timeout(60_000);
  it('keeps passwords, tokens, signing keys and stack traces out of logs and responses', async () => {
    const password = 'Sup3r-Secret-Password-42';
    const signingKey = 'signing-key-that-must-never-be-logged-0123456789';
    const node = await startNodeProcess({
      log: { level: 'trace' },
      database: { enable: true, endpoint: '127.0.0.1:0' },
      backend: { enable: true, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 },
      gateway: { enable: true, host: '127.0.0.1', port: 0 },
      ops: { enable: false },
      auth: { jwt: { signingKey } },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: '00000000-0000-0000-0000-000000000000', accountName: 'default' }],
        users: [
          {
            userId: '00000000-0000-0000-0000-00000000cafe',
            username: 'admin',
            password,
            defaultGlobalPermissions: ['Service.Global.Admin'],
          },
        ],
      },
    });
    const responses: string[] = [];
    let token = '';
    let logs = '';
    try {
      token = await node.signIn('admin', password);
      const wrong = await fetch(`${node.baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: `${password}x` }),
      });
      assert.equal(wrong.status, 401);
      responses.push(await wrong.text());
      for (const p of ['/whoami', '/users/00000000-0000-0000-0000-00000000cafe/accounts', '/nothing-here']) {
        const res = await fetch(node.baseUrl + p, { headers: { authorization: `Bearer ${token}` } });
        responses.push(await res.text());
      }
      const bad = await fetch(`${node.baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{not json',
      });
      responses.push(await bad.text());
    } finally {
      logs = node.output();
      await node.stop();
    }
    assert.ok(token.length > 20);
    const everything = logs + responses.join('\n');
    assert.ok(!everything.includes(password), 'password leaked');
    assert.ok(!everything.includes(signingKey), 'signing key leaked');
    assert.ok(!logs.includes(token), 'token leaked into logs');
    assert.ok(!responses.some((r) => /\n\s+at /.test(r)), 'stack trace in a response');
    assert.ok(!/"stack"|\\n\s+at /.test(logs), 'stack trace in a log line');
    for (const r of responses) if (r.startsWith('{"message"')) assert.equal(JSON.parse(r).stackTrace, null);
  });
});
