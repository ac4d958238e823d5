import type { Group, GroupMember } from '@strata/proto/incidents/v1/groups';
import type { SqlExecutor } from '../store/relational-store.js';

interface GroupRow {
  account_id: string;
  group_id: string;
  name: string;
  description: string | null;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
  [k: string]: unknown;
}

const toGroup = (r: GroupRow): Group => ({
  accountId: r.account_id,
  groupId: r.group_id,
  name: r.name,
  description: r.description ?? undefined,
  createdByUserId: r.created_by_user_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface MemberRow {
  account_id: string;
  group_id: string;
  user_id: string;
  added_by_user_id: string;
  added_at: string;
  [k: string]: unknown;
}

const toMember = (r: MemberRow): GroupMember => ({
  accountId: r.account_id,
  groupId: r.group_id,
  userId: r.user_id,
  addedByUserId: r.added_by_user_id,
  addedAt: r.added_at,
});

/** SQL of groups and their members. Every function runs on the caller's executor. */
export const groupRows = {
  async get(x: SqlExecutor, accountId: string, groupId: string): Promise<Group | undefined> {
    const row = await x.one<GroupRow>('SELECT * FROM incident_groups WHERE account_id = $1 AND group_id = $2', [
      accountId,
      groupId,
    ]);
    return row && toGroup(row);
  },

  async list(x: SqlExecutor, accountId: string): Promise<Group[]> {
    const rows = await x.all<GroupRow>('SELECT * FROM incident_groups WHERE account_id = $1 ORDER BY lower(name), group_id', [
      accountId,
    ]);
    return rows.map(toGroup);
  },

  async insert(x: SqlExecutor, g: Group): Promise<void> {
    await x.run('INSERT INTO incident_groups VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      g.accountId,
      g.groupId,
      g.name,
      g.description ?? null,
      g.createdByUserId,
      g.createdAt,
      g.updatedAt,
    ]);
  },

  async update(x: SqlExecutor, g: Group): Promise<void> {
    await x.run(
      `UPDATE incident_groups SET name = $3, description = $4, created_by_user_id = $5, created_at = $6, updated_at = $7
       WHERE account_id = $1 AND group_id = $2`,
      [g.accountId, g.groupId, g.name, g.description ?? null, g.createdByUserId, g.createdAt, g.updatedAt],
    );
  },

  async delete(x: SqlExecutor, accountId: string, groupId: string): Promise<void> {
    await x.run('DELETE FROM incident_groups WHERE account_id = $1 AND group_id = $2', [accountId, groupId]);
  },
};

export const memberRows = {
  async list(x: SqlExecutor, accountId: string, groupId: string): Promise<GroupMember[]> {
    const rows = await x.all<MemberRow>(
      'SELECT * FROM incident_group_members WHERE account_id = $1 AND group_id = $2 ORDER BY added_at, user_id',
      [accountId, groupId],
    );
    return rows.map(toMember);
  },

  async get(x: SqlExecutor, accountId: string, groupId: string, userId: string): Promise<GroupMember | undefined> {
    const row = await x.one<MemberRow>(
      'SELECT * FROM incident_group_members WHERE account_id = $1 AND group_id = $2 AND user_id = $3',
      [accountId, groupId, userId],
    );
    return row && toMember(row);
  },

  /** Adds the membership, or replaces the stored record when the user is already a member. */
  async upsert(x: SqlExecutor, m: GroupMember): Promise<void> {
    await x.run('INSERT OR REPLACE INTO incident_group_members VALUES ($1, $2, $3, $4, $5)', [
      m.accountId,
      m.groupId,
      m.userId,
      m.addedByUserId,
      m.addedAt,
    ]);
  },

  async delete(x: SqlExecutor, accountId: string, groupId: string, userId: string): Promise<void> {
    await x.run('DELETE FROM incident_group_members WHERE account_id = $1 AND group_id = $2 AND user_id = $3', [
      accountId,
      groupId,
      userId,
    ]);
  },

  async deleteAll(x: SqlExecutor, accountId: string, groupId: string): Promise<void> {
    await x.run('DELETE FROM incident_group_members WHERE account_id = $1 AND group_id = $2', [accountId, groupId]);
  },
};
