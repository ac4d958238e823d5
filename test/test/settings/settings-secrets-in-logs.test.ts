import assert from 'node:assert/strict';
import { startNodeProcess } from '@strata/deploy/testing';

const ACCOUNT = '00000000-0000-0000-0000-000000000000';

/**
 * Runs a real node at trace level as its own process, stores both mail passwords (valid and
 * rejected requests alike) and reads every settings endpoint: neither password may reach a log
 * line or a response.
 */
describe('settings: mail passwords stay out of logs and responses', function () {
  this.timeout(60_000);
  it('never logs nor returns a stored or rejected password', async () => {
    const adminPassword = 'admin-password-for-settings-1';
    const systemSecret = 'SysMail-Secret-8821';
    const accountSecret = 'AcctMail-Secret-4410';
    const node = await startNodeProcess({
      log: { level: 'trace' },
      database: { enable: true, endpoint: '127.0.0.1:0' },
      backend: { enable: true, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 },
      gateway: { enable: true, host: '127.0.0.1', port: 0 },
      ops: { enable: false },
      auth: { jwt: { signingKey: 'settings-secrets-test-signing-key-0123456789' } },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: ACCOUNT, accountName: 'default' }],
        users: [
          {
            userId: '00000000-0000-0000-0000-00000000cafe',
            username: 'admin',
            password: adminPassword,
            defaultGlobalPermissions: ['Service.Global.Admin'],
          },
        ],
      },
    });
    const responses: string[] = [];
    let logs = '';
    try {
      const base = node.baseUrl;
      const token = await node.signIn('admin', adminPassword);
      assert.ok(token, 'signed in');
      const call = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(base + p, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        responses.push(text);
        return res.status;
      };
      const pw = 'Service.Communication.Email.Password';
      assert.equal(await call('POST', '/settings', { settings: [{ key: pw, value: systemSecret }] }), 200);
      // Rejected batch carrying the password next to an invalid value.
      assert.equal(
        await call('POST', '/settings', {
          settings: [
            { key: pw, value: `${systemSecret}-2` },
            { key: 'Service.Search.Executor.Query.MaxConcurrent', value: 'x' },
          ],
        }),
        400,
      );
      assert.equal(await call('PUT', `/accounts/${ACCOUNT}/settings/${pw}`, { value: accountSecret }), 200);
      // Too long: rejected, and the message must not echo it.
      assert.equal(await call('PUT', `/accounts/${ACCOUNT}/settings/${pw}`, { value: accountSecret.repeat(300) }), 400);
      assert.equal(await call('GET', '/settings'), 200);
      assert.equal(await call('GET', `/accounts/${ACCOUNT}/settings`), 200);
      // Let a few executor-settings polls and their trace lines happen.
      await new Promise((r) => setTimeout(r, 2_500));
    } finally {
      logs = node.output();
      await node.stop();
    }
    for (const [where, text] of [
      ['logs', logs],
      ['responses', responses.join('\n')],
    ]) {
      assert.ok(!text.includes(systemSecret), `system mail password in ${where}`);
      assert.ok(!text.includes(accountSecret), `account mail password in ${where}`);
    }
    // The node did log at debug level (each request), so a leak would have shown up.
    assert.match(logs, /"level":"debug".*"path":"\/accounts\/[^"]+\/settings\/Service\.Communication\.Email\.Password"/);
  });
});
