import path from 'node:path';
import { ensureSecretFile, randomSecret } from './secret-files.js';

/** The account every shipped config of the public product uses, and Grafana's plugin assumes. */
export const DEFAULT_ACCOUNT_ID = '00000000-0000-0000-0000-000000000000';
export const DEFAULT_ADMIN_USER_ID = '00000000-0000-0000-0000-00000000cafe';
export const DEFAULT_ADMIN_USER_NAME = 'admin';

export interface SingleNodeConfig {
  raw: Record<string, unknown>;
  /** File holding the generated admin password (created on first start). */
  passwordFile: string;
  firstStart: boolean;
}

/**
 * The embedded config of `npm start`: every role in one process, data under `./data`, HTTP on 5000,
 * embedded coordinator. The JWT signing key and the admin password are generated on first start
 * and kept in files under the data directory (mode 0600) — never a fixed default.
 */
export function singleNodeConfig(dataRoot = './data'): SingleNodeConfig {
  const root = path.resolve(dataRoot);
  const signingKey = ensureSecretFile(path.join(root, 'secrets', 'jwt-signing-key'), () => randomSecret(48)).value;
  const passwordFile = path.join(root, 'initial-admin-password');
  const password = ensureSecretFile(passwordFile, () => randomSecret(18));
  return {
    passwordFile,
    firstStart: password.created,
    raw: {
      dataRoot: root,
      database: { enable: true, endpoint: '127.0.0.1:6000' },
      backend: { enable: true, endpoint: '127.0.0.1:6002' },
      gateway: { enable: true, port: 5000 },
      ops: { enable: true, host: '127.0.0.1', port: 5001 },
      auth: { jwt: { signingKey } },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: DEFAULT_ACCOUNT_ID, accountName: 'default' }],
        users: [
          {
            userId: DEFAULT_ADMIN_USER_ID,
            username: DEFAULT_ADMIN_USER_NAME,
            password: password.value,
            firstname: 'Strata',
            lastname: 'Admin',
            email: 'admin@localhost',
            defaultGlobalPermissions: ['Service.Global.Admin'],
            defaultAccounts: [{ accountName: 'default', userPermissions: ['Service.Account.Admin'] }],
          },
        ],
      },
    },
  };
}
