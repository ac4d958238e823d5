import { randomUUID } from 'node:crypto';
import { invalid, notFound, StrataError } from '@strata/common';
import type {
  Incident,
  IncidentComment,
  IncidentHistoryEvent,
  IncidentInput,
  WritePrecondition,
} from '@strata/proto/incidents/v1/incidents';
import { DirectoryRepository } from '../directory/directory-repository.js';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';
import { changeItems, historyMetadata } from './history-metadata.js';
import { type Actor, journal } from './incident-journal.js';
import {
  blankToUndefined,
  checkLength,
  DEFAULT_SEVERITY,
  DEFAULT_STATE,
  type HistoryEventType,
  INCIDENT_OPTIONAL_FIELDS,
  type IncidentState,
  jsonSnapshot,
  LIMITS,
  parseOwnerType,
  parseSeverity,
  parseState,
  requireGuid,
} from './incident-model.js';
import { commentRows, historyRows, type IncidentFilter, incidentRows } from './incident-repository.js';
import { checkTransition } from './state-machine.js';

const OWNER_REQUIRED = 'Incident owner is required.';
export const groupMissing = (groupId: string) => `Incident group ${groupId} does not exist.`;
const ownerNotMember = (userId: string) => `Incident user owner ${userId} is not a member of this account.`;
const assigneeNotMember = (userId: string) => `Incident assignee ${userId} is not a member of this account.`;
export const incidentMissing = (incidentId: string) => `Incident ${incidentId} does not exist.`;

/** Largest page of the incident list. */
const MAX_PAGE_SIZE = 1000;

export const incidentJson = (i: Incident) => jsonSnapshot(i, INCIDENT_OPTIONAL_FIELDS);
export const commentJson = (c: IncidentComment) => jsonSnapshot(c, []);

export interface SaveResult {
  incident: Incident;
  created: boolean;
  changed: boolean;
}

export interface SaveRequest {
  accountId: string;
  incidentId: string;
  input: IncidentInput;
  actor: Actor;
  /** Who a new incident is recorded as created by (the calling user). */
  creatorUserId: string;
  precondition?: WritePrecondition;
  now: string;
}

function checkPrecondition(incidentId: string, current: Incident | undefined, p: WritePrecondition | undefined): void {
  if (!p) return;
  if (p.mustNotExist && current) throw new StrataError('precondition_failed', `Incident ${incidentId} already exists.`);
  if ((p.mustExist || p.expectedVersion !== undefined) && !current)
    throw new StrataError('precondition_failed', incidentMissing(incidentId));
  if (p.expectedVersion !== undefined && current && current.version !== p.expectedVersion)
    throw new StrataError(
      'precondition_failed',
      `Incident ${incidentId} was changed by someone else (now version ${current.version}); reload it and try again.`,
    );
}

/**
 * Incidents, comments and history: every incident rule of docs/api.md (Incidents) that the master enforces. Each write
 * runs in one transaction with its history event and its notification outbox rows.
 */
export class IncidentService {
  private readonly directory: DirectoryRepository;

  constructor(private readonly store: RelationalStore) {
    this.directory = new DirectoryRepository(store);
  }

  async putIncident(req: Omit<SaveRequest, 'now'>): Promise<SaveResult> {
    const accountId = requireGuid(req.accountId, 'accountId');
    const incidentId = requireGuid(req.incidentId, 'incidentId');
    return this.store.transaction((tx) => this.save(tx, { ...req, accountId, incidentId, now: new Date().toISOString() }));
  }

  /**
   * Creates or updates an incident on the caller's transaction (the alert flow reuses it). A save
   * that changes nothing returns `changed: false` and writes nothing.
   */
  async save(tx: SqlExecutor, req: SaveRequest): Promise<SaveResult> {
    const { accountId, incidentId, input, now } = req;
    const current = await incidentRows.get(tx, accountId, incidentId);
    checkPrecondition(incidentId, current, req.precondition);

    const title = blankToUndefined(input.title);
    if (!title) throw invalid('Incident title is required.');
    checkLength(title, LIMITS.title, 'Incident title');
    const ownerTypeRaw = blankToUndefined(input.ownerType);
    const ownerIdRaw = blankToUndefined(input.ownerId);
    if (!ownerTypeRaw || !ownerIdRaw) throw invalid(OWNER_REQUIRED);
    const ownerType = parseOwnerType(ownerTypeRaw);
    const ownerId = requireGuid(ownerIdRaw.trim(), 'Incident owner id');
    let assigneeUserId = current?.assigneeUserId;
    if (input.assigneeUserId !== undefined)
      assigneeUserId = blankToUndefined(input.assigneeUserId) && requireGuid(input.assigneeUserId.trim(), 'Incident assignee id');
    let description = current?.description;
    if (input.description !== undefined) description = blankToUndefined(input.description);
    checkLength(description, LIMITS.description, 'Incident description');
    const severity = input.severity !== undefined ? parseSeverity(input.severity) : (current?.severity ?? DEFAULT_SEVERITY);
    const fromState = (current?.state ?? DEFAULT_STATE) as IncidentState;
    const toState = input.state !== undefined ? parseState(input.state) : fromState;
    const resolutionNote = blankToUndefined(input.resolutionNote);
    const reopenReason = blankToUndefined(input.reopenReason);
    checkLength(resolutionNote, LIMITS.note, 'Resolution note');
    checkLength(reopenReason, LIMITS.note, 'Reopen reason');
    // A new incident starts in OPEN: creating it in another state is the move OPEN -> state.
    const transition = checkTransition(fromState, toState, { resolutionNote, reopenReason });

    // Ownership rules apply to the values being set: a stored owner or assignee that has since
    // left the account does not block unrelated saves.
    const ownerChanged = !current || current.ownerType !== ownerType || current.ownerId !== ownerId;
    if (ownerChanged) await this.checkOwner(tx, accountId, ownerType, ownerId);
    if (assigneeUserId && assigneeUserId !== current?.assigneeUserId) {
      if (!(await this.directory.isAccountMember(accountId, assigneeUserId, tx)))
        throw invalid(assigneeNotMember(assigneeUserId));
    }

    const next: Incident = {
      accountId,
      incidentId,
      title,
      description,
      state: toState,
      severity,
      ownerType,
      ownerId,
      assigneeUserId,
      createdByUserId: current?.createdByUserId ?? req.creatorUserId,
      createdAt: current?.createdAt ?? now,
      updatedAt: now,
      resolvedAt: current?.resolvedAt,
      resolutionNote: current?.resolutionNote,
      reopenReason: current?.reopenReason,
      version: (current?.version ?? 0) + 1,
    };
    if (transition === 'resolve') {
      next.resolvedAt = now;
      next.resolutionNote = resolutionNote;
    } else if (transition === 'reopen') {
      next.resolvedAt = undefined;
      next.resolutionNote = undefined;
      next.reopenReason = reopenReason;
    }

    if (!current) {
      await incidentRows.insert(tx, next);
      await journal(tx, {
        eventType: 'INCIDENT_CREATED',
        actor: req.actor,
        incident: next,
        after: incidentJson(next),
        metadata: historyMetadata(next),
        now,
      });
      return { incident: next, created: true, changed: true };
    }

    const changes = changeItems(current, next);
    if (changes.length === 0) return { incident: current, created: false, changed: false };
    await incidentRows.update(tx, next);
    const eventType: HistoryEventType =
      transition === 'resolve' ? 'INCIDENT_RESOLVED' : transition === 'reopen' ? 'INCIDENT_REOPENED' : 'INCIDENT_UPDATED';
    await journal(tx, {
      eventType,
      actor: req.actor,
      incident: next,
      before: incidentJson(current),
      after: incidentJson(next),
      metadata: historyMetadata(next, { changes, reopenReason: transition === 'reopen' ? reopenReason : undefined }),
      changes,
      now,
    });
    return { incident: next, created: false, changed: true };
  }

  /** The ownership rules of an owner being set (alert rules check their incident owner on save too). */
  async checkOwner(tx: SqlExecutor, accountId: string, ownerType: string, ownerId: string): Promise<void> {
    if (ownerType === 'GROUP') {
      const group = await tx.one('SELECT 1 AS x FROM incident_groups WHERE account_id = $1 AND group_id = $2', [
        accountId,
        ownerId,
      ]);
      if (!group) throw invalid(groupMissing(ownerId));
    } else if (!(await this.directory.isAccountMember(accountId, ownerId, tx))) {
      throw invalid(ownerNotMember(ownerId));
    }
  }

  async getIncident(accountId: string, incidentId: string): Promise<Incident> {
    const a = requireGuid(accountId, 'accountId');
    const i = requireGuid(incidentId, 'incidentId');
    const incident = await this.store.read((x) => incidentRows.get(x, a, i));
    if (!incident) throw notFound(incidentMissing(i));
    return incident;
  }

  async listIncidents(
    accountId: string,
    filter: IncidentFilter,
    page: { offset: number; limit: number },
  ): Promise<{ incidents: Incident[]; total: number }> {
    const a = requireGuid(accountId, 'accountId');
    const clean: IncidentFilter = {
      states: filter.states.map(parseState),
      severities: filter.severities.map(parseSeverity),
      ownerIds: filter.ownerIds.map((id) => requireGuid(id, 'ownerId')),
      assigneeUserIds: filter.assigneeUserIds.map((id) => requireGuid(id, 'assigneeUserId')),
    };
    if (page.offset < 0) throw invalid('offset must not be negative.');
    if (page.limit < 0 || page.limit > MAX_PAGE_SIZE) throw invalid(`limit must be between 1 and ${MAX_PAGE_SIZE}.`);
    const limit = page.limit === 0 ? MAX_PAGE_SIZE : page.limit;
    return this.store.read((x) => incidentRows.list(x, a, clean, { offset: page.offset, limit }));
  }

  async deleteIncident(accountId: string, incidentId: string, precondition?: WritePrecondition): Promise<void> {
    const a = requireGuid(accountId, 'accountId');
    const i = requireGuid(incidentId, 'incidentId');
    await this.store.transaction(async (tx) => {
      const current = await incidentRows.get(tx, a, i);
      checkPrecondition(i, current, precondition);
      if (!current) throw notFound(incidentMissing(i));
      await incidentRows.delete(tx, a, i);
    });
  }

  async addComment(accountId: string, incidentId: string, authorUserId: string, body: string): Promise<IncidentComment> {
    const a = requireGuid(accountId, 'accountId');
    const i = requireGuid(incidentId, 'incidentId');
    if (!blankToUndefined(body)) throw invalid('Comment body is required.');
    checkLength(body, LIMITS.comment, 'Comment body');
    return this.store.transaction(async (tx) => {
      const incident = await incidentRows.get(tx, a, i);
      if (!incident) throw notFound(incidentMissing(i));
      const author = authorUserId.toLowerCase();
      return this.comment(
        tx,
        incident,
        { authorUserId: author, body, actor: { type: 'USER', id: author } },
        new Date().toISOString(),
      );
    });
  }

  /**
   * Writes a comment and its COMMENT_ADDED event on the caller's transaction (alert rules comment
   * as the system actor when they resolve an incident).
   */
  async comment(
    tx: SqlExecutor,
    incident: Incident,
    c: { authorUserId: string; body: string; actor: Actor },
    now: string,
  ): Promise<IncidentComment> {
    const comment: IncidentComment = {
      accountId: incident.accountId,
      incidentId: incident.incidentId,
      commentId: randomUUID(),
      authorUserId: c.authorUserId,
      body: c.body,
      createdAt: now,
    };
    await commentRows.insert(tx, comment);
    await journal(tx, {
      eventType: 'COMMENT_ADDED',
      actor: c.actor,
      incident,
      after: commentJson(comment),
      metadata: historyMetadata(incident),
      comment,
      now,
    });
    return comment;
  }

  async listComments(accountId: string, incidentId: string): Promise<IncidentComment[]> {
    const { accountId: a, incidentId: i } = await this.getIncident(accountId, incidentId);
    return this.store.read((x) => commentRows.list(x, a, i));
  }

  async listHistory(accountId: string, incidentId: string): Promise<IncidentHistoryEvent[]> {
    const { accountId: a, incidentId: i } = await this.getIncident(accountId, incidentId);
    return this.store.read((x) => historyRows.list(x, a, i));
  }
}
