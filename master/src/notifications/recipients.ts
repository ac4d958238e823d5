import type { Incident } from '@strata/proto/incidents/v1/incidents';
import type { SqlExecutor } from '../store/relational-store.js';

export interface Recipient {
  userId: string;
  address: string;
}

interface UserRow {
  user_id: string;
  user_name: string;
  first_name: string;
  last_name: string;
  email: string;
  [k: string]: unknown;
}

/** "First Last (user name)" or the user name; the user id when the user is unknown. */
export async function userLabel(x: SqlExecutor, userId: string): Promise<string> {
  const u = await x.one<UserRow>('SELECT * FROM users WHERE user_id = $1', [userId]);
  if (!u) return userId;
  const full = `${u.first_name} ${u.last_name}`.trim();
  return full ? `${full} (${u.user_name})` : u.user_name;
}

export async function ownerLabel(x: SqlExecutor, incident: Incident): Promise<string> {
  if (incident.ownerType === 'GROUP') {
    const g = await x.one<{ name: string }>('SELECT name FROM incident_groups WHERE account_id = $1 AND group_id = $2', [
      incident.accountId,
      incident.ownerId,
    ]);
    return `group ${g?.name ?? '?'} (${incident.ownerId})`;
  }
  return `user ${await userLabel(x, incident.ownerId)}`;
}

/**
 * Who is told about a change (docs/operations.md, Incident notification e-mail): the assignee if any; every member of the owner group
 * if a group owns the incident; the owner user if a user owns it. De-duplicated by user and by
 * address (two users sharing one mailbox get one mail); users without an e-mail address are
 * skipped. Order: assignee, owner, group members by user id.
 */
export async function incidentRecipients(x: SqlExecutor, incident: Incident): Promise<Recipient[]> {
  const userIds: string[] = [];
  if (incident.assigneeUserId) userIds.push(incident.assigneeUserId);
  if (incident.ownerType === 'USER') userIds.push(incident.ownerId);
  else {
    const members = await x.all<{ user_id: string }>(
      'SELECT user_id FROM incident_group_members WHERE account_id = $1 AND group_id = $2 ORDER BY user_id',
      [incident.accountId, incident.ownerId],
    );
    userIds.push(...members.map((m) => m.user_id));
  }
  const distinct = [...new Set(userIds)];
  // One query for every address (a large owner group is one round trip inside the transaction).
  const rows = distinct.length
    ? await x.all<{ user_id: string; email: string }>(
        `SELECT user_id, email FROM users WHERE user_id IN (${distinct.map((_, i) => `$${i + 1}`).join(', ')})`,
        distinct,
      )
    : [];
  const emailOf = new Map(rows.map((r) => [r.user_id, r.email]));
  const out: Recipient[] = [];
  const seenAddresses = new Set<string>();
  for (const userId of distinct) {
    const address = emailOf.get(userId)?.trim() ?? '';
    if (!address || seenAddresses.has(address.toLowerCase())) continue;
    seenAddresses.add(address.toLowerCase());
    out.push({ userId, address });
  }
  return out;
}
