import { waitFor } from '@strata/common/testing';
import { startTestNode, type TestNode } from '@strata/deploy/testing';

export const ACCOUNT_A = 'a0000000-0000-4000-8000-00000000000a';
export const ACCOUNT_B = 'b0000000-0000-4000-8000-00000000000b';

/** One user per role the incident and group rules distinguish (account permissions by account name). */
const USERS = {
  globalAdmin: { global: ['Service.Global.Admin'] },
  admin: { accounts: { A: ['Service.Account.Admin'] } },
  viewer: { accounts: { A: ['Service.Incident.Viewer'] } },
  editor: { accounts: { A: ['Service.Incident.Editor'] } },
  manager: { accounts: { A: ['Service.Incident.Manager'] } },
  inflow: { accounts: { A: ['Service.Account.Inflow'] } },
  query: { accounts: { A: ['Service.Account.Query'] } },
  editorB: { accounts: { B: ['Service.Incident.Editor'] } },
  nobody: {},
} as const;
export type UserName = keyof typeof USERS;
export const USER_NAMES = Object.keys(USERS) as UserName[];

export const userId = (name: UserName) => `10000000-0000-4000-8000-${String(USER_NAMES.indexOf(name) + 1).padStart(12, '0')}`;
export const emailOf = (name: UserName) => `${name}@example.test`;

export interface Answer {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
  body: any;
}

/** A real node (every role in this process, embedded coordinator, temp data dir) with accounts A and B. */
export class IncidentsCluster {
  private readonly tokens = new Map<UserName, string>();
  private constructor(readonly node: TestNode) {}

  /** `clock`: the time alert rules run by (default: the current time); `config`: extra config sections. */
  static async start(
    options: { clock?: () => Date; config?: Record<string, Record<string, unknown>> } = {},
  ): Promise<IncidentsCluster> {
    const node = await startTestNode({
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.config ? { config: options.config } : {}),
      accounts: { [ACCOUNT_A]: 'A', [ACCOUNT_B]: 'B' },
      users: USER_NAMES.map((username) => {
        const u = USERS[username] as { global?: readonly string[]; accounts?: Record<string, readonly string[]> };
        return {
          userId: userId(username),
          username,
          password: `${username}-password-1`,
          global: u.global ? [...u.global] : [],
          accounts: u.accounts ? Object.fromEntries(Object.entries(u.accounts).map(([k, v]) => [k, [...v]])) : undefined,
        };
      }),
    });
    // Provisioning hashes every password after election; sign-ins fail until it is done, and
    // repeated failures throttle a user. Poll with the last provisioned user only, so the others
    // sign in cleanly afterwards.
    const last = USER_NAMES.at(-1)!;
    await waitFor(
      'provisioning of the test users',
      async () => (await node.request('POST', '/auth/token', { body: { username: last, password: `${last}-password-1` } })).ok,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    return new IncidentsCluster(node);
  }

  stop(): Promise<void> {
    return this.node.stop();
  }

  async token(user: UserName): Promise<string> {
    let token = this.tokens.get(user);
    if (!token) {
      token = await this.node.signIn(user, `${user}-password-1`);
      this.tokens.set(user, token);
    }
    return token;
  }

  async request(
    method: string,
    path: string,
    options: { as?: UserName; token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const token = options.token ?? (options.as ? await this.token(options.as) : undefined);
    const res = await this.node.request(method, path, { token, body: options.body, headers: options.headers });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
  }
}
