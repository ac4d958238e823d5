/**
 * A purge job survives restarts of the worker and of the master in the middle: roles run as
 * separate Strata processes (in this test process, on real etcd) with their own data
 * directories; the worker is stopped and started again on its directory while the job runs, then
 * the master. Nothing matching is left, nothing else is lost.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfigObject } from '@strata/common';
import { type EtcdServer, startEtcd, testTlsDir } from '@strata/common/testing';
import { type RunningProcess, startProcess } from '@strata/deploy';
import type { WorkerHandle } from '@strata/worker';

const ACCOUNT = '00000000-0000-0000-0000-0000000000f1';
const PW = 'purge-restart-pw-1';

describe('cluster: a purge job survives a worker restart and a master restart', function () {
  this.timeout(180_000);
  let etcd: EtcdServer;
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-purge-restarts-'));
  const running = new Set<RunningProcess>();
  const signingKey = randomBytes(32).toString('hex');

  const start = async (name: string, roles: Record<string, unknown>): Promise<RunningProcess> => {
    const p = await startProcess(
      loadConfigObject(
        {
          dataRoot: path.join(dir, name),
          log: { level: 'warn' },
          ops: { enable: false },
          internalTls: { generateDir: testTlsDir() },
          etcd: { endpoints: [etcd.endpoint], prefix: `/purge-${process.pid}`, leaseTtlSeconds: 5 },
          auth: { jwt: { signingKey } },
          setupService: {
            enable: true,
            provision: true,
            accounts: [{ accountId: ACCOUNT, accountName: 'p' }],
            users: [
              {
                userId: '00000000-0000-0000-0000-0000000000f2',
                username: 'padmin',
                password: PW,
                defaultAccounts: [{ accountName: 'p', userPermissions: ['Service.Account.Admin'] }],
              },
            ],
          },
          ...roles,
        },
        {},
      ),
    );
    running.add(p);
    return p;
  };
  const stop = async (p: RunningProcess) => {
    running.delete(p);
    await p.stop();
  };

  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    for (const p of running) await p.stop().catch(() => undefined);
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes with exactly the matching rows removed', async () => {
    let master = await start('master', { database: { enable: true, endpoint: '127.0.0.1:0' } });
    const workerRoles = { backend: { enable: true, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 } };
    let worker = await start('worker', workerRoles);
    const gateway = await start('gateway', { gateway: { enable: true, host: '127.0.0.1', port: 0 } });
    const base = `http://127.0.0.1:${(gateway.roles[0] as unknown as { port: number }).port}`;
    const call = async (method: string, p: string, body?: unknown, token?: string) => {
      const res = await fetch(base + p, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json().catch(() => undefined)) as Record<string, unknown> };
    };
    let token = '';
    for (let i = 0; i < 100 && !token; i++) {
      const r = await call('POST', '/auth/token', { username: 'padmin', password: PW });
      if (r.status === 200) token = r.body.token as string;
      else await new Promise((res) => setTimeout(res, 200));
    }

    assert.ok(token, 'signed in');
    const storage = () => (worker.roles.find((r) => r.name === 'backend') as WorkerHandle).storage;
    // 24 segments of 10 rows: the job takes several steps (4 segments a step, one step a second).
    for (let s = 0; s < 24; s++) {
      const rows = Array.from({ length: 10 }, (_, i) => ({
        schema: 'audit',
        timestamp: new Date(Date.UTC(2025, 0, 1) + (s * 10 + i) * 1000).toISOString(),
        data: { n: s * 10 + i },
      }));
      let put = { status: 503 } as { status: number };
      for (let a = 0; a < 50 && put.status !== 200; a++) {
        put = await call('PUT', `/inflow/${ACCOUNT}`, rows, token);
        if (put.status !== 200) await new Promise((res) => setTimeout(res, 200));
      }
      assert.equal(put.status, 200);
      await storage().sealAll();
    }
    const count = async (q: string) => {
      for (let a = 0; a < 50; a++) {
        const r = await call('POST', `/search/${ACCOUNT}/kusto`, { query: q }, token);
        if (r.status === 200) return Number((r.body.results as { Count: number }[])[0]!.Count);
        await new Promise((res) => setTimeout(res, 200));
      }
      throw new Error(`query kept failing: ${q}`);
    };

    assert.equal(await count('audit | count'), 240);

    const started = await call('POST', `/accounts/${ACCOUNT}/purge`, { schema: 'audit', predicate: 'n % 3 == 0' }, token);
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const jobId = started.body.jobId as string;

    const job = async () => {
      for (let a = 0; a < 100; a++) {
        const r = await call('GET', `/accounts/${ACCOUNT}/purge/${jobId}`, undefined, token);
        if (r.status === 200) return r.body as { state: string; segmentsDone: number; rowsRemoved: number };
        await new Promise((res) => setTimeout(res, 200)); // no leader for a moment
      }
      throw new Error('the job cannot be read');
    };
    const waitFor = async (what: string, ok: (j: Awaited<ReturnType<typeof job>>) => boolean) => {
      for (let a = 0; a < 300; a++) {
        const j = await job();
        if (ok(j)) return j;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error(`not reached: ${what}`);
    };

    // The worker stops after the first step, and comes back on its data directory.
    await waitFor('a first step', (j) => j.segmentsDone > 0);
    await stop(worker);
    worker = await start('worker', workerRoles);
    // Then the master: another election, the same store (its file), the job goes on.
    await waitFor('more progress', (j) => j.segmentsDone >= 8 || j.state !== 'running');
    await stop(master);
    master = await start('master', { database: { enable: true, endpoint: '127.0.0.1:0' } });
    const done = await waitFor('the end of the job', (j) => j.state !== 'running');
    assert.equal(done.state, 'succeeded');
    assert.equal(await count('audit | where n % 3 == 0 | count'), 0);
    assert.equal(await count('audit | count'), 160);
    assert.equal(await count('audit | where n % 3 != 0 | summarize Count = dcount(n)'), 160);
  });
});
