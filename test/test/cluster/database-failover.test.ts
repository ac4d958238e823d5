import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createLogger, EtcdCoordinator, type LeaderInfo } from '@strata/common';
import { type EtcdServer, freePort, startEtcd, waitFor } from '@strata/common/testing';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const STRATA_CLI = path.join(REPO_ROOT, 'deploy/bin/strata.js');
const TTL_SECONDS = 3;

interface ReadyBody {
  ready: boolean;
  roles: { role: string; ready: boolean; detail: string }[];
}

/** One `strata start --config FILE` process with `database.enable`. */
class StrataProcess {
  readonly child: ChildProcess;
  /** Last lines of its output, shown when the test fails. */
  readonly tail: string[] = [];
  private exited = false;
  private readonly exit: Promise<void>;

  constructor(
    readonly name: string,
    readonly endpoint: string,
    readonly opsPort: number,
    configFile: string,
  ) {
    // STRATA_* variables of the test's own environment must not override the config file.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STRATA_')));
    this.child = spawn(process.execPath, [STRATA_CLI, 'start', '--config', configFile], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout!, this.child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        this.tail.push(line);
        if (this.tail.length > 40) this.tail.shift();
      });
    }
    this.exit = new Promise((resolve) =>
      this.child.once('exit', () => {
        this.exited = true;
        resolve();
      }),
    );
  }

  /** The database role's readiness detail ("leader (term N)" or "standby"), or undefined. */
  async databaseDetail(): Promise<string | undefined> {
    if (this.exited) throw new Error(`${this.name} exited:\n${this.tail.join('\n')}`);
    try {
      const res = await fetch(`http://127.0.0.1:${this.opsPort}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status !== 200) return undefined;
      const body = (await res.json()) as ReadyBody;
      return body.roles.find((r) => r.role === 'database')?.detail;
    } catch {
      return undefined;
    }
  }

  async kill(): Promise<void> {
    if (!this.exited) this.child.kill('SIGKILL');
    await this.exit;
  }
}

describe('cluster: database failover', function () {
  this.timeout(120_000);
  let etcd: EtcdServer | undefined;
  let observer: EtcdCoordinator | undefined;
  const processes: StrataProcess[] = [];
  const dirs: string[] = [];
  const prefix = `/strata-failover-${process.pid}`;

  async function startStrata(name: string): Promise<StrataProcess> {
    const dir = mkdtempSync(path.join(os.tmpdir(), `strata-${name}-`));
    dirs.push(dir);
    const endpoint = `127.0.0.1:${await freePort()}`;
    const opsPort = await freePort();
    const config = {
      dataRoot: path.join(dir, 'data'),
      log: { level: 'info' },
      database: { enable: true, endpoint },
      ops: { enable: true, host: '127.0.0.1', port: opsPort },
      etcd: { endpoints: [etcd!.endpoint], prefix, leaseTtlSeconds: TTL_SECONDS },
    };
    const configFile = path.join(dir, 'strata.json');
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const proc = new StrataProcess(name, endpoint, opsPort, configFile);
    processes.push(proc);
    return proc;
  }

  before(async () => {
    etcd = await startEtcd();
    observer = new EtcdCoordinator(
      { endpoints: [etcd.endpoint], prefix, leaseTtlSeconds: TTL_SECONDS },
      createLogger('test', { level: 'silent' }),
    );
  });

  after(async () => {
    await Promise.all(processes.map((p) => p.kill()));
    await observer?.close();
    await etcd?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  afterEach(function () {
    if (this.currentTest?.state === 'failed') {
      for (const p of processes) console.log(`--- output of ${p.name} ---\n${p.tail.join('\n')}`);
    }
  });

  it(`a standby takes over within the lease TTL + 2 s with a higher term when the leader is SIGKILLed`, async () => {
    const [a, b] = [await startStrata('a'), await startStrata('b')];
    const byEndpoint = new Map(processes.map((p) => [p.endpoint, p]));

    // Both up; one of them leads, in etcd and by its own account.
    const first = await waitFor(
      'a database leader',
      async () => {
        const leader = await observer!.getLeader('database');
        return leader && byEndpoint.has(leader.value) ? leader : undefined;
      },
      { timeoutMs: 60_000 },
    );
    const leader = byEndpoint.get(first.value)!;
    const standby = leader === a ? b : a;
    await waitFor(
      `${leader.name} reports leader`,
      async () => (await leader.databaseDetail()) === `leader (term ${first.term})`,
      {
        timeoutMs: 60_000,
      },
    );
    await waitFor(`${standby.name} reports standby`, async () => (await standby.databaseDetail()) === 'standby', {
      timeoutMs: 60_000,
    });

    const killedAt = Date.now();
    await leader.kill();

    let second: LeaderInfo | undefined;
    let etcdHandoverMs = 0;
    await waitFor(
      'the standby leading in etcd',
      async () => {
        const l = await observer!.getLeader('database');
        if (l?.value !== standby.endpoint) return undefined;
        second = l;
        etcdHandoverMs = Date.now() - killedAt;
        return l;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    assert.ok(second!.term > first.term, `term ${second!.term} must exceed ${first.term}`);
    await waitFor(
      `${standby.name} reports leader`,
      async () => (await standby.databaseDetail()) === `leader (term ${second!.term})`,
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    const takeoverMs = Date.now() - killedAt;
    console.log(
      `      failover: etcd handed over after ${etcdHandoverMs} ms, ${standby.name} serving as leader after ${takeoverMs} ms (TTL ${TTL_SECONDS} s)`,
    );
    assert.ok(
      takeoverMs <= (TTL_SECONDS + 2) * 1000,
      `the standby took ${takeoverMs} ms to lead; the bound is the lease TTL + 2 s = ${(TTL_SECONDS + 2) * 1000} ms`,
    );
  });
});
