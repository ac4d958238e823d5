import assert from 'node:assert/strict';
import { startTestNode, type TestNode, type TestUser } from '@strata/deploy/testing';
import { allRoutes, isAllowed, type Operation } from '@strata/gateway';

/**
 * Walks the gateway's whole route table over HTTP with a real node: for every route and every role,
 * on the role's own account and on another account, a refused call must answer 401/403 before any
 * handler runs, and an allowed call must not. A new route is covered as soon as it is added.
 */
const OWN = '00000000-0000-0000-0000-00000000a001';
const OTHER = '00000000-0000-0000-0000-00000000b002';
const pw = 'matrix-password-1';

const ROLE_PERMISSIONS: Record<string, { global?: string[]; own?: string[] }> = {
  globalAdmin: { global: ['Service.Global.Admin'] },
  accountAdmin: { own: ['Service.Account.Admin'] },
  viewer: { own: ['Service.Incident.Viewer'] },
  editor: { own: ['Service.Incident.Editor'] },
  manager: { own: ['Service.Incident.Manager'] },
  inflow: { own: ['Service.Account.Inflow'] },
  query: { own: ['Service.Account.Query'] },
  nobody: {},
};

const users: TestUser[] = Object.entries(ROLE_PERMISSIONS).map(([name, p], i) => ({
  userId: `00000000-0000-0000-0000-${String(i + 1).padStart(12, '0')}`,
  username: name,
  password: pw,
  global: p.global,
  accounts: p.own ? { own: p.own } : undefined,
}));

function fillPath(path: string, accountId: string): string {
  return path
    .replace(':accountId', accountId)
    .replace(':userId', users[0]!.userId)
    .replace(':settingName', 'Service.Dashboards.Default')
    .replace(':schema', 'matrix.logs')
    .replace(/:[A-Za-z]+/g, '00000000-0000-0000-0000-00000000dead');
}

/** The principal of a role, for asking the policy what the answer should be. */
function principalOf(role: string) {
  const p = ROLE_PERMISSIONS[role]!;
  return {
    userId: role,
    tokenType: 'session' as const,
    globalPermissions: new Set(p.global ?? []),
    accountPermissions: new Map([[OWN, new Set(p.own ?? [])]]),
  };
}

describe('route matrix over HTTP: every route × every role × own and other account', function () {
  this.timeout(120_000);
  let node: TestNode;
  const tokens = new Map<string, string>();

  before(async () => {
    node = await startTestNode({ accounts: { [OWN]: 'own', [OTHER]: 'other' }, users });
    for (const u of users) tokens.set(u.username, await node.signIn(u.username, pw));
    // Both accounts hold data, so DELETE /accounts/:accountId is refused (400) rather than
    // deleting the account the later roles are checked on.
    for (const account of [OWN, OTHER]) {
      const res = await node.request('PUT', `/inflow/${account}`, {
        token: tokens.get('globalAdmin'),
        body: [{ schema: 'matrix.keep', timestamp: new Date().toISOString(), data: { x: 1 } }],
      });
      assert.equal(res.status, 200, await res.text());
    }
  });
  after(async () => node?.stop());

  it('answers 401 to every non-public route without a token', async () => {
    for (const route of allRoutes().filter((r) => r.operation !== 'public')) {
      const res = await node.request(route.method, fillPath(route.path, OWN), { body: route.method === 'GET' ? undefined : {} });
      await res.arrayBuffer();
      assert.equal(res.status, 401, `${route.method} ${route.path}`);
    }
  });

  for (const role of Object.keys(ROLE_PERMISSIONS)) {
    it(`role ${role}`, async () => {
      for (const route of allRoutes().filter((r) => r.operation !== 'public' && r.path.includes(':accountId'))) {
        for (const account of [OWN, OTHER]) {
          const allowed = isAllowed(principalOf(role), route.operation as Operation, account);
          const res = await node.request(route.method, fillPath(route.path, account), {
            token: tokens.get(role),
            body: route.method === 'GET' || route.method === 'DELETE' ? undefined : {},
          });
          const text = await res.text();
          const where = `${role} ${route.method} ${route.path} on ${account === OWN ? 'own' : 'other'} account → ${res.status} ${text.slice(0, 120)}`;
          if (allowed) assert.ok(res.status !== 401 && res.status !== 403, where);
          else {
            assert.equal(res.status, 403, where);
            assert.equal(JSON.parse(text).message, 'No permission.', where);
          }
          if (account === OTHER && role !== 'globalAdmin')
            assert.equal(allowed, false, `policy lets ${role} into another account`);
        }
      }
    });
  }
});
