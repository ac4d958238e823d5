import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
const STRATA = path.resolve(path.dirname(require.resolve('@strata/deploy')), '../../bin/strata.js');

/**
 * Runs a real node at debug level, signs in with a wrong and a right password, uses the token, and
 * checks that neither the password, the token, the signing key nor a stack trace reaches any
 * log line or response.
 */
describe('no secrets in logs or responses', function () {
  this.timeout(60_000);
  it('keeps passwords, tokens, signing keys and stack traces out of logs and responses', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'strata-secrets-'));
    const password = 'Sup3r-Secret-Password-42';
    const signingKey = 'signing-key-that-must-never-be-logged-0123456789';
    const file = path.join(dir, 'node.json');
    writeFileSync(
      file,
      JSON.stringify({
        dataRoot: dir,
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
      }),
    );
    const child = spawn(process.execPath, [STRATA, 'start', '--config', file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let logs = '';
    child.stdout.on('data', (d) => {
      logs += d;
    });
    child.stderr.on('data', (d) => {
      logs += d;
    });
    const responses: string[] = [];
    let token = '';
    try {
      let port: number | undefined;
      for (let i = 0; i < 100 && !port; i++) {
        const m = /"port":(\d+),"msg":"gateway listening"/.exec(logs);
        if (m) port = Number(m[1]);
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.ok(port, logs);
      const base = `http://127.0.0.1:${port}`;
      const post = async (body: unknown) => {
        const res = await fetch(`${base}/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        responses.push(text);
        return { status: res.status, text };
      };
      assert.equal((await post({ username: 'admin', password: `${password}x` })).status, 401);
      let ok = { status: 0, text: '' };
      for (let i = 0; i < 50 && ok.status !== 200; i++) {
        ok = await post({ username: 'admin', password });
        if (ok.status !== 200) await new Promise((r) => setTimeout(r, 100));
      }
      token = JSON.parse(ok.text).token;
      for (const p of ['/whoami', '/users/00000000-0000-0000-0000-00000000cafe/accounts', '/nothing-here']) {
        const res = await fetch(base + p, { headers: { authorization: `Bearer ${token}` } });
        responses.push(await res.text());
      }
      const bad = await fetch(`${base}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{not json',
      });
      responses.push(await bad.text());
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
    assert.ok(token.length > 20);
    const everything = logs + responses.join('\n');
    assert.ok(!everything.includes(password), 'password leaked');
    assert.ok(!everything.includes(signingKey), 'signing key leaked');
    assert.ok(!logs.includes(token), 'token leaked into logs');
    assert.ok(!responses.some((r) => /\n\s+at /.test(r)), 'stack trace in a response');
    assert.ok(!/"stack"|\\n\s+at /.test(logs), 'stack trace in a log line');
    for (const r of responses.slice(1)) if (r.startsWith('{"message"')) assert.equal(JSON.parse(r).stackTrace, null);
  });
});
