import { invalid, notFound } from '@strata/common';
import type { Group, GroupMember, PutGroupRequest } from '@strata/proto/incidents/v1/groups';
import { DirectoryRepository } from '../directory/directory-repository.js';
import { blankToUndefined, checkLength, requireGuid } from '../incidents/incident-model.js';
import { incidentRows } from '../incidents/incident-repository.js';
import { groupMissing } from '../incidents/incident-service.js';
import type { RelationalStore } from '../store/relational-store.js';
import { groupRows, memberRows } from './group-repository.js';

const GROUP_NAME_REQUIRED = 'Group name is required.';
const userNotAccountMember = (userId: string) => `User ${userId} is not a member of this account.`;
const groupStillOwns = (groupId: string, count: number) => `Incident group ${groupId} still owns ${count} incidents.`;

const MAX_NAME = 256;
const MAX_DESCRIPTION = 4096;

/** A supplied createdAt must be a real ISO 8601 time; it is stored in UTC. */
function parseTimestamp(raw: string): string {
  const ms = Date.parse(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(ms)) throw invalid('createdAt must be an ISO 8601 timestamp.');
  return new Date(ms).toISOString();
}

/**
 * Groups of users and their memberships (docs/api.md, Groups). Groups have no state:
 * they are present or deleted. Nothing here publishes a notification.
 */
export class GroupService {
  private readonly directory: DirectoryRepository;

  constructor(private readonly store: RelationalStore) {
    this.directory = new DirectoryRepository(store);
  }

  /**
   * Upsert: name required; an absent description keeps the stored one, an empty one is stored as
   * absent; createdBy/createdAt kept if supplied; updatedAt now.
   */
  async putGroup(req: PutGroupRequest): Promise<{ group: Group; created: boolean }> {
    const accountId = requireGuid(req.accountId, 'accountId');
    const groupId = requireGuid(req.groupId, 'groupId');
    const name = blankToUndefined(req.name)?.trim();
    if (!name) throw invalid(GROUP_NAME_REQUIRED);
    checkLength(name, MAX_NAME, 'Group name');
    checkLength(req.description, MAX_DESCRIPTION, 'Group description');
    const suppliedCreator = blankToUndefined(req.createdByUserId);
    const createdByUserId = suppliedCreator && requireGuid(suppliedCreator.trim(), 'createdByUserId');
    const suppliedCreatedAt = blankToUndefined(req.createdAt);
    const createdAt = suppliedCreatedAt && parseTimestamp(suppliedCreatedAt.trim());
    return this.store.transaction(async (tx) => {
      const current = await groupRows.get(tx, accountId, groupId);
      const now = new Date().toISOString();
      // Absent keeps the stored description (none on create); empty is stored as absent.
      const description = req.description === undefined ? current?.description : req.description || undefined;
      const group: Group = {
        accountId,
        groupId,
        name,
        description,
        createdByUserId: createdByUserId ?? current?.createdByUserId ?? req.actorUserId.toLowerCase(),
        createdAt: createdAt ?? current?.createdAt ?? now,
        updatedAt: now,
      };
      if (current) await groupRows.update(tx, group);
      else await groupRows.insert(tx, group);
      return { group, created: !current };
    });
  }

  async listGroups(accountId: string): Promise<Group[]> {
    const a = requireGuid(accountId, 'accountId');
    return this.store.read((x) => groupRows.list(x, a));
  }

  async getGroup(accountId: string, groupId: string): Promise<Group> {
    const a = requireGuid(accountId, 'accountId');
    const g = requireGuid(groupId, 'groupId');
    const group = await this.store.read((x) => groupRows.get(x, a, g));
    if (!group) throw notFound(groupMissing(g));
    return group;
  }

  /** Refused while the group owns incidents; otherwise memberships, then the group, in one transaction. */
  async deleteGroup(accountId: string, groupId: string): Promise<void> {
    const a = requireGuid(accountId, 'accountId');
    const g = requireGuid(groupId, 'groupId');
    await this.store.transaction(async (tx) => {
      if (!(await groupRows.get(tx, a, g))) throw notFound(groupMissing(g));
      const owned = await incidentRows.countOwnedByGroup(tx, a, g);
      if (owned > 0) throw invalid(groupStillOwns(g, owned));
      await memberRows.deleteAll(tx, a, g);
      await groupRows.delete(tx, a, g);
    });
  }

  async listMembers(accountId: string, groupId: string): Promise<GroupMember[]> {
    const { accountId: a, groupId: g } = await this.getGroup(accountId, groupId);
    return this.store.read((x) => memberRows.list(x, a, g));
  }

  /** The group must exist and the user must be a member of the account; a repeated add replaces the record. */
  async putMember(accountId: string, groupId: string, userId: string, actorUserId: string) {
    const a = requireGuid(accountId, 'accountId');
    const g = requireGuid(groupId, 'groupId');
    const u = requireGuid(userId, 'userId');
    return this.store.transaction(async (tx) => {
      if (!(await groupRows.get(tx, a, g))) throw invalid(groupMissing(g));
      if (!(await this.directory.isAccountMember(a, u, tx))) throw invalid(userNotAccountMember(u));
      const existed = (await memberRows.get(tx, a, g, u)) !== undefined;
      const member: GroupMember = {
        accountId: a,
        groupId: g,
        userId: u,
        addedByUserId: actorUserId.toLowerCase(),
        addedAt: new Date().toISOString(),
      };
      await memberRows.upsert(tx, member);
      return { member, created: !existed };
    });
  }

  async deleteMember(accountId: string, groupId: string, userId: string): Promise<void> {
    const a = requireGuid(accountId, 'accountId');
    const g = requireGuid(groupId, 'groupId');
    const u = requireGuid(userId, 'userId');
    await this.store.transaction(async (tx) => {
      if (!(await groupRows.get(tx, a, g))) throw notFound(groupMissing(g));
      if (!(await memberRows.get(tx, a, g, u))) throw notFound(`User ${u} is not a member of group ${g}.`);
      await memberRows.delete(tx, a, g, u);
    });
  }
}
