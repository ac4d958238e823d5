import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, credentials, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import {
  ChannelPool,
  createCertificateAuthority,
  createLogger,
  type InternalIdentity,
  implementService,
  issueRoleCertificate,
  loadInternalIdentity,
  pemIdentity,
  type RoleName,
  SERVICE_ACCESS,
  splitMethodPath,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { freePort, testTlsDir } from '@strata/common/testing';
import { startTestNode, type TestNode } from '@strata/deploy/testing';
import { AgentServiceService } from '@strata/proto/agents/v1/agents';
import { AlertRuleServiceService } from '@strata/proto/alerting/v1/alert_rules';
import { DirectoryServiceService, UpsertUserRequest } from '@strata/proto/directory/v1/directory';
import { AlertServiceService } from '@strata/proto/incidents/v1/alerts';
import { GroupServiceService } from '@strata/proto/incidents/v1/groups';
import { IncidentServiceService } from '@strata/proto/incidents/v1/incidents';
import { AppendRequest, IngestServiceService } from '@strata/proto/ingest/v1/ingest';
import { SegmentServiceService } from '@strata/proto/ingest/v1/segments';
import { QueryServiceService } from '@strata/proto/query/v1/query';
import { SavedQueryServiceService } from '@strata/proto/savedqueries/v1/saved_queries';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { StoragePolicyServiceService } from '@strata/proto/storage/v1/policy';
import { WorkerStorageServiceService } from '@strata/proto/storage/v1/worker_storage';
import { WebhookServiceService } from '@strata/proto/webhooks/v1/webhooks';
import { SegmentTransferServiceService } from '@strata/proto/worker/v1/transfer';
import { WorkerServiceService } from '@strata/proto/worker/v1/worker';

/**
 * The internal gRPC surface probed as an attacker on the pod network would: every method of every
 * service, called directly without credentials, with server-only TLS, with a certificate from
 * another CA, and with a valid certificate of a role the method does not allow. Each is refused
 * before any handler runs — checked by the state a handler would have changed (a created user,
 * a stored row) — and the allowed role is served (the control that keeps the refusals meaningful).
 */

const DEFINITIONS = [
  DirectoryServiceService,
  IncidentServiceService,
  GroupServiceService,
  AlertServiceService,
  AgentServiceService,
  AlertRuleServiceService,
  SavedQueryServiceService,
  SettingsServiceService,
  StoragePolicyServiceService,
  WebhookServiceService,
  IngestServiceService,
  QueryServiceService,
  SegmentServiceService,
  WorkerServiceService,
  WorkerStorageServiceService,
  SegmentTransferServiceService,
] as const;

type MethodDef = { path: string; responseStream: boolean; requestSerialize: (v: never) => Buffer };

const ADMIN = { userId: '00000000-0000-0000-0000-00000000a0a0', username: 'root', password: 'internal-grpc-pw-1' };
const ATTACKER_USER_ID = '00000000-0000-0000-0000-0000000bad00';

/** A raw call with an empty protobuf message (every field default): enough to reach a handler. */
function rawCall(client: Client, def: MethodDef): Promise<ServiceError | undefined> {
  const serialize = () => Buffer.alloc(0);
  const deserialize = (b: Buffer) => b;
  const deadline = Date.now() + 5_000;
  return new Promise((resolve) => {
    if (def.responseStream) {
      const call = client.makeServerStreamRequest(def.path, serialize, deserialize, {}, new Metadata(), { deadline });
      call.on('data', () => undefined);
      call.on('error', (err: ServiceError) => resolve(err));
      call.on('end', () => resolve(undefined));
    } else {
      client.makeUnaryRequest(def.path, serialize, deserialize, {}, { deadline }, (err) => resolve(err ?? undefined));
    }
  });
}

const caCertOf = (pem: string) => /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(pem)![0];

const allMethods = (): MethodDef[] => DEFINITIONS.flatMap((d) => Object.values(d as unknown as Record<string, MethodDef>));

const endpointOf = (def: MethodDef, endpoints: Record<RoleName, string>) =>
  endpoints[SERVICE_ACCESS[splitMethodPath(def.path).service]!.server];

describe('internal gRPC: every call authenticated (mutual TLS) and authorized by role', function () {
  this.timeout(120_000);
  let node: TestNode;
  let endpoints: Record<RoleName, string>;
  let token: string;
  const foreignDir = mkdtempSync(path.join(tmpdir(), 'strata-foreign-ca-'));

  before(async () => {
    const [db, be] = [await freePort(), await freePort()];
    endpoints = { database: `127.0.0.1:${db}`, backend: `127.0.0.1:${be}`, gateway: '' };
    node = await startTestNode({
      users: [{ ...ADMIN, global: ['Service.Global.Admin'], accounts: { default: ['Service.Account.Admin'] } }],
      config: { database: { endpoint: endpoints.database }, backend: { endpoint: endpoints.backend } },
    });
    token = await node.signIn(ADMIN.username, ADMIN.password);
  });
  after(async () => {
    await node?.stop();
    rmSync(foreignDir, { recursive: true, force: true });
  });

  it('covers every service of the access table', () => {
    const covered = new Set(allMethods().map((m) => splitMethodPath(m.path).service));
    assert.deepEqual([...covered].sort(), Object.keys(SERVICE_ACCESS).sort());
  });

  it('refuses every method to a caller without TLS', async () => {
    for (const def of allMethods()) {
      const client = new Client(endpointOf(def, endpoints), credentials.createInsecure());
      const err = await rawCall(client, def);
      client.close();
      assert.equal(err?.code, status.UNAVAILABLE, `${def.path} answered a plaintext caller: ${err?.details}`);
    }
  });

  it('refuses every method to a TLS caller without a client certificate', async () => {
    const caPem = Buffer.from(caCertOf(readFileSync(path.join(testTlsDir(), 'ca.pem'), 'utf8')));
    for (const def of allMethods()) {
      // Trusts the server (right CA, any host name) but presents no certificate of its own.
      const creds = credentials.createSsl(caPem, null, null, { checkServerIdentity: () => undefined });
      const client = new Client(endpointOf(def, endpoints), creds);
      const err = await rawCall(client, def);
      client.close();
      assert.equal(err?.code, status.UNAVAILABLE, `${def.path} answered a caller without a certificate: ${err?.details}`);
    }
  });

  it('refuses every method to a certificate from another CA, even one claiming every role', async () => {
    const foreignCa = createCertificateAuthority('attacker CA');
    const forged = issueRoleCertificate(foreignCa, ['database', 'backend', 'gateway']);
    // The attacker trusts the real servers but signs its own certificate.
    const caPem = caCertOf(readFileSync(path.join(testTlsDir(), 'ca.pem'), 'utf8'));
    const attacker: InternalIdentity = pemIdentity(caPem, forged, { kind: 'generated', dir: foreignDir });
    const pool = new ChannelPool(attacker);
    try {
      for (const def of allMethods()) {
        const service = SERVICE_ACCESS[splitMethodPath(def.path).service]!;
        const err = await rawCall(pool.channel(endpointOf(def, endpoints), service.server), def);
        assert.equal(err?.code, status.UNAVAILABLE, `${def.path} answered a foreign certificate: ${err?.details}`);
      }
    } finally {
      pool.close();
    }
  });

  it('refuses each method to a valid certificate of a role it does not allow, before the handler runs', async () => {
    let refusals = 0;
    for (const role of ['database', 'backend', 'gateway'] as const) {
      const pool = new ChannelPool(loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, [role]));
      try {
        for (const def of allMethods()) {
          const { service, method } = splitMethodPath(def.path);
          const access = SERVICE_ACCESS[service]!;
          const allowed = access.methods?.[method] ?? access.callers;
          if (allowed.includes(role)) continue;
          const err = await rawCall(pool.channel(endpointOf(def, endpoints), access.server), def);
          assert.equal(err?.code, status.PERMISSION_DENIED, `${def.path} as ${role}: ${err?.code} ${err?.details}`);
          assert.match(err!.details, /may be called only by the/);
          refusals++;
        }
      } finally {
        pool.close();
      }
    }
    assert.ok(refusals >= 40, `only ${refusals} refusals exercised`);
  });

  it('does not let a worker certificate create a global admin or store rows; the gateway role is served', async () => {
    const asWorker = new ChannelPool(
      loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['backend']),
    );
    const asGateway = new ChannelPool(
      loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['gateway']),
    );
    const asMaster = new ChannelPool(
      loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['database']),
    );
    try {
      const user = {
        userId: ATTACKER_USER_ID,
        userName: 'mallory',
        firstName: 'M',
        lastName: 'X',
        email: 'm@x',
      };
      await assert.rejects(
        asWorker
          .client(DirectoryServiceService, endpoints.database)
          .upsertUser(UpsertUserRequest.fromPartial({ user, password: 'mallory-pass-1' })),
        /may be called only by the gateway role/,
      );
      await assert.rejects(
        asWorker.client(DirectoryServiceService, endpoints.database).setPermissions({
          userId: ADMIN.userId,
          accountId: '',
          permissions: ['Service.Global.Admin'],
        }),
        /may be called only by the gateway role/,
      );
      await assert.rejects(
        asMaster
          .client(IngestServiceService, endpoints.backend)
          .append(AppendRequest.fromPartial({ accountId: '00000000-0000-0000-0000-000000000000' })),
        /may be called only by the gateway role/,
      );
      // Nothing was created: the sign-in of the would-be admin fails.
      const res = await node.request('POST', '/auth/token', { body: { username: 'mallory', password: 'mallory-pass-1' } });
      assert.equal(res.status, 401);
      // The control: the gateway's certificate is served by the master.
      const got = await asGateway.client(DirectoryServiceService, endpoints.database).getUser({ userId: ADMIN.userId } as never);
      assert.equal((got as { user?: { userName?: string } }).user?.userName, ADMIN.username);
      // And the node itself (gateway → master → worker, all over mutual TLS) answers through HTTP.
      const who = await node.request('GET', '/whoami', { token });
      assert.equal(who.status, 200);
    } finally {
      asWorker.close();
      asGateway.close();
      asMaster.close();
    }
  });

  it('a client refuses a server whose certificate lacks the role it meant to call', async () => {
    // Dialing the worker's endpoint as if it were the master: the worker's certificate (a single
    // node holds every role) would pass, so use a server identity with only the backend role.
    const pool = new ChannelPool(loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['gateway']));
    try {
      const backendOnly = loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['backend']);
      const { server, port } = await startGrpcServer(
        '127.0.0.1:0',
        [
          {
            definition: WorkerServiceService,
            implementation: implementService(
              WorkerServiceService,
              { health: async () => ({ endpoint: 'x', freeBytes: 1, writable: true, uptimeMs: 1 }) },
              createLogger('t', { level: 'silent' }),
            ),
          },
        ],
        backendOnly,
      );
      try {
        // As a worker it is served…
        const ok = await pool.client(WorkerServiceService, `127.0.0.1:${port}`).health({});
        assert.equal(ok.endpoint, 'x');
        // …but a channel expecting the database role refuses the same server.
        const err = await rawCall(pool.channel(`127.0.0.1:${port}`, 'database'), {
          path: '/strata.worker.v1.WorkerService/Health',
          responseStream: false,
          requestSerialize: () => Buffer.alloc(0),
        });
        assert.equal(err?.code, status.UNAVAILABLE);
      } finally {
        await stopGrpcServer(server, 0);
      }
    } finally {
      pool.close();
    }
  });

  it('throttles password verification at the master, whoever calls', async () => {
    const pool = new ChannelPool(loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, ['gateway']));
    try {
      const directory = pool.client(DirectoryServiceService, endpoints.database);
      let throttled: Error | undefined;
      for (let i = 0; i < 10 && !throttled; i++) {
        try {
          const res = await directory.verifyPassword({ userName: ADMIN.username, password: `wrong-${i}` });
          assert.equal(res.ok, false);
        } catch (err) {
          throttled = err as Error;
        }
      }
      assert.match(String(throttled?.message), /Too many failed sign-ins/);
      // Even the right password waits out the back-off.
      await assert.rejects(directory.verifyPassword({ userName: ADMIN.username, password: ADMIN.password }), /Too many failed/);
    } finally {
      pool.close();
    }
  });
});
