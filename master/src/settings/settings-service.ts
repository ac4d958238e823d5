import { type HandlersOf, invalid } from '@strata/common';
import type { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { redactedSettings, type SettingsRepository } from './settings-repository.js';

/**
 * gRPC handlers of the master's SettingsService. Every response goes through `redactedSettings`,
 * so the mail passwords never leave the master. Values are never logged here.
 */
export function settingsHandlers(repo: () => SettingsRepository): HandlersOf<typeof SettingsServiceService> {
  return {
    getSystemSettings: async () => ({ settings: redactedSettings('system', await repo().systemValues()) }),
    setSystemSettings: async (req) => {
      const r = repo();
      await r.setSystem(
        req.changes.map((c) => ({ key: c.key, value: c.value })),
        req.updatedBy,
      );
      return { settings: redactedSettings('system', await r.systemValues()) };
    },
    getAccountSettings: async (req) => ({
      settings: redactedSettings('account', await repo().accountValues(req.accountId)),
    }),
    setAccountSetting: async (req) => {
      if (!req.change) throw invalid('change is required.');
      const r = repo();
      await r.setAccount(req.accountId, { key: req.change.key, value: req.change.value }, req.updatedBy);
      return { settings: redactedSettings('account', await r.accountValues(req.accountId)) };
    },
    getExecutorSettings: async () => repo().executorLimits(),
  };
}
