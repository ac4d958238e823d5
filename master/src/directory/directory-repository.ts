import { invalid, isAccountPermission, isGlobalPermission, normalizePermission } from '@strata/common';
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

  async listUserPermissions(userId: string): Promise<{ globalPermissions: string[]; accounts: AccountPermissions[] }> {
    const id = userId.toLowerCase();
    const global = await this.store.all<{ permission: string }>(
      'SELECT permission FROM global_permissions WHERE user_id = $1 ORDER BY permission',
      [id],
    );
    const rows = await this.store.all<{ account_id: string; account_name: string; permission: string }>(
      `SELECT p.account_id, a.account_name, p.permission FROM account_permissions p
         JOIN accounts a ON a.account_id = p.account_id WHERE p.user_id = $1 ORDER BY a.account_name, p.permission`,
      [id],
    );
    const byAccount = new Map<string, AccountPermissions>();
    for (const r of rows) {
      let entry = byAccount.get(r.account_id);
      if (!entry) {
        entry = { accountId: r.account_id, accountName: r.account_name, permissions: [] };
        byAccount.set(r.account_id, entry);
      }
      entry.permissions.push(r.permission);
    }
    return { globalPermissions: global.map((g) => g.permission), accounts: [...byAccount.values()] };
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
        await x.run('DELETE FROM account_permissions WHERE user_id = $1 AND account_id = $2', [id, acc]);
        for (const n of names) await x.run('INSERT INTO account_permissions VALUES ($1, $2, $3)', [id, acc, n]);
      } else {
        await x.run('DELETE FROM global_permissions WHERE user_id = $1', [id]);
        for (const n of names) await x.run('INSERT INTO global_permissions VALUES ($1, $2)', [id, n]);
      }
    };
    return tx ? work(tx) : this.store.transaction(work);
  }

  /** Adds permissions without removing others (provisioning is additive). */
  async grantPermissions(userId: string, accountId: string, permissions: string[], tx: SqlExecutor): Promise<void> {
    const names = [...new Set(permissions.map(normalizePermission))];
    const valid = accountId ? isAccountPermission : isGlobalPermission;
    const bad = names.filter((n) => !valid(n));
    if (bad.length) throw invalid(`Unknown ${accountId ? 'account' : 'global'} permission: ${bad.join(', ')}.`);
    const id = userId.toLowerCase();
    for (const n of names) {
      if (accountId)
        await tx.run('INSERT OR IGNORE INTO account_permissions VALUES ($1, $2, $3)', [id, accountId.toLowerCase(), n]);
      else await tx.run('INSERT OR IGNORE INTO global_permissions VALUES ($1, $2)', [id, n]);
    }
  }

  /** Users holding any permission on the account: its members. */
  async listAccountMembers(accountId: string): Promise<User[]> {
    const rows = await this.store.all<UserRow>(
      `SELECT * FROM users WHERE user_id IN (SELECT user_id FROM account_permissions WHERE account_id = $1) ORDER BY user_name`,
      [accountId.toLowerCase()],
    );
    return rows.map(toUser);
  }

  /** Whether the user holds any permission on the account; pass `tx` to check inside a write transaction. */
  async isAccountMember(accountId: string, userId: string, tx?: SqlExecutor): Promise<boolean> {
    const row = await (tx ?? this.store).one(
      'SELECT 1 AS x FROM account_permissions WHERE account_id = $1 AND user_id = $2 LIMIT 1',
      [accountId.toLowerCase(), userId.toLowerCase()],
    );
    return row !== undefined;
  }
}
