import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import path from 'node:path';
import {
  ChannelPool,
  createLogger,
  implementService,
  loadConfigObject,
  pemIdentity,
  rolesOfSubjectAltName,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { WorkerServiceService } from '@strata/proto/worker/v1/worker';
import { parse as parseYaml } from 'yaml';
import { extractHelm, type HelmBinary } from './helm-binary.js';
import { CHART, containerEnv, find, type K8sObject, podsOf, renderChart, runHelm, validateObjects } from './rendered-chart.js';

/**
 * The chart's side of the trust boundaries (docs/architecture.md): every Strata pod gets a
 * certificate of the release's CA naming its role, the bundled etcd serves TLS and demands client
 * certificates, and NetworkPolicies admit only Strata's own pods to internal ports. Rendered by a
 * real helm; the rendered certificates are used for a real mutual-TLS call.
 */

const NAMESPACE = 'observability';
const HA_VALUES = path.join(CHART, 'ci', 'ha-values.yaml');
// Role of the chart (component label) → Strata role its certificate must hold.
const STRATA_ROLE = { gateway: 'gateway', worker: 'backend', database: 'database' } as const;
const WORKLOADS: [keyof typeof STRATA_ROLE, string, string][] = [
  ['gateway', 'Deployment', 'strata-gateway'],
  ['worker', 'StatefulSet', 'strata-worker'],
  ['database', 'StatefulSet', 'strata-database'],
];

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests
type Any = any;

const secretFile = (secret: K8sObject, key: string) => {
  const data = secret.data?.[key];
  assert.equal(typeof data, 'string', `Secret ${secret.metadata.name} has no ${key}`);
  return Buffer.from(data, 'base64').toString('utf8');
};

/** The Secret mounted in the pod at `dir`, with the volume's name. */
function secretMountedAt(pod: { spec: Any; name: string }, container: Any, dir: string): string {
  const mount = container.volumeMounts.find((m: Any) => m.mountPath === dir);
  assert.ok(mount, `${pod.name}: nothing mounted at ${dir}`);
  const volume = pod.spec.volumes.find((v: Any) => v.name === mount.name);
  assert.ok(volume?.secret?.secretName, `${pod.name}: ${dir} is not a Secret volume`);
  return volume.secret.secretName;
}

/** Pods a NetworkPolicy peer list admits, among `pods`; undefined `from` admits every source. */
function admitted(from: Any[] | undefined, pods: { labels: Record<string, string> }[]): Set<unknown> | 'any' {
  if (!from || from.length === 0) return 'any';
  const out = new Set<unknown>();
  for (const peer of from) {
    const labels = peer.podSelector?.matchLabels as Record<string, string> | undefined;
    if (!labels || peer.namespaceSelector || peer.ipBlock) continue;
    for (const p of pods) if (Object.entries(labels).every(([k, v]) => p.labels[k] === v)) out.add(p);
  }
  return out;
}

describe('Helm chart: internal TLS, etcd TLS and NetworkPolicies', function () {
  this.timeout(120_000);
  let helm: HelmBinary;
  before(() => {
    helm = extractHelm();
  });
  after(() => helm?.remove());

  for (const [name, valuesFiles] of [
    ['default values', []],
    ['HA values', [HA_VALUES]],
  ] as const) {
    describe(name, () => {
      let objects: K8sObject[];
      before(() => {
        objects = renderChart(helm, { namespace: NAMESPACE, valuesFiles: [...valuesFiles] });
      });

      it('gives every Strata pod its own role certificate, signed by the release CA and named in its config', () => {
        validateObjects(objects);
        const ca = new X509Certificate(secretFile(find(objects, 'Secret', 'strata-tls-ca')!, 'tls.crt'));
        assert.ok(ca.ca, 'strata-tls-ca holds a CA certificate');
        for (const [role, kind, workloadName] of WORKLOADS) {
          for (const pod of podsOf(find(objects, kind, workloadName)!)) {
            const container = pod.spec.containers[0];
            const secretName = secretMountedAt(pod, container, '/etc/strata-tls');
            assert.equal(secretName, `strata-tls-${role}`);
            const secret = find(objects, 'Secret', secretName)!;
            const cert = new X509Certificate(secretFile(secret, 'tls.crt'));
            assert.deepEqual(
              [...rolesOfSubjectAltName(cert.subjectAltName)],
              [STRATA_ROLE[role]],
              `${pod.name}: roles of its certificate`,
            );
            assert.ok(cert.verify(ca.publicKey), `${pod.name}: certificate not signed by the release CA`);
            assert.equal(secretFile(secret, 'ca.crt').trim(), ca.toString().trim());
            const cm = find(objects, 'ConfigMap', 'strata-config')!;
            const env = role === 'gateway' ? { STRATA_AUTH_JWT_SIGNINGKEY: 'k'.repeat(40) } : {};
            const config = loadConfigObject(parseYaml(cm.data[`${role}.yaml`]), env);
            assert.deepEqual(
              [config.internalTls.caFile, config.internalTls.certFile, config.internalTls.keyFile],
              ['/etc/strata-tls/ca.crt', '/etc/strata-tls/tls.crt', '/etc/strata-tls/tls.key'],
            );
            // The bundled etcd admits Strata by the same certificate.
            assert.equal(config.etcd.tls.certFile, '/etc/strata-tls/tls.crt');
            assert.ok(config.etcd.endpoints.every((e) => e.startsWith('https://')));
          }
        }
      });

      it("serves mutual TLS with the chart's certificates: the gateway's reaches a worker's, a database's is refused the call", async () => {
        const identityOf = (role: string) => {
          const secret = find(objects, 'Secret', `strata-tls-${role}`)!;
          return pemIdentity(
            secretFile(secret, 'ca.crt'),
            { cert: secretFile(secret, 'tls.crt'), key: secretFile(secret, 'tls.key') },
            { kind: 'generated', dir: 'chart' },
          );
        };
        const { server, port } = await startGrpcServer(
          '127.0.0.1:0',
          [
            {
              definition: WorkerServiceService,
              implementation: implementService(
                WorkerServiceService,
                { health: async () => ({ endpoint: 'worker-0', freeBytes: 1, writable: true, uptimeMs: 1 }) },
                createLogger('chart', { level: 'silent' }),
              ),
            },
          ],
          identityOf('worker'),
        );
        const asGateway = new ChannelPool(identityOf('gateway'));
        const asEtcd = new ChannelPool(identityOf('etcd'));
        try {
          const res = await asGateway.client(WorkerServiceService, `127.0.0.1:${port}`).health({});
          assert.equal(res.endpoint, 'worker-0');
          // etcd's certificate is of the same CA but holds no Strata role.
          await assert.rejects(asEtcd.client(WorkerServiceService, `127.0.0.1:${port}`).health({}), /may be called only by/);
        } finally {
          asGateway.close();
          asEtcd.close();
          await stopGrpcServer(server, 0);
        }
      });

      it('runs the bundled etcd with TLS for clients and peers and client-certificate authentication', () => {
        const etcd = find(objects, 'StatefulSet', 'strata-etcd')!;
        const container = etcd.spec.template.spec.containers[0];
        const args: string[] = container.args;
        for (const flag of ['--client-cert-auth', '--peer-client-cert-auth']) assert.ok(args.includes(flag), flag);
        for (const prefix of [
          '--listen-client-urls=',
          '--advertise-client-urls=',
          '--listen-peer-urls=',
          '--initial-advertise-peer-urls=',
        ]) {
          assert.match(args.find((a) => a.startsWith(prefix))!, /=https:\/\//, prefix);
        }
        const secret = find(
          objects,
          'Secret',
          secretMountedAt({ spec: etcd.spec.template.spec, name: 'etcd' }, container, '/etc/etcd-tls'),
        )!;
        const cert = new X509Certificate(secretFile(secret, 'tls.crt'));
        for (const pod of podsOf(etcd)) {
          const host = `${pod.name}.${etcd.spec.serviceName}.${NAMESPACE}.svc.cluster.local`;
          assert.ok(cert.checkHost(host), `etcd certificate does not cover ${host}`);
        }
      });

      it('admits only Strata pods to worker, database and etcd ports', () => {
        const policies = objects.filter((o) => o.kind === 'NetworkPolicy');
        const pods = objects
          .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
          .flatMap((w) => podsOf(w).map((p) => ({ ...p, component: p.labels['app.kubernetes.io/component'] })));
        const from = (component: string, port: string) => {
          const target = pods.find((p) => p.component === component)!;
          const selecting = policies.filter((np) =>
            Object.entries(np.spec.podSelector.matchLabels as Record<string, string>).every(([k, v]) => target.labels[k] === v),
          );
          assert.equal(selecting.length, 1, `${component}: one policy selects its pods`);
          const rule = selecting[0]!.spec.ingress.find((r: Any) => r.ports.some((p: Any) => p.port === port));
          assert.ok(rule, `${component}: no rule for port ${port}, so it is closed`);
          const ok = admitted(rule.from, pods);
          return ok === 'any' ? 'any' : [...new Set([...ok].map((p) => (p as { component: string }).component))].sort();
        };
        assert.deepEqual(from('worker', 'grpc'), ['database', 'gateway']);
        assert.deepEqual(from('database', 'grpc'), ['gateway', 'worker']);
        assert.deepEqual(from('etcd', 'client'), ['database', 'etcd', 'gateway', 'worker']);
        assert.deepEqual(from('etcd', 'peer'), ['etcd']);
        assert.equal(from('gateway', 'http'), 'any');
      });
    });
  }

  it('admits only the configured peers (e.g. the ingress controller) to the gateway', () => {
    const ingress = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
    const objects = renderChart(helm, {
      namespace: NAMESPACE,
      setJson: [`networkPolicy.gatewayFrom=${JSON.stringify([ingress])}`],
    });
    validateObjects(objects);
    const np = find(objects, 'NetworkPolicy', 'strata-gateway')!;
    const rule = np.spec.ingress.find((r: Any) => r.ports.some((p: Any) => p.port === 'http'));
    assert.deepEqual(rule.from, [ingress]);
  });

  it('takes certificates from cert-manager when asked, into the same Secrets', () => {
    const objects = renderChart(helm, { namespace: NAMESPACE, set: ['internalTls.certManager.enabled=true'] });
    validateObjects(objects);
    assert.equal(
      objects.some((o) => o.kind === 'Secret' && o.metadata.name.startsWith('strata-tls-')),
      false,
    );
    for (const [role] of WORKLOADS) {
      const cert = find(objects, 'Certificate', `strata-tls-${role}`)!;
      assert.equal(cert.spec.secretName, `strata-tls-${role}`);
      assert.deepEqual(cert.spec.dnsNames, [`${STRATA_ROLE[role]}.role.strata`]);
      assert.deepEqual(cert.spec.usages.sort(), ['client auth', 'digital signature', 'key encipherment', 'server auth']);
      assert.equal(cert.spec.issuerRef.name, 'strata-ca');
    }
    assert.ok(find(objects, 'Issuer', 'strata-ca')?.spec.ca);
    assert.equal(find(objects, 'Certificate', 'strata-ca')?.spec.isCA, true);
    // An operator's own issuer replaces the bootstrap.
    const own = renderChart(helm, {
      set: [
        'internalTls.certManager.enabled=true',
        'internalTls.certManager.issuerRef.name=corp-ca',
        'internalTls.certManager.issuerRef.kind=ClusterIssuer',
      ],
    });
    assert.equal(find(own, 'Issuer', 'strata-ca'), undefined);
    assert.deepEqual(find(own, 'Certificate', 'strata-tls-worker')!.spec.issuerRef, {
      name: 'corp-ca',
      kind: 'ClusterIssuer',
      group: 'cert-manager.io',
    });
  });

  it('reaches an external etcd with its TLS Secret and an etcd user whose password stays in a Secret', () => {
    const objects = renderChart(helm, {
      namespace: NAMESPACE,
      setJson: ['etcd.endpoints=["https://etcd-a.infra:2379"]'],
      set: ['etcd.external.tlsSecret=etcd-client', 'etcd.external.username=strata', 'etcd.external.passwordSecret=etcd-pw'],
    });
    validateObjects(objects);
    assert.equal(find(objects, 'StatefulSet', 'strata-etcd'), undefined);
    assert.equal(find(objects, 'NetworkPolicy', 'strata-etcd'), undefined);
    for (const [role, kind, workloadName] of WORKLOADS) {
      const pod = podsOf(find(objects, kind, workloadName)!)[0]!;
      const container = pod.spec.containers[0];
      assert.equal(secretMountedAt(pod, container, '/etc/strata-etcd-tls'), 'etcd-client');
      const env = containerEnv(pod, container, {
        namespace: NAMESPACE,
        objects,
        externalSecrets: { 'etcd-pw/password': 'etcd-secret-pw', 'strata-jwt/jwt-signing-key': 'k'.repeat(48) },
      });
      const cm = find(objects, 'ConfigMap', 'strata-config')!;
      assert.doesNotMatch(cm.data[`${role}.yaml`], /etcd-secret-pw/);
      const config = loadConfigObject(parseYaml(cm.data[`${role}.yaml`]), env);
      assert.equal(config.etcd.tls.caFile, '/etc/strata-etcd-tls/ca.crt');
      assert.deepEqual(config.etcd.auth, { username: 'strata', password: 'etcd-secret-pw' });
    }
  });

  it('passes helm lint --strict with cert-manager and NetworkPolicy values', () => {
    runHelm(helm, [
      'lint',
      '--strict',
      CHART,
      '--set',
      'internalTls.certManager.enabled=true',
      '--set',
      'networkPolicy.enabled=false',
    ]);
  });
});
