import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { STRATA_BIN as STRATA, startNodeProcess } from '../src/testing/node-process.js';

/** Runs the strata CLI as a real process; bounded by `timeoutMs`. */
function runCli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 20_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [STRATA, ...args], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('strata CLI', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'strata-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a bad config with exit code 2 and lists every problem', async () => {
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(
      file,
      ['gateway:', '  enable: true', '  port: "high"', 'backend:', '  enable: yes-please', 'colour: blue', ''].join('\n'),
    );
    const { code, stderr } = await runCli(['start', '--config', file]);
    assert.equal(code, 2);
    assert.match(stderr, /gateway\.port: /);
    assert.match(stderr, /backend\.enable: /);
    assert.match(stderr, /colour: unknown key/);
    assert.match(stderr, /auth\.jwt\.signingKey: is required when gateway\.enable is true/);
  });

  it('check-config accepts a valid file and applies STRATA_* overrides', async () => {
    const file = path.join(dir, 'good.json');
    writeFileSync(file, JSON.stringify({ database: { enable: true } }));
    assert.equal((await runCli(['check-config', '--config', file])).code, 0);
    const bad = await runCli(['check-config', '--config', file], { STRATA_DATABASE_ENDPOINT: 'nowhere' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /database\.endpoint: must be host:port/);
  });

  it('tls generate writes a CA and one certificate per role, and keeps the CA on a second run (rotation)', async () => {
    const out = path.join(dir, 'tls');
    const first = await runCli(['tls', 'generate', '--out', out, '--days', '30']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /created a new CA/);
    const ca = new X509Certificate(readFileSync(path.join(out, 'ca.crt')));
    const roles: Record<string, string> = {};
    for (const role of ['database', 'backend', 'gateway']) {
      const cert = new X509Certificate(readFileSync(path.join(out, `${role}.crt`)));
      assert.ok(cert.verify(ca.publicKey), `${role} certificate signed by the CA`);
      assert.equal(cert.subjectAltName, `DNS:${role}.role.strata`);
      assert.equal(statSync(path.join(out, `${role}.key`)).mode & 0o777, 0o600);
      roles[role] = cert.fingerprint256;
    }
    const second = await runCli(['tls', 'generate', '--out', out]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /kept the existing CA/);
    assert.equal(new X509Certificate(readFileSync(path.join(out, 'ca.crt'))).fingerprint256, ca.fingerprint256);
    const rotated = new X509Certificate(readFileSync(path.join(out, 'gateway.crt')));
    assert.notEqual(rotated.fingerprint256, roles.gateway);
    assert.ok(rotated.verify(ca.publicKey));
    const bad = await runCli(['tls', 'generate']);
    assert.equal(bad.code, 2);
  });

  it('prints usage and exits 2 for an unknown command', async () => {
    const { code, stderr } = await runCli(['launch']);
    assert.equal(code, 2);
    assert.match(stderr, /unknown command: launch/);
  });

  it('starts from a config file, serves /healthz and /readyz, and stops cleanly on SIGTERM', async () => {
    const password = 'pw-123456';
    const node = await startNodeProcess({
      database: { enable: true, endpoint: '127.0.0.1:0' },
      backend: { enable: true, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 },
      ops: { enable: true, host: '127.0.0.1', port: 0 },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: '00000000-0000-0000-0000-000000000000', accountName: 'default' }],
        users: [{ userId: '00000000-0000-0000-0000-00000000cafe', username: 'admin', password }],
      },
    });
    let code: number | null = null;
    try {
      const ops = `http://127.0.0.1:${node.opsPort}`;
      assert.equal((await fetch(`${ops}/healthz`)).status, 200);
      let ready: { ready: boolean; roles: { role: string; detail: string }[] } | undefined;
      for (let i = 0; i < 100; i++) {
        const res = await fetch(`${ops}/readyz`);
        ready = (await res.json()) as typeof ready;
        if (res.status === 200 && ready!.roles[0]!.detail.startsWith('leader')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(
        ready!.roles.map((r) => r.role),
        ['database', 'backend'],
      );
      assert.match(await (await fetch(`${ops}/metrics`)).text(), /strata_process_/);
      // Every log line is JSON with role and component.
      for (const line of node
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))) {
        const parsed = JSON.parse(line);
        assert.ok(parsed.role && parsed.component, line);
      }
      // The provisioned password is stored hashed: the database file never holds it in clear.
      const db = readFileSync(path.join(node.dir, 'database', 'strata.duckdb'));
      assert.ok(db.length > 0 && !db.includes(password));
    } finally {
      code = await node.stop('SIGTERM');
    }
    assert.equal(code, 0);
  });
});
