import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  type Coordinator,
  createCertificateAuthority,
  createCoordinator,
  createLogger,
  issueRoleCertificate,
  loadConfigObject,
} from '../../src/index.js';
import { type EtcdServer, startEtcd } from '../../src/testing/index.js';

const log = createLogger('test', { level: 'silent' });

/**
 * etcd as the chart runs it: TLS for clients and --client-cert-auth, so only a process holding a
 * certificate of the cluster's CA can read or write the election and the worker registry.
 */
describe('coordinator on etcd with TLS and client-certificate authentication', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-etcd-tls-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    writeFileSync(p, text, { mode: 0o600 });
    return p;
  };
  let etcd: EtcdServer;
  let files: Record<string, string>;
  const opened: Coordinator[] = [];

  before(async () => {
    const ca = createCertificateAuthority('etcd test CA');
    const server = issueRoleCertificate(ca, ['database'], { extraDnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const client = issueRoleCertificate(ca, ['gateway']);
    const stranger = issueRoleCertificate(createCertificateAuthority('other CA'), ['gateway']);
    files = {
      ca: file('ca.crt', ca.cert),
      serverCert: file('server.crt', server.cert),
      serverKey: file('server.key', server.key),
      clientCert: file('client.crt', client.cert),
      clientKey: file('client.key', client.key),
      strangerCert: file('stranger.crt', stranger.cert),
      strangerKey: file('stranger.key', stranger.key),
    };
    etcd = await startEtcd({ tls: { caFile: files.ca!, certFile: files.serverCert!, keyFile: files.serverKey! } });
  });
  after(async () => {
    for (const c of opened) await c.close().catch(() => undefined);
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const coordinator = async (tls: Record<string, string>) => {
    const config = loadConfigObject(
      { gateway: { enable: false }, backend: { enable: true }, etcd: { endpoints: [etcd.endpoint], prefix: '/tls-test', tls } },
      {},
    );
    const c = await createCoordinator(config, log);
    opened.push(c);
    return c;
  };

  it('registers and lists workers with the CA and a client certificate', async () => {
    assert.match(etcd.endpoint, /^https:/);
    const c = await coordinator({ caFile: files.ca!, certFile: files.clientCert!, keyFile: files.clientKey! });
    const lease = await c.registerWorker({ endpoint: '127.0.0.1:7777', freeBytes: 1, writable: true });
    const workers = await c.listWorkers();
    assert.deepEqual(
      workers.map((w) => w.endpoint),
      ['127.0.0.1:7777'],
    );
    await lease.revoke();
  });

  it('is refused without a client certificate and with one from another CA', async () => {
    const attempts: Record<string, string>[] = [
      { caFile: files.ca! },
      { caFile: files.ca!, certFile: files.strangerCert!, keyFile: files.strangerKey! },
    ];
    for (const tls of attempts) {
      const c = await coordinator(tls);
      // Refused in the handshake: the call fails (etcd3 retries until its request deadline).
      let listed: unknown;
      await assert.rejects(
        Promise.race([
          c.listWorkers().then((w) => {
            listed = w;
            return w;
          }),
          new Promise((_, reject) => setTimeout(() => reject(new Error('no answer within 8 s')), 8_000)),
        ]),
      );
      assert.equal(listed, undefined);
    }
  });
});
