import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type EtcdServer, freePort, startEtcd } from '@strata/common/testing';
import { generateTlsFiles } from '@strata/deploy';
import { type NodeProcess, startNodeProcess } from '@strata/deploy/testing';

/**
 * A cluster as an operator deploys it without Helm: `strata tls generate` writes a CA and one
 * certificate per role, and each role runs in its own process with only its own certificate
 * (internalTls.caFile/certFile/keyFile). Sign-in, ingest and a query cross every role boundary.
 * A process given another role's certificate is refused by its peers.
 */
describe('cluster: internal TLS from files, one certificate per role', function () {
  this.timeout(120_000);
  let etcd: EtcdServer | undefined;
  const procs: NodeProcess[] = [];
  const tls = mkdtempSync(path.join(tmpdir(), 'strata-tls-files-'));
  const ACCOUNT = '00000000-0000-0000-0000-000000000000';
  const password = 'tls-files-password-1';

  const identity = (role: string) => ({
    caFile: path.join(tls, 'ca.crt'),
    certFile: path.join(tls, `${role}.crt`),
    keyFile: path.join(tls, `${role}.key`),
  });

  before(async () => {
    generateTlsFiles(tls, 30);
    etcd = await startEtcd();
  });
  after(async () => {
    for (const p of procs.reverse()) await p.stop('SIGKILL').catch(() => undefined);
    await etcd?.stop();
    rmSync(tls, { recursive: true, force: true });
  });

  it('serves sign-in, ingest and queries across separate role processes', async () => {
    const base = {
      log: { level: 'info' },
      ops: { enable: false },
      etcd: { endpoints: [etcd!.endpoint], prefix: `/strata-tls-${process.pid}` },
      auth: { jwt: { signingKey: 'k'.repeat(48) } },
    };
    procs.push(
      await startNodeProcess({
        ...base,
        internalTls: identity('database'),
        database: { enable: true, endpoint: `127.0.0.1:${await freePort()}` },
        setupService: {
          enable: true,
          provision: true,
          accounts: [{ accountId: ACCOUNT, accountName: 'default' }],
          users: [
            {
              userId: '00000000-0000-0000-0000-00000000cafe',
              username: 'admin',
              password,
              defaultGlobalPermissions: ['Service.Global.Admin'],
              defaultAccounts: [{ accountName: 'default', userPermissions: ['Service.Account.Admin'] }],
            },
          ],
        },
      }),
    );
    procs.push(
      await startNodeProcess({
        ...base,
        internalTls: identity('backend'),
        backend: { enable: true, endpoint: `127.0.0.1:${await freePort()}`, minimumFreeSpaceBytes: 0 },
      }),
    );
    const gateway = await startNodeProcess({
      ...base,
      internalTls: identity('gateway'),
      gateway: { enable: true, host: '127.0.0.1', port: 0 },
    });
    procs.push(gateway);
    const token = await gateway.signIn('admin', password);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    let put: Response | undefined;
    for (let i = 0; i < 50; i++) {
      // 503 until the worker's registration reaches the gateway.
      put = await fetch(`${gateway.baseUrl}/inflow/${ACCOUNT}`, {
        method: 'PUT',
        headers,
        body: JSON.stringify([
          { schema: 'tls.check', timestamp: '2026-01-01T00:00:00Z', data: { n: 1 } },
          { schema: 'tls.check', timestamp: '2026-01-01T00:00:01Z', data: { n: 2 } },
        ]),
      });
      if (put.status !== 503) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(put?.status, 200, await put?.text());
    const query = await fetch(`${gateway.baseUrl}/search/${ACCOUNT}/kusto`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: 'tls.check | summarize total = sum(n)' }),
    });
    assert.equal(query.status, 200);
    const body = (await query.json()) as { results: { total: number }[] };
    assert.deepEqual(body.results, [{ total: 3 }]);
  });

  it('a gateway holding the backend certificate is refused by the master', async () => {
    const impostor = await startNodeProcess({
      log: { level: 'info' },
      ops: { enable: false },
      etcd: { endpoints: [etcd!.endpoint], prefix: `/strata-tls-${process.pid}` },
      auth: { jwt: { signingKey: 'k'.repeat(48) } },
      internalTls: identity('backend'),
      gateway: { enable: true, host: '127.0.0.1', port: 0 },
    });
    procs.push(impostor);
    const res = await fetch(`${impostor.baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { message: string }).message, /may be called only by the gateway role/);
  });
});
