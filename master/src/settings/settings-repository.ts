import {
  type EmailSettings,
  type ExecutorLimits,
  executorLimits,
  findSetting,
  notFound,
  resolveEmailSettings,
  type SettingChange,
  type SettingScope,
  type SettingValues,
  validateSettingChanges,
} from '@strata/common';
import type { RelationalStore, SqlExecutor } from '../store/relational-store.js';

/**
 * System and account settings in the relational store. Values are validated against the
 * catalogue (common/src/settings) before anything is written; a batch is written in one
 * transaction. Reads return stored values including sensitive ones: callers that answer a request
 * must blank those (see `redactedSettings`); only the master's own work (the mailer) uses them.
 */
export class SettingsRepository {
  constructor(private readonly store: RelationalStore) {}

  /** Stored system values by key. */
  async systemValues(): Promise<Record<string, string>> {
    const rows = await this.store.all<{ setting_key: string; value: string }>('SELECT setting_key, value FROM system_settings');
    return Object.fromEntries(rows.map((r) => [r.setting_key, r.value]));
  }

  /** Stored values of one account by key; NOT_FOUND when the account does not exist. */
  async accountValues(accountId: string): Promise<Record<string, string>> {
    const id = accountId.toLowerCase();
    return this.store.read(async (x) => {
      await requireAccount(x, id);
      const rows = await x.all<{ setting_key: string; value: string }>(
        'SELECT setting_key, value FROM account_settings WHERE account_id = $1',
        [id],
      );
      return Object.fromEntries(rows.map((r) => [r.setting_key, r.value]));
    });
  }

  /** Validates every change, then stores them all in one transaction (or none). */
  async setSystem(changes: SettingChange[], updatedBy: string): Promise<void> {
    const valid = validateSettingChanges('system', changes);
    const now = new Date().toISOString();
    await this.store.transaction(async (tx) => {
      for (const c of valid) {
        if (c.value === null) await tx.run('DELETE FROM system_settings WHERE setting_key = $1', [c.key]);
        else await tx.run('INSERT OR REPLACE INTO system_settings VALUES ($1, $2, $3, $4)', [c.key, c.value, now, updatedBy]);
      }
    });
  }

  /** Stores (or, for a blank value, removes) one setting of an account. */
  async setAccount(accountId: string, change: SettingChange, updatedBy: string): Promise<void> {
    const [c] = validateSettingChanges('account', [change]);
    const id = accountId.toLowerCase();
    const now = new Date().toISOString();
    await this.store.transaction(async (tx) => {
      await requireAccount(tx, id);
      if (c!.value === null)
        await tx.run('DELETE FROM account_settings WHERE account_id = $1 AND setting_key = $2', [id, c!.key]);
      else
        await tx.run('INSERT OR REPLACE INTO account_settings VALUES ($1, $2, $3, $4, $5)', [
          id,
          c!.key,
          c!.value,
          now,
          updatedBy,
        ]);
    });
  }

  /** The effective Service.Search.Executor.* limits. */
  async executorLimits(): Promise<ExecutorLimits> {
    return executorLimits(await this.systemValues());
  }

  /** The e-mail configuration the mailer uses for one account (account values over system values). */
  async emailSettingsFor(accountId: string): Promise<EmailSettings> {
    const [system, account] = await Promise.all([this.systemValues(), this.accountValues(accountId)]);
    return resolveEmailSettings(system, account);
  }
}

async function requireAccount(x: SqlExecutor, accountId: string): Promise<void> {
  const row = await x.one('SELECT 1 AS x FROM accounts WHERE account_id = $1', [accountId]);
  if (!row) throw notFound(`Account ${accountId} does not exist.`);
}

/**
 * Stored values as handed out over gRPC: sorted by key, sensitive values blanked. A stored key the
 * catalogue no longer knows is left out (it could be anything, including a secret).
 */
export function redactedSettings(scope: SettingScope, values: SettingValues): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  for (const [key, value] of Object.entries(values)) {
    const d = findSetting(scope, key);
    if (!d || typeof value !== 'string' || value === '') continue;
    out.push({ key: d.key, value: d.sensitive ? '' : value });
  }
  return out.sort((a, b) => a.key.localeCompare(b.key));
}
