import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfigObject } from '@strata/common';
import { waitFor } from '@strata/common/testing';
import { type RunningProcess, startProcess } from '@strata/deploy';
import type { GatewayHandle } from '@strata/gateway';

export const ACCOUNT_A = 'aaaaaaaa-0000-0000-0000-00000000000a';
export const ACCOUNT_B = 'bbbbbbbb-0000-0000-0000-00000000000b';
/** An account id no account has. */
export const ACCOUNT_MISSING = 'cccccccc-0000-0000-0000-00000000000c';

/** One user per role the settings rules distinguish. */
export const USERS = {
  globalAdmin: {
    id: '10000000-0000-0000-0000-000000000001',
    perms: ['Service.Global.Admin'],
    accounts: [] as [string, string[]][],
  },
  adminA: {
    id: '10000000-0000-0000-0000-000000000002',
    perms: [],
    accounts: [['A', ['Service.Account.Admin']]] as [string, string[]][],
  },
  adminB: {
    id: '10000000-0000-0000-0000-000000000003',
    perms: [],
    accounts: [['B', ['Service.Account.Admin']]] as [string, string[]][],
  },
  viewerA: {
    id: '10000000-0000-0000-0000-000000000004',
    perms: [],
    accounts: [['A', ['Service.Incident.Viewer']]] as [string, string[]][],
  },
  managerA: {
    id: '10000000-0000-0000-0000-000000000005',
    perms: [],
    accounts: [['A', ['Service.Incident.Manager', 'Service.Incident.Editor', 'Service.Account.Inflow']]] as [string, string[]][],
  },
} as const;
export type UserName = keyof typeof USERS;

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
  body: any;
  text: string;
}

/**
 * A real single process with the database, backend and gateway roles (embedded coordinator, a
 * temporary data directory, every port chosen by the OS), provisioned with the users above.
 */
export class SettingsCluster {
  private constructor(
    private readonly proc: RunningProcess,
    private readonly dataRoot: string,
    readonly baseUrl: string,
  ) {}

  private readonly tokens = new Map<UserName, string>();

  static async start(): Promise<SettingsCluster> {
    const dataRoot = mkdtempSync(path.join(os.tmpdir(), 'strata-settings-e2e-'));
    const config = loadConfigObject(
      {
        dataRoot,
        log: { level: 'warn' },
        database: { enable: true, endpoint: '127.0.0.1:0' },
        backend: { enable: true, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 },
        gateway: { enable: true, host: '127.0.0.1', port: 0 },
        ops: { enable: false },
        auth: { jwt: { signingKey: 'settings-test-signing-key-0123456789-abcdef' } },
        setupService: {
          enable: true,
          provision: true,
          accounts: [
            { accountId: ACCOUNT_A, accountName: 'A' },
            { accountId: ACCOUNT_B, accountName: 'B' },
          ],
          users: Object.entries(USERS).map(([name, u]) => ({
            userId: u.id,
            username: name,
            password: `${name}-password`,
            defaultGlobalPermissions: u.perms,
            defaultAccounts: u.accounts.map(([accountName, userPermissions]) => ({ accountName, userPermissions })),
          })),
        },
      },
      {},
    );
    let proc: RunningProcess;
    try {
      proc = await startProcess(config);
    } catch (err) {
      rmSync(dataRoot, { recursive: true, force: true });
      throw err;
    }
    const gateway = proc.roles.find((r) => r.name === 'gateway') as GatewayHandle;
    const cluster = new SettingsCluster(proc, dataRoot, `http://127.0.0.1:${gateway.port}`);
    // Sign-in works once the master is elected and has provisioned the users.
    await waitFor(
      'provisioned users to sign in',
      async () => (await cluster.token('globalAdmin').catch(() => undefined)) !== undefined,
      {
        timeoutMs: 20_000,
        intervalMs: 100,
      },
    );
    return cluster;
  }

  async stop(): Promise<void> {
    await this.proc.stop();
    rmSync(this.dataRoot, { recursive: true, force: true });
  }

  /** A session token of the user (signed in once, then reused). */
  async token(user: UserName): Promise<string> {
    const cached = this.tokens.get(user);
    if (cached) return cached;
    const r = await this.request('POST', '/auth/token', { body: { username: user, password: `${user}-password` } });
    if (r.status !== 200) throw new Error(`sign-in of ${user} answered ${r.status}: ${r.text}`);
    this.tokens.set(user, r.body.token);
    return r.body.token;
  }

  async request(
    method: string,
    urlPath: string,
    options: { body?: unknown; as?: UserName; token?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = {};
    const token = options.token ?? (options.as ? await this.token(options.as) : undefined);
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${this.baseUrl}${urlPath}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, body, text };
  }
}
