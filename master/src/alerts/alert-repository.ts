import type { AlertIncidentLink, AlertRuntimeState } from '@strata/proto/incidents/v1/alerts';
import type { SqlExecutor } from '../store/relational-store.js';

interface LinkRow {
  account_id: string;
  alert_record_id: string;
  incident_id: string;
  link_source: string;
  created_by_user_id: string;
  created_at: string;
  [k: string]: unknown;
}

const toLink = (r: LinkRow): AlertIncidentLink => ({
  accountId: r.account_id,
  alertRecordId: r.alert_record_id,
  incidentId: r.incident_id,
  linkSource: r.link_source,
  createdByUserId: r.created_by_user_id,
  createdAt: r.created_at,
});

interface StateRow {
  account_id: string;
  alert_record_id: string;
  state: string;
  updated_by_user_id: string;
  updated_at: string;
  [k: string]: unknown;
}

const toState = (r: StateRow): AlertRuntimeState => ({
  accountId: r.account_id,
  alertRecordId: r.alert_record_id,
  state: r.state,
  updatedByUserId: r.updated_by_user_id,
  updatedAt: r.updated_at,
});

/** SQL of alert-to-incident links. */
export const linkRows = {
  async list(x: SqlExecutor, accountId: string): Promise<AlertIncidentLink[]> {
    const rows = await x.all<LinkRow>(
      'SELECT * FROM alert_incident_links WHERE account_id = $1 ORDER BY created_at, alert_record_id, incident_id',
      [accountId],
    );
    return rows.map(toLink);
  },

  async get(
    x: SqlExecutor,
    accountId: string,
    alertRecordId: string,
    incidentId: string,
  ): Promise<AlertIncidentLink | undefined> {
    const row = await x.one<LinkRow>(
      'SELECT * FROM alert_incident_links WHERE account_id = $1 AND alert_record_id = $2 AND incident_id = $3',
      [accountId, alertRecordId, incidentId],
    );
    return row && toLink(row);
  },

  /** The incident an earlier alert-driven call created or found for this alert, if it still exists. */
  async triggeredIncidentId(x: SqlExecutor, accountId: string, alertRecordId: string): Promise<string | undefined> {
    const row = await x.one<{ incident_id: string }>(
      `SELECT l.incident_id FROM alert_incident_links l
         JOIN incidents i ON i.account_id = l.account_id AND i.incident_id = l.incident_id
       WHERE l.account_id = $1 AND l.alert_record_id = $2 AND l.link_source = 'alert-triggered'
       ORDER BY l.created_at LIMIT 1`,
      [accountId, alertRecordId],
    );
    return row?.incident_id;
  },

  /** Creates the link or replaces its source (a link is one row per alert and incident). */
  async upsert(x: SqlExecutor, link: AlertIncidentLink): Promise<void> {
    await x.run('INSERT OR REPLACE INTO alert_incident_links VALUES ($1, $2, $3, $4, $5, $6)', [
      link.accountId,
      link.alertRecordId,
      link.incidentId,
      link.linkSource,
      link.createdByUserId,
      link.createdAt,
    ]);
  },

  async delete(x: SqlExecutor, accountId: string, alertRecordId: string, incidentId: string): Promise<void> {
    await x.run('DELETE FROM alert_incident_links WHERE account_id = $1 AND alert_record_id = $2 AND incident_id = $3', [
      accountId,
      alertRecordId,
      incidentId,
    ]);
  },
};

/** SQL of alert runtime states (one per alert). */
export const runtimeStateRows = {
  async list(x: SqlExecutor, accountId: string): Promise<AlertRuntimeState[]> {
    const rows = await x.all<StateRow>('SELECT * FROM alert_runtime_states WHERE account_id = $1 ORDER BY alert_record_id', [
      accountId,
    ]);
    return rows.map(toState);
  },

  async get(x: SqlExecutor, accountId: string, alertRecordId: string): Promise<AlertRuntimeState | undefined> {
    const row = await x.one<StateRow>('SELECT * FROM alert_runtime_states WHERE account_id = $1 AND alert_record_id = $2', [
      accountId,
      alertRecordId,
    ]);
    return row && toState(row);
  },

  async upsert(x: SqlExecutor, s: AlertRuntimeState): Promise<void> {
    await x.run('INSERT OR REPLACE INTO alert_runtime_states VALUES ($1, $2, $3, $4, $5)', [
      s.accountId,
      s.alertRecordId,
      s.state,
      s.updatedByUserId,
      s.updatedAt,
    ]);
  },
};
