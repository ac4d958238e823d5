import {
  checkPassword,
  conflict,
  invalid,
  isAccountPermission,
  isGlobalPermission,
  normalizePermission,
  notFound,
  WRONG_CURRENT_PASSWORD,
} from '@strata/common';
import type { Account, AccountPermissions, User } from '@strata/proto/directory/v1/directory';
import { hashPassword, verifyPassword } from '../auth/password-hash.js';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

interface UserRow {
  user_id: string;
  user_name: string;
  first_name: string;
  last_name: string;
  email: string;
  password_hash: string | null;
  created_at: string;
  [k: string]: unknown;
}

const toUser = (r: UserRow): User => ({
  userId: r.user_id,
  userName: r.user_name,
  firstName: r.first_name,
  lastName: r.last_name,
  email: r.email,
  createdAt: r.created_at,
});

interface AccountRow {
  account_id: string;
  account_name: string;
  created_at: string;
  [k: string]: unknown;
}
const toAccount = (r: AccountRow): Account => ({ accountId: r.account_id, accountName: r.account_name, createdAt: r.created_at });

/** User names are unique without regard to case: `Admin` and `admin` are one user. */
const userNameKey = (name: string) => name.trim().toLowerCase();

/** Accounts, users and permissions in the relational store. */
export class DirectoryRepository {
  constructor(private readonly store: RelationalStore) {}

  async verifyPassword(userName: string, password: string): Promise<User | undefined> {
    const row = await this.store.one<UserRow>('SELECT * FROM users WHERE user_name_key = $1', [userNameKey(userName)]);
    const ok = await verifyPassword(password, row?.password_hash);
    return ok && row ? toUser(row) : undefined;
  }

  async getUser(userId: string): Promise<User | undefined> {
    const row = await this.store.one<UserRow>('SELECT * FROM users WHERE user_id = $1', [userId.toLowerCase()]);
    return row && toUser(row);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.store.all<AccountRow>('SELECT * FROM accounts ORDER BY account_name')).map(toAccount);
  }

  async getAccount(accountId: string): Promise<Account | undefined> {
    const row = await this.store.one<AccountRow>('SELECT * FROM accounts WHERE account_id = $1', [accountId.toLowerCase()]);
    return row && toAccount(row);
  }

  async upsertAccount(account: Account, tx?: SqlExecutor): Promise<{ account: Account; created: boolean }> {
    const work = async (x: SqlExecutor) => {
      const id = account.accountId.toLowerCase();
      const clash = await x.one('SELECT 1 AS x FROM accounts WHERE account_name = $1 AND account_id <> $2', [
        account.accountName,
        id,
      ]);
      if (clash) throw conflict(`The account name ${account.accountName} is already taken.`);
      const existing = await x.one<AccountRow>('SELECT * FROM accounts WHERE account_id = $1', [id]);
      if (existing) {
        if (existing.account_name !== account.accountName)
          await x.run('UPDATE accounts SET account_name = $2 WHERE account_id = $1', [id, account.accountName]);
        return { account: toAccount({ ...existing, account_name: account.accountName }), created: false };
      }
      const createdAt = new Date().toISOString();
      await x.run('INSERT INTO accounts VALUES ($1, $2, $3)', [id, account.accountName, createdAt]);
      return { account: { accountId: id, accountName: account.accountName, createdAt }, created: true };
    };
    return tx ? work(tx) : this.store.transaction(work);
  }

  /** Creates or updates a user; an empty password keeps the stored hash. */
  async upsertUser(user: User, password: string, tx?: SqlExecutor): Promise<{ user: User; created: boolean }> {
    const hash = password ? await hashPassword(password) : null;
    const work = async (x: SqlExecutor) => {
      const id = user.userId.toLowerCase();
      // User names are unique without regard to case; say so rather than fail on the constraint.
      const clash = await x.one('SELECT 1 AS x FROM users WHERE user_name_key = $1 AND user_id <> $2', [
        userNameKey(user.userName),
        id,
      ]);
      if (clash) throw conflict(`The user name ${user.userName.trim()} is already taken.`);
      const existing = await x.one<UserRow>('SELECT * FROM users WHERE user_id = $1', [id]);
      if (existing) {
        await x.run(
          `UPDATE users SET user_name = $2, user_name_key = $3, first_name = $4, last_name = $5, email = $6,
             password_hash = COALESCE($7, password_hash) WHERE user_id = $1`,
          [id, user.userName, userNameKey(user.userName), user.firstName, user.lastName, user.email, hash],
        );
        return {
          user: toUser({
            ...existing,
            user_name: user.userName,
            first_name: user.firstName,
            last_name: user.lastName,
            email: user.email,
          }),
          created: false,
        };
      }
      const createdAt = new Date().toISOString();
      await x.run('INSERT INTO users VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
        id,
        user.userName,
        userNameKey(user.userName),
        user.firstName,
        user.lastName,
        user.email,
        hash,
        createdAt,
      ]);
      return { user: { ...user, userId: id, createdAt }, created: true };
    };
    return tx ? work(tx) : this.store.transaction(work);
  }

  async listUserPermissions(
    userId: string,
  ): Promise<{ globalPermissions: string[]; accounts: AccountPermissions[]; userExists: boolean }> {
    const id = userId.toLowerCase();
    // One statement (one snapshot, one read transaction): the gateway asks for this on the first
    // request of a user after its 2 s cache (principal-loader.ts), so on an occasional query; as
    // three reads in three transactions it cost nine DuckDB calls, ~5 ms of a small query under
    // load (decision 0046). Rows: the user's own (kind 'user'), each global permission ('global'),
    // each membership with its permissions ('account'; a member holding none has one row with a
    // NULL permission).
    const rows = await this.store.all<{
      kind: 'user' | 'global' | 'account';
      account_id: string | null;
      account_name: string | null;
      permission: string | null;
    }>(
      `SELECT * FROM (
         SELECT 'user' AS kind, NULL::VARCHAR AS account_id, NULL::VARCHAR AS account_name, NULL::VARCHAR AS permission
           FROM users WHERE user_id = $1
         UNION ALL
         SELECT 'global', NULL, NULL, permission FROM global_permissions WHERE user_id = $1
         UNION ALL
         SELECT 'account', m.account_id, a.account_name, p.permission FROM account_members m
           JOIN accounts a ON a.account_id = m.account_id
           LEFT JOIN account_permissions p ON p.account_id = m.account_id AND p.user_id = m.user_id
           WHERE m.user_id = $1)
       ORDER BY kind, account_name, permission`,
      [id],
    );
    const byAccount = new Map<string, AccountPermissions>();
    const global: string[] = [];
    let userExists = false;
    for (const r of rows) {
      if (r.kind === 'user') userExists = true;
      else if (r.kind === 'global') global.push(r.permission!);
      else {
        let entry = byAccount.get(r.account_id!);
        if (!entry) {
          entry = { accountId: r.account_id!, accountName: r.account_name!, permissions: [] };
          byAccount.set(r.account_id!, entry);
        }
        if (r.permission) entry.permissions.push(r.permission);
      }
    }
    return { globalPermissions: global, accounts: [...byAccount.values()], userExists };
  }

  /**
   * Replaces the user's global permissions (empty accountId) or the user's permissions on one
   * account. Names are validated against the permission list (common/src/permissions.ts).
   */
  async setPermissions(userId: string, accountId: string, permissions: string[], tx?: SqlExecutor): Promise<void> {
    const names = [...new Set(permissions.map(normalizePermission))];
    const valid = accountId ? isAccountPermission : isGlobalPermission;
    const bad = names.filter((n) => !valid(n));
    if (bad.length) throw invalid(`Unknown ${accountId ? 'account' : 'global'} permission: ${bad.join(', ')}.`);
    const work = async (x: SqlExecutor) => {
      const id = userId.toLowerCase();
      if (accountId) {
        const acc = accountId.toLowerCase();
        await this.addMember(acc, id, x);
        await x.run('DELETE FROM account_permissions WHERE user_id = $1 AND account_id = $2', [id, acc]);
        for (const n of names) await x.run('INSERT INTO account_permissions VALUES ($1, $2, $3)', [id, acc, n]);
      } else {
        await x.run('DELETE FROM global_permissions WHERE user_id = $1', [id]);
        for (const n of names) await x.run('INSERT INTO global_permissions VALUES ($1, $2)', [id, n]);
      }
    };
    return tx ? work(tx) : this.store.transaction(work);
  }

  /**
   * Adds permissions without removing others (provisioning is additive). With an account, the
   * user becomes a member of it even when `permissions` is empty.
   */
  async grantPermissions(userId: string, accountId: string, permissions: string[], tx: SqlExecutor): Promise<void> {
    const names = [...new Set(permissions.map(normalizePermission))];
    const valid = accountId ? isAccountPermission : isGlobalPermission;
    const bad = names.filter((n) => !valid(n));
    if (bad.length) throw invalid(`Unknown ${accountId ? 'account' : 'global'} permission: ${bad.join(', ')}.`);
    const id = userId.toLowerCase();
    if (accountId) await this.addMember(accountId, id, tx);
    for (const n of names) {
      if (accountId)
        await tx.run('INSERT OR IGNORE INTO account_permissions VALUES ($1, $2, $3)', [id, accountId.toLowerCase(), n]);
      else await tx.run('INSERT OR IGNORE INTO global_permissions VALUES ($1, $2)', [id, n]);
    }
  }

  /** Makes the user a member of the account (no-op when already one); true when newly added. */
  async addMember(accountId: string, userId: string, tx: SqlExecutor): Promise<boolean> {
    const a = accountId.toLowerCase();
    const u = userId.toLowerCase();
    if (await tx.one('SELECT 1 AS x FROM account_members WHERE account_id = $1 AND user_id = $2', [a, u])) return false;
    await tx.run('INSERT INTO account_members VALUES ($1, $2, $3)', [a, u, new Date().toISOString()]);
    return true;
  }

  /** The account's members, each with the permissions held on it (possibly none), by user name. */
  async listAccountMembers(accountId: string): Promise<{ user: User; permissions: string[] }[]> {
    const a = accountId.toLowerCase();
    const rows = await this.store.all<UserRow>(
      `SELECT u.* FROM users u JOIN account_members m ON m.user_id = u.user_id WHERE m.account_id = $1 ORDER BY u.user_name_key`,
      [a],
    );
    const perms = await this.store.all<{ user_id: string; permission: string }>(
      'SELECT user_id, permission FROM account_permissions WHERE account_id = $1 ORDER BY permission',
      [a],
    );
    const byUser = new Map<string, string[]>();
    for (const p of perms) byUser.set(p.user_id, [...(byUser.get(p.user_id) ?? []), p.permission]);
    return rows.map((r) => ({ user: toUser(r), permissions: byUser.get(r.user_id) ?? [] }));
  }

  /** Whether the user is a member of the account; pass `tx` to check inside a write transaction. */
  async isAccountMember(accountId: string, userId: string, tx?: SqlExecutor): Promise<boolean> {
    const row = await (tx ?? this.store).one('SELECT 1 AS x FROM account_members WHERE account_id = $1 AND user_id = $2', [
      accountId.toLowerCase(),
      userId.toLowerCase(),
    ]);
    return row !== undefined;
  }

  /**
   * Makes the user a member of the account holding exactly `permissions` (may be empty). Both
   * must exist. `created` is true when the user was not a member before.
   */
  async putMember(
    accountId: string,
    userId: string,
    permissions: string[],
  ): Promise<{ created: boolean; permissions: string[] }> {
    const a = accountId.toLowerCase();
    const u = userId.toLowerCase();
    const names = [...new Set(permissions.map(normalizePermission))].sort();
    const bad = names.filter((n) => !isAccountPermission(n));
    if (bad.length) throw invalid(`Unknown account permission: ${bad.join(', ')}.`);
    return this.store.transaction(async (tx) => {
      if (!(await tx.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [a])))
        throw notFound(`Account ${a} does not exist.`);
      if (!(await tx.one('SELECT 1 AS x FROM users WHERE user_id = $1', [u]))) throw notFound(`User ${u} does not exist.`);
      const created = await this.addMember(a, u, tx);
      await tx.run('DELETE FROM account_permissions WHERE user_id = $1 AND account_id = $2', [u, a]);
      for (const n of names) await tx.run('INSERT INTO account_permissions VALUES ($1, $2, $3)', [u, a, n]);
      return { created, permissions: names };
    });
  }

  async listUsers(): Promise<User[]> {
    return (await this.store.all<UserRow>('SELECT * FROM users ORDER BY user_name_key')).map(toUser);
  }

  /**
   * Sets a user's password (API rule: password-policy.ts). With `currentPassword` (a user changing
   * their own) the stored password must match first. Existing tokens stay valid until they expire
   * (spec: tokens cannot be revoked); docs/decisions/0006-users-and-memberships.md says why.
   */
  async setPassword(userId: string, password: string, currentPassword?: string): Promise<void> {
    checkPassword(password);
    const id = userId.toLowerCase();
    const row = await this.store.one<UserRow>('SELECT * FROM users WHERE user_id = $1', [id]);
    if (!row) throw notFound(`User ${id} does not exist.`);
    if (currentPassword !== undefined && !(await verifyPassword(currentPassword, row.password_hash)))
      throw invalid(WRONG_CURRENT_PASSWORD);
    const hash = await hashPassword(password);
    await this.store.transaction((x) => x.run('UPDATE users SET password_hash = $2 WHERE user_id = $1', [id, hash]));
  }
}
