import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureGeneratedCa, type InternalIdentity, loadInternalIdentity } from '../grpc/internal-identity.js';
import { ROLE_NAMES, type RoleName } from '../grpc/role-identity.js';

/** Passed to child processes through the environment (not STRATA_*: those are config keys). */
const ENV = 'TEST_STRATA_TLS_DIR';

let dir: string | undefined = process.env[ENV];

/**
 * The internal-TLS directory every test of this run shares (`internalTls.generateDir`): one CA per
 * test run, so in-process roles, child processes (they inherit it through the environment) and
 * the tests' own gRPC clients trust each other. Removed when the process that made it exits.
 */
export function testTlsDir(): string {
  if (!dir) {
    const created = mkdtempSync(path.join(tmpdir(), 'strata-test-tls-'));
    dir = created;
    process.env[ENV] = created;
    ensureGeneratedCa(created);
    process.once('exit', () => rmSync(created, { recursive: true, force: true }));
  }
  return dir;
}

/** An identity signed by the tests' CA holding `roles` (default: every role). */
export function testIdentity(roles: readonly RoleName[] = ROLE_NAMES): InternalIdentity {
  return loadInternalIdentity({ generateDir: testTlsDir(), refreshIntervalSeconds: 60 }, roles);
}
