import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestNode, type TestNode } from '@strata/deploy/testing';

/**
 * The Logship collection agent's sign-in, driven the way the agent drives it (compatibility
 * reference §1.8; AG `Internals/Api.cs`, `Events/OutputAuthenticator.cs`,
 * `Services/AgentAuthenticationService.cs`): the device id is the upper-case hex SHA3-512 of its
 * sorted "key: value" facts; the configured registration token is presented once at start-up and
 * wins over a stored refresh token; the refresh token is persisted to `<dataPath>/refresh-token`;
 * a 401 carrying a refreshToken means "pending approval" (store it, ask again in 15 s); a 401
 * without one deletes the stored token; the access token's `exp` schedules a refresh at half-life;
 * uploads are PUT /inflow/{account} with PascalCase records, and a 401 there drops the access token.
 * The 15 s waits are not slept: the test calls the next attempt directly.
 */
const A = 'a0000000-0000-4000-8000-00000000000a';
const B = 'b0000000-0000-4000-8000-00000000000b';
const ADMIN_A = {
  userId: '10000000-0000-4000-8000-000000000001',
  username: 'adminA',
  password: 'adminA-password-1',
  accounts: { alpha: ['Service.Account.Admin'] },
};
const ADMIN_B = {
  userId: '10000000-0000-4000-8000-000000000002',
  username: 'adminB',
  password: 'adminB-password-1',
  accounts: { beta: ['Service.Account.Admin'] },
};
const ROOT = {
  userId: '10000000-0000-4000-8000-0000000000ff',
  username: 'root',
  password: 'root-password-1',
  global: ['Service.Global.Admin'],
};
const VIEWER = {
  userId: '10000000-0000-4000-8000-000000000003',
  username: 'viewer',
  password: 'viewer-password-1',
  accounts: { alpha: ['Service.Incident.Viewer'] },
};

type Attempt = 'authenticated' | 'pending' | 'unauthenticated' | 'error';

/** The agent's side of the protocol, as AgentAuthenticationService and OutputAuthenticator do it. */
class LogshipAgent {
  readonly deviceId: string;
  private registrationToken: string | undefined;
  accessToken: string | undefined;
  refreshAtMs: number | undefined;
  lastBody: Record<string, unknown> | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly account: string,
    private readonly dataPath: string,
    registrationToken: string | undefined,
    readonly machine = 'build-host-7',
  ) {
    this.registrationToken = registrationToken;
    const facts = { mac: '02:42:ac:11:00:02', host: machine, os: 'Debian GNU/Linux 12', docker: 'none' };
    const sorted = Object.entries(facts).sort(([a], [b]) => a.localeCompare(b));
    this.deviceId = createHash('sha3-512')
      .update(sorted.map(([k, v]) => `${k}: ${v}`).join('\n'))
      .digest('hex')
      .toUpperCase();
  }

  private get tokenFile() {
    return path.join(this.dataPath, 'refresh-token');
  }

  storedRefreshToken(): string | undefined {
    return existsSync(this.tokenFile) ? readFileSync(this.tokenFile, 'utf8') : undefined;
  }

  /** One pass of the authentication loop. */
  async authenticate(): Promise<Attempt> {
    // The configured registration token is used once, at start-up, and wins over a stored token.
    const bearer = this.registrationToken ?? this.storedRefreshToken();
    this.registrationToken = undefined;
    const res = await fetch(`${this.baseUrl}/agents/${this.account}/collector-client/refresh`, {
      method: 'POST',
      headers: {
        Accept: 'application/json',
        'Content-Type': 'application/json',
        'x-ls-agent-deviceid': this.deviceId,
        ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
      },
      body: JSON.stringify({
        Name: this.machine,
        HostName: this.machine,
        MachineIdentifier: this.deviceId,
        Attributes: [
          { Key: 'os', Value: 'Debian GNU/Linux 12 (bookworm)' },
          { Key: 'os_version', Value: 'X64' },
        ],
      }),
    });
    const text = await res.text();
    this.lastBody = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
    // Response properties are read without regard to case (.NET).
    const field = (name: string) =>
      Object.entries(this.lastBody ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] as string | undefined;
    if (res.status === 200) {
      writeFileSync(this.tokenFile, field('refreshToken')!);
      this.accessToken = field('accessToken');
      const exp = JSON.parse(Buffer.from(this.accessToken!.split('.')[1]!, 'base64url').toString()).exp as number;
      const now = Date.now();
      this.refreshAtMs = now + (exp * 1000 - now) / 2;
      return 'authenticated';
    }
    if (res.status === 401 && field('refreshToken')) {
      writeFileSync(this.tokenFile, field('refreshToken')!);
      return 'pending';
    }
    if (res.status === 401) {
      if (existsSync(this.tokenFile)) unlinkSync(this.tokenFile);
      return 'unauthenticated';
    }
    return 'error';
  }

  /** One flush of the event sink: PUT /inflow/{account}; a 401 invalidates the access token. */
  async flush(records: { Schema: string; TimeStamp: string; Data: Record<string, unknown> }[], account = this.account) {
    const res = await fetch(`${this.baseUrl}/inflow/${account}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${this.accessToken}` },
      body: JSON.stringify(records),
    });
    await res.arrayBuffer();
    if (res.status === 401) this.accessToken = undefined;
    return res.status;
  }
}

// biome-ignore lint/suspicious/noExplicitAny: tests inspect answer bodies freely
type Body = any;

describe('the Logship agent connects unchanged (HTTP, end to end)', function () {
  this.timeout(60_000);
  let node: TestNode;
  let dataPath: string;
  const tokens = new Map<string, string>();
  const call = async (who: string, method: string, p: string, body?: unknown) => {
    const res = await node.request(method, p, { token: tokens.get(who), body });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as Body };
  };
  const registrationToken = async (account = A, who = 'adminA', expiresAt = new Date(Date.now() + 86_400_000).toISOString()) => {
    const res = await call(who, 'POST', `/accounts/${account}/agent-registration-tokens`, { description: 'fleet', expiresAt });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { tokenId: string; token: string };
  };

  before(async () => {
    node = await startTestNode({ accounts: { [A]: 'alpha', [B]: 'beta' }, users: [ADMIN_A, ADMIN_B, VIEWER, ROOT] });
    for (const u of [ADMIN_A, ADMIN_B, VIEWER, ROOT]) tokens.set(u.username, await node.signIn(u.username, u.password));
    dataPath = mkdtempSync(path.join(tmpdir(), 'logship-agent-local-storage-'));
  });
  after(async () => {
    await node?.stop();
    rmSync(dataPath, { recursive: true, force: true });
  });

  it('registers, waits for approval, gets tokens, uploads with __INFLOW_AGENT, refreshes at half-life', async () => {
    const reg = await registrationToken();
    assert.match(reg.token, /^sar_/);
    const agent = new LogshipAgent(node.baseUrl, A, dataPath, reg.token);

    // Unknown device: the documented "pending" answer — 401 with a refresh token, in the error body.
    assert.equal(await agent.authenticate(), 'pending');
    assert.equal(agent.lastBody!.stackTrace, null);
    assert.match(String(agent.lastBody!.message), /waiting for approval/);
    const pendingToken = agent.storedRefreshToken();
    assert.match(pendingToken!, /^saf_/);
    // 15 s later it asks again with the stored token: still pending until an admin approves.
    assert.equal(await agent.authenticate(), 'pending');

    const devices = await call('adminA', 'GET', `/accounts/${A}/agents`);
    assert.equal(devices.body.length, 1);
    assert.deepEqual(
      { ...devices.body[0], createdAt: undefined, lastSeenAt: undefined },
      {
        deviceId: agent.deviceId,
        name: 'build-host-7',
        hostName: 'build-host-7',
        attributes: [
          { key: 'os', value: 'Debian GNU/Linux 12 (bookworm)' },
          { key: 'os_version', value: 'X64' },
        ],
        state: 'pending',
        registrationTokenId: reg.tokenId,
        createdAt: undefined,
        approvedAt: null,
        approvedByUserId: null,
        lastSeenAt: undefined,
      },
    );
    const approved = await call('adminA', 'PUT', `/accounts/${A}/agents/${agent.deviceId}/approval`);
    assert.equal(approved.status, 200);
    assert.equal(approved.body.state, 'approved');
    assert.equal(approved.body.approvedByUserId, ADMIN_A.userId);

    assert.equal(await agent.authenticate(), 'authenticated');
    const [header, payload, signature] = agent.accessToken!.split('.');
    assert.ok(header && payload && signature, 'a three-part JWT');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const lifetime = claims.exp - Date.now() / 1000;
    assert.ok(lifetime > 3500 && lifetime <= 3600, `access token lives an hour (${lifetime} s left)`);
    assert.equal(new Date(String(agent.lastBody!.expiresUtc)).getTime(), claims.exp * 1000);
    assert.ok(
      agent.refreshAtMs! > Date.now() + 1700_000 && agent.refreshAtMs! <= Date.now() + 1800_000,
      'refresh due in ~30 min',
    );
    const firstRefresh = agent.storedRefreshToken()!;
    assert.notEqual(firstRefresh, pendingToken);

    const stamp = new Date().toISOString().replace('Z', '+00:00');
    assert.equal(
      await agent.flush([{ Schema: 'Logship.Agent.Uptime', TimeStamp: stamp, Data: { machine: agent.machine, value: 1 } }]),
      200,
    );
    const rows = await call('adminA', 'POST', `/search/${A}/kusto`, {
      query: 'Logship.Agent.Uptime | project __INFLOW_AGENT, machine',
    });
    assert.deepEqual(rows.body.results, [{ __INFLOW_AGENT: agent.deviceId, machine: 'build-host-7' }]);

    // Half-life reached: refresh with the stored token. The refresh token rotates.
    assert.equal(await agent.authenticate(), 'authenticated');
    const secondRefresh = agent.storedRefreshToken()!;
    assert.notEqual(secondRefresh, firstRefresh);
    const replay = await fetch(`${node.baseUrl}/agents/${A}/collector-client/refresh`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-ls-agent-deviceid': agent.deviceId,
        authorization: `Bearer ${firstRefresh}`,
      },
      body: '{}',
    });
    assert.equal(replay.status, 401);
    assert.equal(((await replay.json()) as Body).refreshToken, undefined);

    // A restart presents the registration token again: the device keeps its approval.
    const restarted = new LogshipAgent(node.baseUrl, A, dataPath, reg.token);
    assert.equal(await restarted.authenticate(), 'authenticated');
  });

  it('gives the access token inflow on its own account and nothing else', async () => {
    const reg = await registrationToken();
    const agent = new LogshipAgent(node.baseUrl, A, dataPath, reg.token, 'scope-host');
    await agent.authenticate();
    await call('adminA', 'PUT', `/accounts/${A}/agents/${agent.deviceId}/approval`);
    assert.equal(await agent.authenticate(), 'authenticated');
    const record = [{ Schema: 'scope.check', TimeStamp: new Date().toISOString(), Data: { v: 1 } }];
    assert.equal(await agent.flush(record, B), 403);
    const bearer = { authorization: `Bearer ${agent.accessToken}` };
    for (const [method, p] of [
      ['POST', `/search/${A}/kusto`],
      ['GET', '/whoami'],
      ['GET', `/accounts/${A}/incidents`],
      ['GET', `/accounts/${A}/agents`],
    ]) {
      const res = await fetch(`${node.baseUrl}${p}`, {
        method,
        headers: { ...bearer, 'content-type': 'application/json' },
        body: method === 'POST' ? '{"query":"x"}' : undefined,
      });
      assert.equal(res.status, 403, `${method} ${p}`);
    }
    // The token names the device; a header cannot pretend to be another agent.
    const spoofed = await fetch(`${node.baseUrl}/inflow/${A}`, {
      method: 'PUT',
      headers: { ...bearer, 'content-type': 'application/json', 'x-ls-agent-deviceid': 'SOMEONE-ELSE' },
      body: JSON.stringify(record),
    });
    assert.equal(spoofed.status, 200);
    const rows = await call('adminA', 'POST', `/search/${A}/kusto`, {
      query: 'scope.check | summarize count = count() by __INFLOW_AGENT',
    });
    assert.deepEqual(rows.body.results, [{ __INFLOW_AGENT: agent.deviceId, count: 1 }]);
  });

  it('revoking a device stops its refresh token at once and its access token within seconds; it may register again', async () => {
    const reg = await registrationToken();
    const agentDir = mkdtempSync(path.join(tmpdir(), 'logship-agent-revoke-'));
    try {
      const agent = new LogshipAgent(node.baseUrl, A, agentDir, reg.token, 'revoked-host');
      await agent.authenticate();
      await call('adminA', 'PUT', `/accounts/${A}/agents/${agent.deviceId}/approval`);
      assert.equal(await agent.authenticate(), 'authenticated');
      assert.equal((await call('adminA', 'DELETE', `/accounts/${A}/agents/${agent.deviceId}`)).status, 204);
      assert.equal(await agent.authenticate(), 'unauthenticated');
      assert.equal(agent.storedRefreshToken(), undefined, 'the agent deleted its stored token');
      const record = [{ Schema: 'revoked.check', TimeStamp: new Date().toISOString(), Data: { v: 1 } }];
      let status = 200;
      for (let i = 0; i < 40 && status !== 401; i++) {
        status = await agent.flush(record);
        if (status !== 401) await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(status, 401);
      const again = new LogshipAgent(node.baseUrl, A, agentDir, reg.token, 'revoked-host');
      assert.equal(await again.authenticate(), 'pending');
      assert.equal((await call('adminA', 'DELETE', `/accounts/${A}/agents/${agent.deviceId}`)).status, 204);
    } finally {
      rmSync(agentDir, { recursive: true, force: true });
    }
  });

  it('refuses missing, foreign, deleted and expired registration tokens, and a missing device id', async () => {
    const noToken = new LogshipAgent(node.baseUrl, A, mkdtempSync(path.join(tmpdir(), 'agent-none-')), undefined, 'no-token');
    assert.equal(await noToken.authenticate(), 'unauthenticated');
    const foreign = await registrationToken(B, 'adminB');
    assert.equal(await new LogshipAgent(node.baseUrl, A, dataPath, foreign.token, 'foreign').authenticate(), 'unauthenticated');
    const deleted = await registrationToken();
    assert.equal((await call('adminA', 'DELETE', `/accounts/${A}/agent-registration-tokens/${deleted.tokenId}`)).status, 204);
    assert.equal(await new LogshipAgent(node.baseUrl, A, dataPath, deleted.token, 'deleted').authenticate(), 'unauthenticated');
    const listed = await call('adminA', 'GET', `/accounts/${A}/agent-registration-tokens`);
    assert.ok(listed.body.every((t: Body) => t.token === undefined && t.tokenId !== deleted.tokenId));

    const soon = await registrationToken(A, 'adminA', new Date(Date.now() + 1500).toISOString());
    let attempt: string | undefined;
    for (let i = 0; i < 50 && attempt !== 'unauthenticated'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      attempt = await new LogshipAgent(node.baseUrl, A, dataPath, soon.token, `expiring-${i}`).authenticate();
      if (attempt === 'pending') continue;
    }
    assert.equal(attempt, 'unauthenticated', 'an expired registration token is refused');

    const res = await fetch(`${node.baseUrl}/agents/${A}/collector-client/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${foreign.token}` },
      body: '{}',
    });
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as Body).message, /x-ls-agent-deviceid/);
  });

  it('lets only account admins manage tokens and devices, with an expiry in the future', async () => {
    assert.equal((await call('viewer', 'GET', `/accounts/${A}/agents`)).status, 403);
    assert.equal(
      (
        await call('viewer', 'POST', `/accounts/${A}/agent-registration-tokens`, {
          expiresAt: new Date(Date.now() + 60_000).toISOString(),
        })
      ).status,
      403,
    );
    assert.equal((await call('adminB', 'GET', `/accounts/${A}/agent-registration-tokens`)).status, 403);
    const past = await call('adminA', 'POST', `/accounts/${A}/agent-registration-tokens`, { expiresAt: '2020-01-01T00:00:00Z' });
    assert.equal(past.status, 400);
    assert.equal(past.body.message, 'expiresAt must be in the future.');
    const missing = await call('adminA', 'POST', `/accounts/${A}/agent-registration-tokens`, {});
    assert.equal(missing.status, 400);
    assert.match(missing.body.message, /expiresAt/);
    const unknown = await call('adminA', 'PUT', `/accounts/${A}/agents/NOPE/approval`);
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.message, 'Agent device NOPE is not registered in this account.');
  });

  it('removes registration tokens and devices with their account', async () => {
    const C = 'c0000000-0000-4000-8000-00000000000c';
    assert.equal((await call('root', 'PUT', `/accounts/${C}`, { accountName: 'gamma' })).status, 201);
    const reg = await registrationToken(C, 'root');
    const agent = new LogshipAgent(node.baseUrl, C, mkdtempSync(path.join(tmpdir(), 'agent-gamma-')), reg.token, 'gamma-host');
    assert.equal(await agent.authenticate(), 'pending');
    assert.equal((await call('root', 'DELETE', `/accounts/${C}`)).status, 204);
    await call('root', 'PUT', `/accounts/${C}`, { accountName: 'gamma' });
    assert.deepEqual((await call('root', 'GET', `/accounts/${C}/agents`)).body, []);
    assert.deepEqual((await call('root', 'GET', `/accounts/${C}/agent-registration-tokens`)).body, []);
    assert.equal(await agent.authenticate(), 'unauthenticated');
  });
});
