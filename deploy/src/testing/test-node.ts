// Use from the `test` workspace (test/test/**): the workspaces deploy depends on (common, master,
// worker, gateway) cannot import it without a reference cycle.
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfigObject } from '@strata/common';
import { testTlsDir } from '@strata/common/testing';
import { type RunningProcess, startProcess } from '../process-runner.js';

export interface TestUser {
  userId: string;
  username: string;
  password: string;
  /** Global permissions, e.g. ['Service.Global.Admin']. */
  global?: string[];
  /** Account name → permissions on it. */
  accounts?: Record<string, string[]>;
}

export interface TestNodeOptions {
  /** Accounts to provision (id → name). Default: one account `default` with the all-zero id. */
  accounts?: Record<string, string>;
  users?: TestUser[];
  /** Roles to run; default all three. */
  roles?: { database?: boolean; backend?: boolean; gateway?: boolean };
  /**
   * A data directory to start from (copied into the node's temp data root first): for example a
   * directory written by an earlier version, to test its migration.
   */
  seedDataRoot?: string;
  /** Extra raw config merged over the defaults (shallow per top-level section). */
  config?: Record<string, Record<string, unknown>>;
}

export interface TestNode {
  /** http://127.0.0.1:<port> of the gateway. */
  baseUrl: string;
  /** http://127.0.0.1:<port> of the ops server (/healthz, /readyz, /metrics), when the test enabled `ops`. */
  opsUrl?: string;
  dataRoot: string;
  process: RunningProcess;
  /** Signs in and returns a session token. */
  signIn(username: string, password: string): Promise<string>;
  /** fetch() against the gateway with an optional bearer token and JSON body. */
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  stop(): Promise<void>;
}

export const TEST_ACCOUNT_ID = '00000000-0000-0000-0000-000000000000';

/**
 * A whole Strata node in this process for tests: every role on free loopback ports, a temp data
 * directory, the embedded coordinator, and provisioned accounts and users. `stop()` removes it all.
 */
export async function startTestNode(options: TestNodeOptions = {}): Promise<TestNode> {
  const dataRoot = mkdtempSync(path.join(tmpdir(), 'strata-test-'));
  if (options.seedDataRoot) cpSync(options.seedDataRoot, dataRoot, { recursive: true });
  const accounts = options.accounts ?? { [TEST_ACCOUNT_ID]: 'default' };
  const roles = { database: true, backend: true, gateway: true, ...options.roles };
  const raw: Record<string, Record<string, unknown> | string> = {
    dataRoot,
    database: { enable: roles.database, endpoint: '127.0.0.1:0' },
    backend: { enable: roles.backend, endpoint: '127.0.0.1:0', minimumFreeSpaceBytes: 0 },
    gateway: { enable: roles.gateway, host: '127.0.0.1', port: 0 },
    ops: { enable: false },
    internalTls: { generateDir: testTlsDir() },
    log: { level: 'warn' },
    auth: { jwt: { signingKey: randomBytes(32).toString('hex') } },
    setupService: {
      enable: true,
      provision: true,
      accounts: Object.entries(accounts).map(([accountId, accountName]) => ({ accountId, accountName })),
      users: (options.users ?? []).map((u) => ({
        userId: u.userId,
        username: u.username,
        password: u.password,
        firstname: u.username,
        lastname: 'Test',
        email: `${u.username}@example.test`,
        defaultGlobalPermissions: u.global ?? [],
        defaultAccounts: Object.entries(u.accounts ?? {}).map(([accountName, userPermissions]) => ({
          accountName,
          userPermissions,
        })),
      })),
    },
  };
  for (const [section, values] of Object.entries(options.config ?? {})) {
    raw[section] = { ...((raw[section] as Record<string, unknown>) ?? {}), ...values };
  }
  let running: RunningProcess;
  try {
    running = await startProcess(loadConfigObject(raw, {}));
  } catch (err) {
    rmSync(dataRoot, { recursive: true, force: true });
    throw err;
  }
  // Wait (bounded) until the database role leads with provisioning done and every role is ready.
  for (let i = 0; i < 200; i++) {
    const states = running.roles.map((r) => ({ name: r.name, ...r.readiness() }));
    const leading = !roles.database || states.some((s) => s.name === 'database' && s.detail.startsWith('leader'));
    if (leading && states.every((s) => s.ready)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const gateway = running.roles.find((r) => r.name === 'gateway') as { port?: number } | undefined;
  const baseUrl = `http://127.0.0.1:${gateway?.port ?? 0}`;
  const request: TestNode['request'] = (method, p, o = {}) =>
    fetch(baseUrl + p, {
      method,
      headers: {
        ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
        ...o.headers,
      },
      body: o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : JSON.stringify(o.body),
    });
  return {
    baseUrl,
    ...(running.opsPort !== undefined ? { opsUrl: `http://127.0.0.1:${running.opsPort}` } : {}),
    dataRoot,
    process: running,
    request,
    async signIn(username, password) {
      // Retried only while no leader is reachable (503); a 401 is final, so that retries never
      // trip the sign-in throttle.
      for (let attempt = 0; attempt < 50; attempt++) {
        const res = await request('POST', '/auth/token', { body: { username, password } });
        if (res.ok) return ((await res.json()) as { token: string }).token;
        if (res.status !== 503) throw new Error(`sign-in failed for ${username}: ${res.status} ${await res.text()}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(`sign-in failed for ${username}: no leader`);
    },
    async stop() {
      await running.stop();
      rmSync(dataRoot, { recursive: true, force: true });
    },
  };
}
