import { randomUUID } from 'node:crypto';
import { invalid, notFound, parseRetention, SettingKeys } from '@strata/common';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

export interface RetentionRule {
  accountId: string;
  /** Empty: the account's retention. */
  schema: string;
  /** Milliseconds kept; 0 = forever. */
  retentionMs: number;
}

export interface SchemaDrop {
  dropId: string;
  accountId: string;
  schema: string;
  droppedAt: string;
}

export interface SchemaRetention {
  schema: string;
  retention: string;
  updatedAt: string;
  updatedBy: string;
}

/** How long schema drops are handed to workers: a worker offline longer applies none it missed. */
export const DROP_MEMORY_DAYS = 30;
const MAX_SCHEMA_NAME = 256;

/** Milliseconds of a stored retention text; 0 for forever. */
const retentionMsOf = (text: string): number => {
  const ms = parseRetention(text);
  return ms === undefined || !Number.isFinite(ms) ? 0 : ms;
};

/**
 * The storage policy in the relational store: retention overrides per schema, schema drops, and
 * the resolved view workers poll (system default, accounts' settings, schema overrides).
 */
export class StoragePolicyRepository {
  constructor(private readonly store: RelationalStore) {}

  async policy(now = Date.now()): Promise<{ defaultRetentionMs: number; rules: RetentionRule[]; drops: SchemaDrop[] }> {
    return this.store.read(async (x) => {
      const system = await x.one<{ value: string }>('SELECT value FROM system_settings WHERE setting_key = $1', [
        SettingKeys.StorageRetention,
      ]);
      const accounts = await x.all<{ account_id: string; value: string }>(
        'SELECT account_id, value FROM account_settings WHERE setting_key = $1',
        [SettingKeys.StorageRetention],
      );
      const schemas = await x.all<{ account_id: string; schema_name: string; retention: string }>(
        'SELECT account_id, schema_name, retention FROM schema_retention',
      );
      const since = new Date(now - DROP_MEMORY_DAYS * 86_400_000).toISOString();
      const drops = await x.all<{ drop_id: string; account_id: string; schema_name: string; dropped_at: string }>(
        'SELECT drop_id, account_id, schema_name, dropped_at FROM schema_drops WHERE dropped_at >= $1 ORDER BY dropped_at',
        [since],
      );
      return {
        defaultRetentionMs: system ? retentionMsOf(system.value) : 0,
        rules: [
          ...accounts.map((a) => ({ accountId: a.account_id, schema: '', retentionMs: retentionMsOf(a.value) })),
          ...schemas.map((s) => ({ accountId: s.account_id, schema: s.schema_name, retentionMs: retentionMsOf(s.retention) })),
        ],
        drops: drops.map((d) => ({ dropId: d.drop_id, accountId: d.account_id, schema: d.schema_name, droppedAt: d.dropped_at })),
      };
    });
  }

  async schemaRetentions(accountId: string): Promise<SchemaRetention[]> {
    const id = accountId.toLowerCase();
    return this.store.read(async (x) => {
      await requireAccount(x, id);
      return listRetentions(x, id);
    });
  }

  /** Sets or (empty text) removes a schema's override; the text is validated like the setting. */
  async putSchemaRetention(accountId: string, schema: string, retention: string, updatedBy: string): Promise<SchemaRetention[]> {
    const id = accountId.toLowerCase();
    checkSchemaName(schema);
    const text = retention.trim();
    if (text !== '') {
      const ms = parseRetention(text);
      if (ms === undefined)
        throw invalid(
          `Invalid retention '${text}': a retention is a number of days, hours or minutes (30d, 12h, 45m), a TimeSpan d.hh:mm:ss (30.00:00:00), or forever.`,
        );
      if (ms < 60_000) throw invalid(`Invalid retention '${text}': the retention must be at least 00:01:00.`);
    }
    return this.store.transaction(async (tx) => {
      await requireAccount(tx, id);
      await tx.run('DELETE FROM schema_retention WHERE account_id = $1 AND schema_name = $2', [id, schema]);
      if (text !== '')
        await tx.run('INSERT INTO schema_retention VALUES ($1, $2, $3, $4, $5)', [
          id,
          schema,
          text,
          new Date().toISOString(),
          updatedBy,
        ]);
      return listRetentions(tx, id);
    });
  }

  /** Records a drop (and forgets the schema's retention override with it). */
  async recordDrop(accountId: string, schema: string, droppedBy: string): Promise<SchemaDrop> {
    const id = accountId.toLowerCase();
    checkSchemaName(schema);
    const drop: SchemaDrop = { dropId: randomUUID(), accountId: id, schema, droppedAt: new Date().toISOString() };
    await this.store.transaction(async (tx) => {
      await requireAccount(tx, id);
      await tx.run('INSERT INTO schema_drops VALUES ($1, $2, $3, $4, $5)', [drop.dropId, id, schema, drop.droppedAt, droppedBy]);
      await tx.run('DELETE FROM schema_retention WHERE account_id = $1 AND schema_name = $2', [id, schema]);
    });
    return drop;
  }
}

function checkSchemaName(schema: string): void {
  if (schema.trim() === '' || schema.length > MAX_SCHEMA_NAME)
    throw invalid(`A schema name has 1 to ${MAX_SCHEMA_NAME} characters.`);
}

async function requireAccount(x: SqlExecutor, accountId: string): Promise<void> {
  const row = await x.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [accountId]);
  if (!row) throw notFound(`Account ${accountId} does not exist.`);
}

async function listRetentions(x: SqlExecutor, accountId: string): Promise<SchemaRetention[]> {
  const rows = await x.all<{ schema_name: string; retention: string; updated_at: string; updated_by: string }>(
    'SELECT schema_name, retention, updated_at, updated_by FROM schema_retention WHERE account_id = $1 ORDER BY schema_name',
    [accountId],
  );
  return rows.map((r) => ({ schema: r.schema_name, retention: r.retention, updatedAt: r.updated_at, updatedBy: r.updated_by }));
}
