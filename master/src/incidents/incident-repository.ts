import type { Incident, IncidentComment, IncidentHistoryEvent } from '@strata/proto/incidents/v1/incidents';
import type { SqlExecutor, SqlParam } from '../store/relational-store.js';

interface IncidentRow {
  account_id: string;
  incident_id: string;
  title: string;
  description: string | null;
  state: string;
  severity: string;
  owner_type: string;
  owner_id: string;
  assignee_user_id: string | null;
  created_by_user_id: string;
  created_at: string;
  updated_at: string;
  resolved_at: string | null;
  resolution_note: string | null;
  reopen_reason: string | null;
  version: number;
  [k: string]: unknown;
}

const opt = (v: string | null) => v ?? undefined;

const toIncident = (r: IncidentRow): Incident => ({
  accountId: r.account_id,
  incidentId: r.incident_id,
  title: r.title,
  description: opt(r.description),
  state: r.state,
  severity: r.severity,
  ownerType: r.owner_type,
  ownerId: r.owner_id,
  assigneeUserId: opt(r.assignee_user_id),
  createdByUserId: r.created_by_user_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  resolvedAt: opt(r.resolved_at),
  resolutionNote: opt(r.resolution_note),
  reopenReason: opt(r.reopen_reason),
  version: Number(r.version),
});

const incidentParams = (i: Incident): SqlParam[] => [
  i.accountId,
  i.incidentId,
  i.title,
  i.description ?? null,
  i.state,
  i.severity,
  i.ownerType,
  i.ownerId,
  i.assigneeUserId ?? null,
  i.createdByUserId,
  i.createdAt,
  i.updatedAt,
  i.resolvedAt ?? null,
  i.resolutionNote ?? null,
  i.reopenReason ?? null,
  i.version,
];

export interface IncidentFilter {
  states: string[];
  severities: string[];
  ownerIds: string[];
  assigneeUserIds: string[];
}

/** Builds `col IN ($n, …)` with bound parameters (values never reach the SQL text). */
function inList(column: string, values: string[], params: SqlParam[]): string {
  const placeholders = values.map((v) => {
    params.push(v);
    return `$${params.length}`;
  });
  return `${column} IN (${placeholders.join(', ')})`;
}

/** SQL of incidents, their comments and history events. Every function runs on the caller's executor. */
export const incidentRows = {
  async get(x: SqlExecutor, accountId: string, incidentId: string): Promise<Incident | undefined> {
    const row = await x.one<IncidentRow>('SELECT * FROM incidents WHERE account_id = $1 AND incident_id = $2', [
      accountId,
      incidentId,
    ]);
    return row && toIncident(row);
  },

  async insert(x: SqlExecutor, i: Incident): Promise<void> {
    await x.run(
      'INSERT INTO incidents VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)',
      incidentParams(i),
    );
  },

  async update(x: SqlExecutor, i: Incident): Promise<void> {
    await x.run(
      `UPDATE incidents SET title = $3, description = $4, state = $5, severity = $6, owner_type = $7, owner_id = $8,
         assignee_user_id = $9, created_by_user_id = $10, created_at = $11, updated_at = $12, resolved_at = $13,
         resolution_note = $14, reopen_reason = $15, version = $16
       WHERE account_id = $1 AND incident_id = $2`,
      incidentParams(i),
    );
  },

  async list(
    x: SqlExecutor,
    accountId: string,
    filter: IncidentFilter,
    page: { offset: number; limit: number },
  ): Promise<{ incidents: Incident[]; total: number }> {
    const params: SqlParam[] = [accountId];
    const where = ['account_id = $1'];
    if (filter.states.length) where.push(inList('state', filter.states, params));
    if (filter.severities.length) where.push(inList('severity', filter.severities, params));
    if (filter.ownerIds.length) where.push(inList('owner_id', filter.ownerIds, params));
    if (filter.assigneeUserIds.length) where.push(inList('assignee_user_id', filter.assigneeUserIds, params));
    const clause = where.join(' AND ');
    const total = await x.one<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM incidents WHERE ${clause}`, params);
    const rows = await x.all<IncidentRow>(
      `SELECT * FROM incidents WHERE ${clause} ORDER BY updated_at DESC, incident_id LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, page.limit, page.offset],
    );
    return { incidents: rows.map(toIncident), total: total?.n ?? 0 };
  },

  /** Removes the incident with everything that refers to it (comments, history, alert links). */
  async delete(x: SqlExecutor, accountId: string, incidentId: string): Promise<void> {
    for (const table of ['incident_comments', 'incident_history', 'alert_incident_links', 'incidents']) {
      await x.run(`DELETE FROM ${table} WHERE account_id = $1 AND incident_id = $2`, [accountId, incidentId]);
    }
  },

  async countOwnedByGroup(x: SqlExecutor, accountId: string, groupId: string): Promise<number> {
    const row = await x.one<{ n: number }>(
      "SELECT count(*)::INTEGER AS n FROM incidents WHERE account_id = $1 AND owner_type = 'GROUP' AND owner_id = $2",
      [accountId, groupId],
    );
    return row?.n ?? 0;
  },
};

interface CommentRow {
  account_id: string;
  incident_id: string;
  comment_id: string;
  author_user_id: string;
  body: string;
  created_at: string;
  [k: string]: unknown;
}

const toComment = (r: CommentRow): IncidentComment => ({
  accountId: r.account_id,
  incidentId: r.incident_id,
  commentId: r.comment_id,
  authorUserId: r.author_user_id,
  body: r.body,
  createdAt: r.created_at,
});

/**
 * The next `seq` of an incident's comments or history events: one more than the incident's
 * highest. Not the `incident_record_seq` sequence: a DuckDB sequence is not transactional (a
 * rolled-back transaction still consumes values), so replaying the committed statements on a
 * standby (docs/decisions/0017-database-standbys.md) would number rows differently from the leader.
 * Computed from the table, the value depends only on committed rows; `$1`/`$2` are the account and
 * incident of the INSERT.
 */
function nextRecordSeq(table: 'incident_comments' | 'incident_history'): string {
  return `(SELECT coalesce(max(seq), 0) + 1 FROM ${table} WHERE account_id = $1 AND incident_id = $2)`;
}

export const commentRows = {
  async insert(x: SqlExecutor, c: IncidentComment): Promise<void> {
    await x.run(`INSERT INTO incident_comments VALUES ($1, $2, $3, ${nextRecordSeq('incident_comments')}, $4, $5, $6)`, [
      c.accountId,
      c.incidentId,
      c.commentId,
      c.authorUserId,
      c.body,
      c.createdAt,
    ]);
  },
  async list(x: SqlExecutor, accountId: string, incidentId: string): Promise<IncidentComment[]> {
    const rows = await x.all<CommentRow>(
      'SELECT * FROM incident_comments WHERE account_id = $1 AND incident_id = $2 ORDER BY seq',
      [accountId, incidentId],
    );
    return rows.map(toComment);
  },
};

interface HistoryRow {
  account_id: string;
  incident_id: string;
  event_id: string;
  event_type: string;
  actor_type: string;
  actor_id: string;
  timestamp: string;
  before_json: string | null;
  after_json: string | null;
  metadata_json: string;
  [k: string]: unknown;
}

const toEvent = (r: HistoryRow): IncidentHistoryEvent => ({
  accountId: r.account_id,
  incidentId: r.incident_id,
  eventId: r.event_id,
  eventType: r.event_type,
  actorType: r.actor_type,
  actorId: r.actor_id,
  timestamp: r.timestamp,
  beforeJson: opt(r.before_json),
  afterJson: opt(r.after_json),
  metadataJson: r.metadata_json,
});

export const historyRows = {
  async insert(x: SqlExecutor, e: IncidentHistoryEvent): Promise<void> {
    await x.run(
      `INSERT INTO incident_history VALUES ($1, $2, $3, ${nextRecordSeq('incident_history')}, $4, $5, $6, $7, $8, $9, $10)`,
      [
        e.accountId,
        e.incidentId,
        e.eventId,
        e.eventType,
        e.actorType,
        e.actorId,
        e.timestamp,
        e.beforeJson ?? null,
        e.afterJson ?? null,
        e.metadataJson,
      ],
    );
  },
  async list(x: SqlExecutor, accountId: string, incidentId: string): Promise<IncidentHistoryEvent[]> {
    const rows = await x.all<HistoryRow>(
      'SELECT * FROM incident_history WHERE account_id = $1 AND incident_id = $2 ORDER BY seq',
      [accountId, incidentId],
    );
    return rows.map(toEvent);
  },
};
