import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfigObject, type ResolvedConfig } from '@strata/common';
import { startTestNode } from '@strata/deploy/testing';
import { parse as parseYaml } from 'yaml';
import { extractHelm, type HelmBinary } from './helm-binary.js';
import { CHART, containerEnv, find, type K8sObject, podsOf, renderChart, runHelm } from './rendered-chart.js';

/**
 * First sign-in on Kubernetes: a default `helm install` provisions a global admin with a generated
 * password kept in a Secret, and NOTES.txt prints how to read it. Checked on the chart rendered by
 * a real helm: the database pod's config as Strata's loader reads it (file + environment), a real
 * node started with that provisioning signing in with the Secret's password, and the rendered notes.
 */
const NAMESPACE = 'observability';
const SECRET = 'strata-first-admin';

// biome-ignore lint/suspicious/noExplicitAny: rendered manifests are arbitrary JSON
type Any = any;

/** The database pod's resolved config and environment, as the pod would load them. */
function databaseConfig(
  objects: K8sObject[],
  externalSecrets?: Record<string, string>,
): { config: ResolvedConfig; env: Record<string, string> } {
  const workload = find(objects, 'StatefulSet', 'strata-database');
  assert.ok(workload, 'database StatefulSet rendered');
  const pod = podsOf(workload)[0]!;
  const container = pod.spec.containers[0];
  const env = containerEnv(pod, container, { namespace: NAMESPACE, objects, externalSecrets });
  const mount = container.volumeMounts.find((m: Any) => m.mountPath === '/etc/strata');
  const volume = pod.spec.volumes.find((v: Any) => v.name === mount.name);
  const item = volume.configMap.items.find((i: Any) => i.path === 'strata.yaml');
  const text = find(objects, 'ConfigMap', volume.configMap.name)!.data[item.key];
  return { config: loadConfigObject(parseYaml(text) as Record<string, unknown>, env), env };
}

/** NOTES.txt rendered by helm (helm template leaves it out; install --dry-run needs a cluster). */
function renderNotes(helm: HelmBinary, set: string[] = []): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'strata-chart-notes-'));
  try {
    cpSync(CHART, dir, { recursive: true });
    cpSync(path.join(CHART, 'templates', 'NOTES.txt'), path.join(dir, 'notes-under-test.txt'));
    writeFileSync(
      path.join(dir, 'templates', 'zz-notes-under-test.yaml'),
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: notes-under-test\ndata:\n  notes: {{ tpl (.Files.Get "notes-under-test.txt") . | quote }}\n',
    );
    const args = ['template', 'strata', dir, '--namespace', NAMESPACE, '--show-only', 'templates/zz-notes-under-test.yaml'];
    for (const s of set) args.push('--set', s);
    return (parseYaml(runHelm(helm, args)) as Any).data.notes as string;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('Helm chart: first sign-in (helm/strata)', function () {
  this.timeout(120_000);
  let helm: HelmBinary;
  before(() => {
    helm = extractHelm();
  });
  after(() => helm?.remove());

  describe('default values', () => {
    let objects: K8sObject[];
    let password: string;
    before(() => {
      objects = renderChart(helm, { namespace: NAMESPACE });
      const secret = find(objects, 'Secret', SECRET);
      assert.ok(secret, 'the first-admin Secret is rendered');
      password = Buffer.from(secret.data.password, 'base64').toString('utf8');
    });

    it('keeps a generated password in a Secret that survives uninstall', () => {
      const secret = find(objects, 'Secret', SECRET)!;
      assert.match(password, /^[A-Za-z0-9]{24}$/);
      assert.equal(Buffer.from(secret.data.username, 'base64').toString(), 'admin');
      assert.equal((secret.metadata as Any).annotations['helm.sh/resource-policy'], 'keep');
      // The template reads an existing Secret back on upgrades rather than generating anew.
      const template = readFileSync(path.join(CHART, 'templates', 'first-admin-secret.yaml'), 'utf8');
      assert.match(template, /lookup "v1" "Secret" \.Release\.Namespace \$name/);
    });

    it('provisions that user as global admin of a default account, its password only in the Secret', () => {
      const { config, env } = databaseConfig(objects);
      assert.equal(config.setupService.enable, true);
      assert.equal(config.setupService.provision, true);
      assert.deepEqual(config.setupService.accounts, [
        { accountId: '00000000-0000-0000-0000-000000000000', accountName: 'default' },
      ]);
      const [user] = config.setupService.users;
      assert.equal(user?.username, 'admin');
      assert.equal(user?.password, password);
      assert.deepEqual(user?.defaultGlobalPermissions, ['Service.Global.Admin']);
      assert.deepEqual(user?.defaultAccounts, [{ accountName: 'default', userPermissions: ['Service.Account.Admin'] }]);
      assert.ok(!JSON.stringify(objects.filter((o) => o.kind === 'ConfigMap')).includes(password), 'no password in a ConfigMap');
      assert.ok(!Object.values(env).some((v) => v === password), 'the password reaches the pod only inside users.json');
      const gateway = find(objects, 'Deployment', 'strata-gateway')!;
      assert.ok(!JSON.stringify(gateway).includes(SECRET), 'gateways do not see the first-admin Secret');
    });

    it('lets that user sign in on a real node provisioned from the rendered config', async () => {
      const { config } = databaseConfig(objects);
      const node = await startTestNode({ accounts: {}, users: [], config: { setupService: { ...config.setupService } } });
      try {
        const token = await node.signIn('admin', password);
        const res = await node.request('GET', '/users/00000000-0000-0000-0000-00000000cafe/accounts', { token });
        assert.deepEqual(await res.json(), [
          { accountId: '00000000-0000-0000-0000-000000000000', accountName: 'default', permissions: ['Service.Account.Admin'] },
        ]);
        assert.equal((await node.request('GET', '/users', { token })).status, 200);
      } finally {
        await node.stop();
      }
    });

    it('prints the command that reads the password in NOTES.txt', () => {
      const notes = renderNotes(helm);
      assert.ok(notes.includes(`kubectl -n ${NAMESPACE} get secret ${SECRET} -o jsonpath='{.data.password}' | base64 -d`), notes);
      assert.match(notes, /First sign-in: the user "admin"/);
    });
  });

  describe('when users are configured or it is turned off', () => {
    const cases: [string, string[]][] = [
      [
        'config.setupService.users',
        [
          'config.setupService.users[0].userId=3f2b6c1e-8d7a-4c55-9e0f-2a1b3c4d5e6f',
          'config.setupService.users[0].username=ops',
          'config.setupService.users[0].password=ops-password-123',
        ],
      ],
      ['setupServiceUsersSecret', ['setupServiceUsersSecret.name=strata-setup-users']],
      ['firstAdmin.enabled=false', ['firstAdmin.enabled=false']],
    ];
    for (const [name, set] of cases) {
      it(`provisions no first admin with ${name}`, () => {
        const objects = renderChart(helm, { namespace: NAMESPACE, set });
        assert.equal(find(objects, 'Secret', SECRET), undefined);
        const env = JSON.stringify(find(objects, 'StatefulSet', 'strata-database')!.spec.template.spec.containers[0].env);
        assert.ok(!env.includes('STRATA_SETUPSERVICE_ENABLE'), env);
        assert.ok(!renderNotes(helm, set).includes('First sign-in'));
      });
    }

    it('uses the configured accounts instead of its own when config.setupService.accounts is set', () => {
      const objects = renderChart(helm, {
        namespace: NAMESPACE,
        set: [
          'config.setupService.accounts[0].accountId=11111111-1111-4111-8111-111111111111',
          'config.setupService.accounts[0].accountName=production',
        ],
      });
      const { config } = databaseConfig(objects);
      assert.deepEqual(config.setupService.accounts, [
        { accountId: '11111111-1111-4111-8111-111111111111', accountName: 'production' },
      ]);
      assert.equal(config.setupService.users[0]?.username, 'admin');
      assert.deepEqual(config.setupService.users[0]?.defaultAccounts, []);
      runHelm(helm, ['lint', '--strict', CHART, '--set', 'firstAdmin.username=root']);
    });
  });
});
