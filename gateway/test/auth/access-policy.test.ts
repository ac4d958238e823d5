import assert from 'node:assert/strict';
import { ACCESS_POLICY, isAllowed, type Operation } from '../../src/auth/access-policy.js';
import type { Principal } from '../../src/auth/principal.js';
import { allRoutes } from '../../src/routes.js';

/**
 * The permission table of docs/api.md written out independently of access-policy.ts: for each operation,
 * which roles may perform it on their own account. A route with an operation missing here fails.
 */
type Role =
  | 'globalAdmin'
  | 'accountAdmin'
  | 'viewer'
  | 'editor'
  | 'manager'
  | 'inflow'
  | 'query'
  | 'member-without-role'
  | 'inflowToken'
  | 'queryToken';

const ACCOUNT = '00000000-0000-0000-0000-0000000000a1';
const OTHER = '00000000-0000-0000-0000-0000000000b2';
const ALL_ROLES: Role[] = [
  'globalAdmin',
  'accountAdmin',
  'viewer',
  'editor',
  'manager',
  'inflow',
  'query',
  'member-without-role',
  'inflowToken',
  'queryToken',
];

const EXPECTED: Record<Operation, Role[]> = {
  public: ALL_ROLES,
  authenticated: ALL_ROLES,
  'system.settings.read': ['globalAdmin'],
  'system.settings.write': ['globalAdmin'],
  'account.settings.read': ['globalAdmin', 'accountAdmin'],
  'account.settings.write': ['globalAdmin', 'accountAdmin'],
  'incidents.read': ['globalAdmin', 'accountAdmin', 'viewer', 'editor', 'manager'],
  'incidents.write': ['globalAdmin', 'accountAdmin', 'editor', 'manager'],
  'groups.read': ['globalAdmin', 'accountAdmin', 'viewer', 'editor', 'manager'],
  'groups.write': ['globalAdmin', 'accountAdmin', 'manager'],
  'alerts.read': ['globalAdmin', 'accountAdmin', 'viewer', 'editor', 'manager'],
  'alerts.write': ['globalAdmin', 'accountAdmin', 'manager'],
  'inflow.push': ['globalAdmin', 'accountAdmin', 'inflow', 'inflowToken'],
  'query.run': ['globalAdmin', 'accountAdmin', 'viewer', 'editor', 'manager', 'query', 'queryToken'],
  'users.manage': ['globalAdmin'],
  'accounts.manage': ['globalAdmin'],
  'password.self': ALL_ROLES.filter((r) => !r.endsWith('Token')),
  'accounts.list': ALL_ROLES.filter((r) => !r.endsWith('Token')),
  'members.read': ['globalAdmin', 'accountAdmin'],
  'members.write': ['globalAdmin', 'accountAdmin'],
  'agents.manage': ['globalAdmin', 'accountAdmin'],
  'webhooks.manage': ['globalAdmin', 'accountAdmin'],
  'cluster.manage': ['globalAdmin'],
};

function principal(role: Role, account = ACCOUNT): Principal {
  const accountPerms: Record<Role, string[]> = {
    globalAdmin: [],
    accountAdmin: ['Service.Account.Admin'],
    viewer: ['Service.Incident.Viewer'],
    editor: ['Service.Incident.Editor'],
    manager: ['Service.Incident.Manager'],
    inflow: ['Service.Account.Inflow'],
    query: ['Service.Account.Query'],
    'member-without-role': [],
    // Tokens act for an account admin but may only do what their scope says.
    inflowToken: ['Service.Account.Admin'],
    queryToken: ['Service.Account.Admin'],
  };
  const scoped = role === 'inflowToken' || role === 'queryToken';
  return {
    userId: `user-${role}`,
    tokenType: scoped ? 'pat' : 'session',
    scope: scoped
      ? {
          accounts: [
            {
              accountId: account,
              inflow: { schemas: role === 'inflowToken' ? ['logs.*'] : [] },
              query: role === 'queryToken' ? { queryTimeoutSeconds: null, schemas: ['*'] } : undefined,
            },
          ],
        }
      : undefined,
    globalPermissions: new Set(role === 'globalAdmin' ? ['Service.Global.Admin'] : []),
    accountPermissions: new Map([[account, new Set(accountPerms[role])]]),
  };
}

describe('access policy: every route against every role', () => {
  const routes = allRoutes();

  it('every route names an operation the expectation table knows', () => {
    for (const r of routes) assert.ok(r.operation in EXPECTED, `${r.method} ${r.path} uses unlisted operation ${r.operation}`);
    assert.deepEqual(Object.keys(EXPECTED).sort(), Object.keys(ACCESS_POLICY).sort());
  });

  for (const route of allRoutes()) {
    it(`${route.method} ${route.path} (${route.operation})`, () => {
      const accountScoped = route.path.includes(':accountId');
      for (const role of ALL_ROLES) {
        const want = EXPECTED[route.operation].includes(role);
        assert.equal(
          isAllowed(principal(role), route.operation, accountScoped ? ACCOUNT : undefined),
          want,
          `${role} on own account`,
        );
        if (accountScoped && role !== 'globalAdmin' && route.operation !== 'public' && route.operation !== 'authenticated') {
          // Permissions on one account never reach another.
          assert.equal(isAllowed(principal(role, OTHER), route.operation, ACCOUNT), false, `${role} from another account`);
        }
      }
      if (route.operation !== 'public') assert.equal(isAllowed(undefined, route.operation, ACCOUNT), false, 'anonymous');
    });
  }

  it("lets a collection agent's access token push to its own account and do nothing else", () => {
    const agent = {
      userId: 'agent:DEVICE',
      tokenType: 'agent' as const,
      scope: { accounts: [{ accountId: ACCOUNT, inflow: { schemas: ['*'] } }] },
      globalPermissions: new Set<string>(),
      accountPermissions: new Map<string, Set<string>>(),
      agent: { accountId: ACCOUNT, deviceId: 'DEVICE' },
    };
    for (const operation of Object.keys(ACCESS_POLICY) as Operation[]) {
      const want = operation === 'public' || operation === 'inflow.push';
      assert.equal(isAllowed(agent, operation, ACCOUNT), want, operation);
    }
    assert.equal(isAllowed(agent, 'inflow.push', OTHER), false, 'another account');
  });
});
