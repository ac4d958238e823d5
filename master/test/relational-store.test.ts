import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLogger } from '@strata/common';
import { hashPassword, verifyPassword } from '../src/auth/password-hash.js';
import { DirectoryRepository } from '../src/directory/directory-repository.js';
import { applyProvisioning } from '../src/directory/provisioning.js';
import { ALL_MIGRATIONS } from '../src/store/all-migrations.js';
import { type RecordedStatement, RelationalStore } from '../src/store/relational-store.js';

const ACCOUNT = '00000000-0000-0000-0000-000000000001';
const USER = '00000000-0000-0000-0000-00000000cafe';
const log = createLogger('test', { level: 'silent' });

const setup = {
  enable: true,
  provision: true,
  accounts: [{ accountId: ACCOUNT, accountName: 'ops' }],
  users: [
    {
      userId: USER,
      username: 'Admin',
      password: 'first-password',
      firstname: 'A',
      lastname: 'D',
      email: 'a@example.test',
      defaultGlobalPermissions: ['Logship.Global.Admin'],
      defaultAccounts: [{ accountName: 'ops', userPermissions: ['Service.Account.Admin', 'Service.Incident.Viewer'] }],
    },
  ],
};

describe('relational store', () => {
  let dir: string;
  let store: RelationalStore;
  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'strata-store-'));
    store = await RelationalStore.open(dir, { migrations: ALL_MIGRATIONS });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies migrations once, also across reopenings', async () => {
    await store.close();
    store = await RelationalStore.open(dir, { migrations: ALL_MIGRATIONS });
    const rows = await store.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      rows.map((r) => r.version),
      ALL_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b),
    );
  });

  it('rolls a failed transaction back whole', async () => {
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.run("INSERT INTO accounts VALUES ('a', 'x', 'now')");
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal((await store.all('SELECT * FROM accounts')).length, 0);
  });

  it('refuses to commit when the commit guard says leadership is gone', async () => {
    await store.close();
    let leader = true;
    store = await RelationalStore.open(dir, {
      migrations: ALL_MIGRATIONS,
      commitGuard: async () => {
        if (!leader) throw new Error('not the leader');
      },
    });
    leader = false;
    await assert.rejects(
      store.transaction((tx) => tx.run("INSERT INTO accounts VALUES ('a', 'x', 'now')")),
      /not the leader/,
    );
    assert.equal((await store.all('SELECT * FROM accounts')).length, 0);
  });

  it('hands the commit hook every statement that may change data, in order, with its parameters, and no SELECT', async () => {
    const seen: { changes: RecordedStatement[]; committed?: boolean }[] = [];
    store.setCommitHook({
      beforeCommit: async (changes) => {
        seen.push({ changes: [...changes] });
      },
      afterCommit: (committed) => {
        seen.at(-1)!.committed = committed;
      },
    });
    const returned = await store.transaction(async (tx) => {
      await tx.all('SELECT count(*) FROM accounts');
      await tx.run('INSERT INTO accounts VALUES ($1, $2, $3)', ['a', 'x', 'now']);
      // A write read through all(): recorded too (DuckDB reports the statement type).
      const rows = await tx.all("UPDATE accounts SET account_name = $1 WHERE account_id = 'a' RETURNING account_name", ['y']);
      await tx.one('SELECT * FROM accounts');
      return rows;
    });
    assert.deepEqual(returned, [{ account_name: 'y' }]);
    assert.deepEqual(seen, [
      {
        changes: [
          { sql: 'INSERT INTO accounts VALUES ($1, $2, $3)', params: ['a', 'x', 'now'] },
          { sql: "UPDATE accounts SET account_name = $1 WHERE account_id = 'a' RETURNING account_name", params: ['y'] },
        ],
        committed: true,
      },
    ]);
    // A read-only transaction still passes through the hook (the leader's fencing check), empty.
    await store.transaction((tx) => tx.all('SELECT 1'));
    assert.deepEqual(seen[1], { changes: [], committed: true });
  });

  it('rolls back when the commit hook throws, and does not report a commit', async () => {
    let afterCommitCalls = 0;
    store.setCommitHook({
      beforeCommit: async () => {
        throw new Error('the log refused it');
      },
      afterCommit: () => {
        afterCommitCalls++;
      },
    });
    await assert.rejects(
      store.transaction((tx) => tx.run("INSERT INTO accounts VALUES ('a', 'x', 'now')")),
      /the log refused it/,
    );
    assert.equal(afterCommitCalls, 0);
    assert.equal((await store.all('SELECT * FROM accounts')).length, 0);
  });

  it('provisions accounts, users and permissions, and a second run creates no duplicates', async () => {
    const repo = new DirectoryRepository(store);
    assert.deepEqual(await applyProvisioning(setup, store, repo, log), { accountsCreated: 1, usersCreated: 1 });
    assert.deepEqual(await applyProvisioning(setup, store, repo, log), { accountsCreated: 0, usersCreated: 0 });
    assert.equal((await store.all('SELECT * FROM users')).length, 1);
    assert.equal((await store.all('SELECT * FROM accounts')).length, 1);
    const perms = await repo.listUserPermissions(USER);
    assert.deepEqual(perms.globalPermissions, ['Service.Global.Admin']);
    assert.deepEqual(perms.accounts, [
      { accountId: ACCOUNT, accountName: 'ops', permissions: ['Service.Account.Admin', 'Service.Incident.Viewer'] },
    ]);
    assert.ok(await repo.verifyPassword('admin', 'first-password'), 'user names match without regard to case');
  });

  it("lists a user's permissions in one read: global ones, every membership by account name (also one without permissions), and whether the user exists", async () => {
    const repo = new DirectoryRepository(store);
    await applyProvisioning(setup, store, repo, log);
    const ALPHA = '00000000-0000-0000-0000-0000000000a1';
    await repo.upsertAccount({ accountId: ALPHA, accountName: 'alpha', createdAt: '' });
    await store.transaction((tx) => repo.addMember(ALPHA, USER, tx));
    const expected = {
      globalPermissions: ['Service.Global.Admin'],
      // by account name: 'alpha' (a member holding no permission) before 'ops'
      accounts: [
        { accountId: ALPHA, accountName: 'alpha', permissions: [] },
        { accountId: ACCOUNT, accountName: 'ops', permissions: ['Service.Account.Admin', 'Service.Incident.Viewer'] },
      ],
      userExists: true,
    };
    assert.deepEqual(await repo.listUserPermissions(USER.toUpperCase()), expected);
    // The same inside the replicated leader's read-only transaction.
    store.setCommitHook({ beforeCommit: async () => undefined, afterCommit: () => undefined });
    assert.deepEqual(await repo.listUserPermissions(USER), expected);
    await repo.setPermissions(USER, '', []);
    assert.deepEqual((await repo.listUserPermissions(USER)).globalPermissions, []);
    assert.deepEqual(await repo.listUserPermissions('00000000-0000-0000-0000-00000000dead'), {
      globalPermissions: [],
      accounts: [],
      userExists: false,
    });
  });

  it('keeps a user password across re-provisioning with another configured password', async () => {
    const repo = new DirectoryRepository(store);
    await applyProvisioning(setup, store, repo, log);
    const changed = { ...setup, users: [{ ...setup.users[0]!, password: 'second-password' }] };
    await applyProvisioning(changed, store, repo, log);
    assert.ok(await repo.verifyPassword('Admin', 'first-password'));
    assert.equal(await repo.verifyPassword('Admin', 'second-password'), undefined);
  });

  it('stores only scrypt hashes of passwords', async () => {
    const repo = new DirectoryRepository(store);
    await applyProvisioning(setup, store, repo, log);
    const row = await store.one<{ password_hash: string }>('SELECT password_hash FROM users');
    assert.match(row!.password_hash, /^scrypt\$16384\$8\$1\$/);
    assert.ok(!row!.password_hash.includes('first-password'));
  });

  it('refuses unknown permission names', async () => {
    const repo = new DirectoryRepository(store);
    await assert.rejects(
      repo.setPermissions(USER, ACCOUNT, ['Service.Incident.Overlord']),
      /Unknown account permission: Service.Incident.Overlord/,
    );
  });
});

describe('password hashing', () => {
  it('verifies the right password and refuses a wrong one or a missing hash', async () => {
    const hash = await hashPassword('correct horse');
    assert.equal(await verifyPassword('correct horse', hash), true);
    assert.equal(await verifyPassword('correct horsf', hash), false);
    assert.equal(await verifyPassword('correct horse', undefined), false);
    assert.notEqual(await hashPassword('correct horse'), hash, 'salted');
  });
});
