import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type EtcdServer, freePort, startEtcd, testTlsDir, waitFor } from '@strata/common/testing';
import { Etcd3 } from 'etcd3';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
export const STRATA_CLI = path.join(REPO_ROOT, 'deploy/bin/strata.js');

export const TTL_SECONDS = 3;
export const ACCOUNT = '00000000-0000-0000-0000-000000000000';
export const ADMIN = { userId: '00000000-0000-0000-0000-00000000cafe', username: 'admin', password: 'cluster-admin-password-1' };

/** Readiness of one role as the ops server reports it. */
export interface RoleReadiness {
  role: string;
  ready: boolean;
  detail: string;
}

/**
 * One `strata start --config FILE` process of a test cluster. Its data directory outlives the
 * process, so it can be killed (any signal) and started again on the same data.
 */
export class ClusterProcess {
  child: ChildProcess | undefined;
  /** Last lines of its output, shown when a test fails. */
  readonly tail: string[] = [];
  private exit: Promise<void> = Promise.resolve();
  private running = false;
  gatewayPort: number | undefined;
  /** Extra environment of the process (test fault points); changes apply at the next start. */
  env: Record<string, string> = {};

  constructor(
    readonly name: string,
    readonly dir: string,
    readonly opsPort: number,
    readonly config: Record<string, unknown>,
  ) {}

  get pid(): number {
    return this.child!.pid!;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.gatewayPort}`;
  }

  /** Starts the process and waits (bounded) until it says it started. */
  async start(): Promise<void> {
    const configFile = path.join(this.dir, 'strata.json');
    writeFileSync(configFile, JSON.stringify(this.config, null, 2));
    // STRATA_* variables of the test's own environment must not override the config file.
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('STRATA_'))),
      ...this.env,
    };
    const child = spawn(process.execPath, [STRATA_CLI, 'start', '--config', configFile], {
      cwd: REPO_ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.running = true;
    let started = false;
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        if (process.env.STRATA_TEST_DEBUG_LOG) appendFileSync(process.env.STRATA_TEST_DEBUG_LOG, `[${this.name}] ${line}\n`);
        this.tail.push(`[${this.name}] ${line}`);
        if (this.tail.length > 60) this.tail.shift();
        const port = /"port":(\d+),"msg":"gateway listening"/.exec(line);
        if (port) this.gatewayPort = Number(port[1]);
        if (line.includes('"msg":"strata process started"')) started = true;
      });
    }
    this.exit = new Promise((resolve) =>
      child.once('exit', () => {
        this.running = false;
        resolve();
      }),
    );
    const wantsGateway = (this.config.gateway as { enable?: boolean } | undefined)?.enable === true;
    await waitFor(
      `${this.name} started`,
      () => {
        if (!this.running) throw new Error(`${this.name} exited:\n${this.tail.join('\n')}`);
        return started && (!wantsGateway || this.gatewayPort !== undefined);
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
  }

  get alive(): boolean {
    return this.running;
  }

  /** Sends `signal` and, unless it only pauses or resumes, waits for the exit (bounded: SIGKILL). */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.child!.kill(signal);
    if (signal === 'SIGSTOP' || signal === 'SIGCONT') return;
    const timer = setTimeout(() => this.child?.kill('SIGKILL'), 20_000);
    await this.exit;
    clearTimeout(timer);
  }

  /** Every role's readiness, or undefined while the ops server does not answer. */
  async readiness(): Promise<RoleReadiness[] | undefined> {
    if (!this.running) return undefined;
    try {
      const res = await fetch(`http://127.0.0.1:${this.opsPort}/readyz`, { signal: AbortSignal.timeout(2_000) });
      const body = (await res.json()) as { roles: RoleReadiness[] };
      return body.roles;
    } catch {
      return undefined;
    }
  }

  async roleDetail(role: string): Promise<string | undefined> {
    return (await this.readiness())?.find((r) => r.role === role)?.detail;
  }
}

/**
 * A cluster for tests: a real etcd and any number of strata processes (one role or several each)
 * with their own data directories under one temp dir, all on loopback with lease TTL 3 s.
 */
export class TestCluster {
  readonly processes: ClusterProcess[] = [];
  readonly prefix = `/strata-cluster-${process.pid}-${Date.now()}`;
  private readonly signingKey = randomBytes(32).toString('hex');
  private constructor(
    readonly etcd: EtcdServer,
    readonly root: string,
    /** A raw etcd client for the test to look at (and break) the cluster's keys. */
    readonly raw: Etcd3,
  ) {}

  static async start(): Promise<TestCluster> {
    const etcd = await startEtcd();
    const root = mkdtempSync(path.join(os.tmpdir(), 'strata-cluster-'));
    return new TestCluster(etcd, root, new Etcd3({ hosts: [etcd.endpoint] }));
  }

  /**
   * Adds (and starts) a process running `roles`. `dataDir` defaults to its own directory; two
   * database processes given the same `dataDir` share the relational store like a shared volume.
   */
  async add(
    name: string,
    roles: { database?: boolean; backend?: boolean; gateway?: boolean },
    options: { dataDir?: string; config?: Record<string, Record<string, unknown>>; env?: Record<string, string> } = {},
    attempt = 1,
  ): Promise<ClusterProcess> {
    const dir = path.join(this.root, name);
    mkdirSync(dir, { recursive: true });
    const dataRoot = options.dataDir ?? path.join(dir, 'data');
    const opsPort = await freePort();
    const config: Record<string, unknown> = {
      dataRoot,
      log: { level: 'info' },
      database: {
        enable: roles.database === true,
        endpoint: `127.0.0.1:${await freePort()}`,
        dataPath: path.join(dataRoot, 'database'),
      },
      backend: {
        enable: roles.backend === true,
        endpoint: `127.0.0.1:${await freePort()}`,
        dataPath: path.join(dataRoot, 'backend'),
        minimumFreeSpaceBytes: 0,
      },
      gateway: { enable: roles.gateway === true, host: '127.0.0.1', port: 0 },
      ops: { enable: true, host: '127.0.0.1', port: opsPort },
      // Every process of the cluster trusts the test run's one CA (internal mutual TLS).
      internalTls: { generateDir: testTlsDir() },
      etcd: { endpoints: [this.etcd.endpoint], prefix: this.prefix, leaseTtlSeconds: TTL_SECONDS },
      auth: { jwt: { signingKey: this.signingKey } },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: ACCOUNT, accountName: 'default' }],
        users: [
          {
            ...ADMIN,
            firstname: 'A',
            lastname: 'Dmin',
            email: 'admin@example.test',
            defaultGlobalPermissions: ['Service.Global.Admin'],
            defaultAccounts: [{ accountName: 'default', userPermissions: ['Service.Account.Admin'] }],
          },
        ],
      },
    };
    for (const [section, values] of Object.entries(options.config ?? {})) {
      config[section] = { ...(config[section] as Record<string, unknown>), ...values };
    }
    const proc = new ClusterProcess(name, dir, opsPort, config);
    proc.env = { ...options.env };
    this.processes.push(proc);
    try {
      await proc.start();
    } catch (err) {
      this.processes.splice(this.processes.indexOf(proc), 1);
      // The ports come from freePort(): another process on this shared machine can take one before
      // the new process binds it. Its first start then fails at once and is made again on new ports.
      if (attempt < 3 && err instanceof Error && err.message.includes('EADDRINUSE'))
        return this.add(name, roles, options, attempt + 1);
      throw err;
    }
    return proc;
  }

  /** The database leader as etcd sees it: its advertised endpoint, term and lease id. */
  async leaderKey(): Promise<{ endpoint: string; term: number; lease: string } | undefined> {
    const { kvs } = await this.raw.getAll().prefix(`${this.prefix}/election/database/`).sort('Create', 'Ascend').limit(1).exec();
    const kv = kvs[0];
    return kv ? { endpoint: kv.value.toString(), term: Number(kv.create_revision), lease: kv.lease } : undefined;
  }

  /** Revokes the database leader's lease: the documented way to force a failover. */
  async revokeLeaderLease(): Promise<number> {
    const leader = await this.leaderKey();
    if (!leader) throw new Error('no database leader to demote');
    await this.raw.leaseClient.leaseRevoke({ ID: leader.lease });
    return leader.term;
  }

  /** Output of every process, for a failed test. */
  dump(): string {
    return this.processes.map((p) => p.tail.join('\n')).join('\n');
  }

  async stop(): Promise<void> {
    for (const p of this.processes) await p.kill('SIGCONT');
    await Promise.all(this.processes.map((p) => p.kill('SIGKILL')));
    this.raw.close();
    await this.etcd.stop();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Signs in as the provisioned admin through `baseUrl`, waiting (bounded) for a leader. */
export async function signIn(baseUrl: string): Promise<string> {
  return waitFor(
    'admin sign-in',
    async () => {
      const res = await fetch(`${baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: ADMIN.username, password: ADMIN.password }),
      });
      if (res.ok) return ((await res.json()) as { token: string }).token;
      await res.arrayBuffer();
      return undefined;
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
}

/** fetch() with a bearer token and a JSON body, answering status and parsed body. */
export async function call(
  baseUrl: string,
  token: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(baseUrl + p, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
