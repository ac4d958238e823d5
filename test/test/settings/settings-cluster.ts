import { startTestNode, type TestNode } from '@strata/deploy/testing';

export const ACCOUNT_A = 'aaaaaaaa-0000-0000-0000-00000000000a';
export const ACCOUNT_B = 'bbbbbbbb-0000-0000-0000-00000000000b';
/** An account id no account has. */
export const ACCOUNT_MISSING = 'cccccccc-0000-0000-0000-00000000000c';

/** One user per role the settings rules distinguish (account permissions by account name). */
const USERS = {
  globalAdmin: { global: ['Service.Global.Admin'] },
  adminA: { accounts: { A: ['Service.Account.Admin'] } },
  adminB: { accounts: { B: ['Service.Account.Admin'] } },
  viewerA: { accounts: { A: ['Service.Incident.Viewer'] } },
  managerA: { accounts: { A: ['Service.Incident.Manager', 'Service.Incident.Editor', 'Service.Account.Inflow'] } },
} as const;
export type UserName = keyof typeof USERS;

export interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
  body: any;
  text: string;
}

const passwordOf = (user: string) => `${user}-password-1`;

/**
 * A real node (database, backend and gateway roles in this process, embedded coordinator, temp
 * data directory) with accounts A and B and the users above, plus JSON request helpers.
 */
export class SettingsCluster {
  private readonly tokens = new Map<UserName, string>();

  private constructor(private readonly node: TestNode) {}

  static async start(): Promise<SettingsCluster> {
    const node = await startTestNode({
      // The ops port serves /metrics (the live executor limits are read there).
      config: { ops: { enable: true, host: '127.0.0.1', port: 0 } },
      accounts: { [ACCOUNT_A]: 'A', [ACCOUNT_B]: 'B' },
      users: Object.entries(USERS).map(([username, u], i) => ({
        userId: `10000000-0000-0000-0000-${String(i + 1).padStart(12, '0')}`,
        username,
        password: passwordOf(username),
        global: 'global' in u ? [...u.global] : [],
        accounts: 'accounts' in u ? Object.fromEntries(Object.entries(u.accounts).map(([k, v]) => [k, [...v]])) : undefined,
      })),
    });
    return new SettingsCluster(node);
  }

  stop(): Promise<void> {
    return this.node.stop();
  }

  /** A session token of the user (signed in once, then reused). */
  async token(user: UserName): Promise<string> {
    let token = this.tokens.get(user);
    if (!token) {
      token = await this.node.signIn(user, passwordOf(user));
      this.tokens.set(user, token);
    }
    return token;
  }

  /** GET on the ops port (metrics), which has no authentication and is not the API port. */
  async ops(urlPath: string): Promise<Answer> {
    if (!this.node.opsUrl) throw new Error('the ops server is not enabled');
    const res = await fetch(this.node.opsUrl + urlPath);
    const text = await res.text();
    return { status: res.status, body: undefined, text };
  }

  async request(
    method: string,
    urlPath: string,
    options: { body?: unknown; as?: UserName; token?: string } = {},
  ): Promise<Answer> {
    const token = options.token ?? (options.as ? await this.token(options.as) : undefined);
    const res = await this.node.request(method, urlPath, { token, body: options.body });
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
