import { findSetting, invalid } from '@strata/common';
import { SettingsServiceService } from '@strata/proto/settings/v1/settings';
import { z } from 'zod';
import type { RouteDef } from '../http/route.js';
import { settingsView } from './settings-view.js';

/** A setting value as clients send it: text (as documented), a number for convenience, or null to remove. */
const settingValue = z.union([z.string(), z.number().transform(String), z.null()]);

const systemSettingsBody = z.object({
  settings: z.array(z.object({ key: z.string().min(1), value: settingValue })),
});

const accountSettingBody = z.object({ value: settingValue });

/** "" for the gRPC contract, where an empty value removes the stored one. */
const wire = (value: string | null) => value ?? '';

/**
 * The settings endpoints (docs/api.md, Settings). Responses list every setting of the scope as
 * `{ key, value, type, default, sensitive, isSet, description }` with sensitive values null
 * (docs/api.md). Validation, including all-or-nothing for POST /settings, happens on the master.
 */
export const settingsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/settings',
    operation: 'system.settings.read',
    summary: 'System settings: every setting with its stored value (sensitive values null), type, default and whether it is set.',
    async handler(rc) {
      const { settings } = await rc.deps.master.service(SettingsServiceService).getSystemSettings({});
      return { body: { settings: settingsView('system', settings) } };
    },
  },
  {
    method: 'POST',
    path: '/settings',
    operation: 'system.settings.write',
    summary:
      'Set system settings: { settings: [{ key, value }] }. A null or blank value removes the stored value. All are validated first; one invalid or unknown setting rejects the whole request (400). Answers like GET /settings.',
    requestSchema: systemSettingsBody,
    async handler(rc) {
      const body = await rc.body(systemSettingsBody);
      const { settings } = await rc.deps.master.service(SettingsServiceService).setSystemSettings({
        changes: body.settings.map((s) => ({ key: s.key, value: wire(s.value) })),
        updatedBy: rc.principal!.userId,
      });
      return { body: { settings: settingsView('system', settings) } };
    },
  },
  {
    method: 'GET',
    path: '/accounts/:accountId/settings',
    operation: 'account.settings.read',
    summary:
      "An account's settings: every setting with its stored value (sensitive values null), type, default and whether it is set.",
    async handler(rc) {
      const { settings } = await rc.deps.master
        .service(SettingsServiceService)
        .getAccountSettings({ accountId: rc.params.accountId!.toLowerCase() });
      return { body: { settings: settingsView('account', settings) } };
    },
  },
  {
    method: 'PUT',
    path: '/accounts/:accountId/settings/:settingName',
    operation: 'account.settings.write',
    summary:
      'Set one account setting: { value }. A null or blank value removes the stored value. Answers with that setting in the shape of GET /accounts/{accountId}/settings.',
    requestSchema: accountSettingBody,
    async handler(rc) {
      const definition = findSetting('account', rc.params.settingName!);
      if (!definition) throw invalid(`Unknown account setting: ${rc.params.settingName}.`);
      const body = await rc.body(accountSettingBody);
      const { settings } = await rc.deps.master.service(SettingsServiceService).setAccountSetting({
        accountId: rc.params.accountId!.toLowerCase(),
        change: { key: definition.key, value: wire(body.value) },
        updatedBy: rc.principal!.userId,
      });
      return { body: settingsView('account', settings).find((s) => s.key === definition.key) };
    },
  },
];
