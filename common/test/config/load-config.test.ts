import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfigFile, loadConfigObject } from '../../src/index.js';

const KEY = 'k'.repeat(40);

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${err}`);
    return err.problems;
  }
  assert.fail('expected the configuration to be refused');
}

describe('configuration', () => {
  it('applies defaults of every section', () => {
    const cfg = loadConfigObject({ gateway: { enable: true }, auth: { jwt: { signingKey: KEY } } }, {});
    assert.equal(cfg.gateway.port, 5000);
    assert.equal(cfg.database.enable, false);
    assert.deepEqual(cfg.etcd.endpoints, []);
    assert.equal(cfg.auth.jwt.issuer, 'strata');
    assert.ok(path.isAbsolute(cfg.backend.dataPath));
    assert.ok(cfg.backend.dataPath.endsWith(path.join('data', 'backend')));
  });

  it('reports every problem at once, each with its key path', () => {
    const problems = problemsOf(() =>
      loadConfigObject(
        {
          gateway: { enable: true, port: 'eighty' },
          backend: { enable: true, minimumFreeSpace: 5 },
          colour: 'blue',
          setupService: { users: [{ userId: 'not-a-guid', username: 'a', password: 'b' }] },
        },
        {},
      ),
    );
    const text = problems.join('\n');
    assert.match(text, /gateway\.port: /);
    assert.match(text, /backend\.minimumFreeSpace: unknown key/);
    assert.match(text, /colour: unknown key/);
    assert.match(text, /setupService\.users\[0\]\.userId: must be a GUID/);
    assert.ok(problems.length >= 4, text);
  });

  it('requires a signing key when the gateway is enabled', () => {
    const problems = problemsOf(() => loadConfigObject({ gateway: { enable: true } }, {}));
    assert.deepEqual(problems, ['auth.jwt.signingKey: is required when gateway.enable is true']);
  });

  it('refuses a configuration that enables no role', () => {
    assert.match(problemsOf(() => loadConfigObject({}, {})).join(), /no role enabled/);
  });

  it('checks that provisioned users name provisioned accounts', () => {
    const problems = problemsOf(() =>
      loadConfigObject(
        {
          database: { enable: true },
          setupService: {
            accounts: [{ accountId: '00000000-0000-0000-0000-000000000000', accountName: 'default' }],
            users: [
              {
                userId: '00000000-0000-0000-0000-00000000cafe',
                username: 'a',
                password: 'b',
                defaultAccounts: [{ accountName: 'other' }],
              },
            ],
          },
        },
        {},
      ),
    );
    assert.deepEqual(problems, [
      'setupService.users[0].defaultAccounts[0].accountName: names no account in setupService.accounts: other',
    ]);
  });

  it('applies STRATA_* environment overrides with the key type', () => {
    const cfg = loadConfigObject(
      { gateway: { enable: true }, auth: { jwt: { signingKey: KEY } } },
      {
        STRATA_GATEWAY_PORT: '8080',
        STRATA_ETCD_ENDPOINTS: 'http://127.0.0.1:2379,http://127.0.0.1:2380',
        STRATA_BACKEND_ENABLE: 'true',
      },
    );
    assert.equal(cfg.gateway.port, 8080);
    assert.deepEqual(cfg.etcd.endpoints, ['http://127.0.0.1:2379', 'http://127.0.0.1:2380']);
    assert.equal(cfg.backend.enable, true);
  });

  it('reports environment variables that name no key, and wrongly typed ones', () => {
    const problems = problemsOf(() =>
      loadConfigObject({ database: { enable: true } }, { STRATA_GATEWAY_PROT: '1', STRATA_GATEWAY_PORT: 'abc' }),
    );
    assert.ok(problems.includes('STRATA_GATEWAY_PROT: no configuration key gateway.PROT'), problems.join('\n'));
    assert.ok(
      problems.some((p) => p.startsWith('gateway.port:')),
      problems.join('\n'),
    );
  });

  it('reads YAML and JSON files, and reports a missing or malformed file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'strata-config-'));
    writeFileSync(path.join(dir, 'a.yaml'), 'database:\n  enable: true\ngateway:\n  port: 7000\n');
    writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ backend: { enable: true } }));
    writeFileSync(path.join(dir, 'c.yaml'), 'database: [unclosed\n');
    assert.equal(loadConfigFile(path.join(dir, 'a.yaml'), {}).gateway.port, 7000);
    assert.equal(loadConfigFile(path.join(dir, 'b.json'), {}).backend.enable, true);
    assert.match(problemsOf(() => loadConfigFile(path.join(dir, 'missing.yaml'), {}))[0]!, /cannot read/);
    assert.match(problemsOf(() => loadConfigFile(path.join(dir, 'c.yaml'), {}))[0]!, /not valid YAML or JSON/);
  });
});
