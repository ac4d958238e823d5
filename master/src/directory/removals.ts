import { invalid, notFound } from '@strata/common';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

/**
 * What deleting a user, a membership or an account removes, and what blocks it. The rule is the
 * one the spec gives for groups ("blocked while the group owns one or more incidents"): nothing is
 * deleted that would leave an incident without a valid owner or assignee; what only hangs off the
 * deleted thing (permissions, group memberships, settings) goes with it, in one transaction.
 */

export const userStillOwnsInAccount = (userId: string, count: number) =>
  `User ${userId} still owns or is assigned ${count} incidents of this account.`;
export const userStillOwns = (userId: string, count: number) => `User ${userId} still owns or is assigned ${count} incidents.`;

/** Incidents the user owns (as a user owner) or is assigned, in one account or (no account) anywhere. */
async function incidentsHeldBy(tx: SqlExecutor, userId: string, accountId?: string): Promise<number> {
  const row = await tx.one<{ n: number }>(
    `SELECT count(*)::INTEGER AS n FROM incidents
       WHERE ((owner_type = 'USER' AND owner_id = $1) OR assignee_user_id = $1) AND ($2 IS NULL OR account_id = $2)`,
    [userId, accountId ?? null],
  );
  return row?.n ?? 0;
}

async function count(tx: SqlExecutor, table: string, accountId: string): Promise<number> {
  const row = await tx.one<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM ${table} WHERE account_id = $1`, [accountId]);
  return row?.n ?? 0;
}

/**
 * Removes a user from an account: their permissions there, their memberships in the account's
 * groups, then the membership. Refused while they own or are assigned incidents of the account.
 */
export async function removeMember(store: RelationalStore, accountId: string, userId: string): Promise<void> {
  const a = accountId.toLowerCase();
  const u = userId.toLowerCase();
  await store.transaction(async (tx) => {
    if (!(await tx.one('SELECT 1 AS x FROM account_members WHERE account_id = $1 AND user_id = $2', [a, u])))
      throw notFound(`User ${u} is not a member of this account.`);
    const held = await incidentsHeldBy(tx, u, a);
    if (held > 0) throw invalid(userStillOwnsInAccount(u, held));
    await tx.run('DELETE FROM incident_group_members WHERE account_id = $1 AND user_id = $2', [a, u]);
    await tx.run('DELETE FROM account_permissions WHERE account_id = $1 AND user_id = $2', [a, u]);
    await tx.run('DELETE FROM account_members WHERE account_id = $1 AND user_id = $2', [a, u]);
  });
}

/**
 * Deletes a user: every membership, permission and group membership, then the user. Refused while
 * they own or are assigned incidents in any account. Comments, history and `createdBy` fields keep
 * the id as a record of who acted. False when there was no such user.
 */
export async function deleteUser(store: RelationalStore, userId: string): Promise<boolean> {
  const u = userId.toLowerCase();
  return store.transaction(async (tx) => {
    if (!(await tx.one('SELECT 1 AS x FROM users WHERE user_id = $1', [u]))) return false;
    const held = await incidentsHeldBy(tx, u);
    if (held > 0) throw invalid(userStillOwns(u, held));
    await tx.run('DELETE FROM incident_group_members WHERE user_id = $1', [u]);
    await tx.run('DELETE FROM account_permissions WHERE user_id = $1', [u]);
    await tx.run('DELETE FROM account_members WHERE user_id = $1', [u]);
    await tx.run('DELETE FROM global_permissions WHERE user_id = $1', [u]);
    await tx.run('DELETE FROM users WHERE user_id = $1', [u]);
    return true;
  });
}

/** Tables whose rows of an account block its deletion, with the words the refusal uses. */
const BLOCKERS: { table: string; noun: string }[] = [
  { table: 'incidents', noun: 'incidents' },
  { table: 'incident_groups', noun: 'groups' },
  { table: 'alert_incident_links', noun: 'alert incident links' },
  { table: 'alert_runtime_states', noun: 'alert runtime states' },
];

/** Tables whose rows of an account are removed with it (a new account-owned table belongs here). */
const REMOVED_WITH_ACCOUNT = [
  'account_settings',
  'account_permissions',
  'account_members',
  'notification_outbox',
  'saved_queries',
  'agent_registration_tokens',
  'agent_devices',
];

/**
 * Deletes an account record with its memberships, permissions, settings, saved queries, agent
 * registration tokens and devices, and queued mail. Refused,
 * naming the counts, while incidents, groups or alert records of it exist: those are the user's
 * work and are deleted through their own endpoints first. (Stored event data lives on the workers;
 * the gateway refuses before calling this while any schema holds data.) False when no such account.
 */
export async function deleteAccount(store: RelationalStore, accountId: string): Promise<boolean> {
  const a = accountId.toLowerCase();
  return store.transaction(async (tx) => {
    if (!(await tx.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [a]))) return false;
    const left: string[] = [];
    for (const b of BLOCKERS) {
      const n = await count(tx, b.table, a);
      if (n > 0) left.push(`${n} ${b.noun}`);
    }
    if (left.length > 0) throw invalid(`Account ${a} still has ${left.join(', ')}; delete them first.`);
    for (const table of REMOVED_WITH_ACCOUNT) await tx.run(`DELETE FROM ${table} WHERE account_id = $1`, [a]);
    await tx.run('DELETE FROM accounts WHERE account_id = $1', [a]);
    return true;
  });
}
