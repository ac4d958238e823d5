import { compactionMaxFileSizeBytes, StrataError } from '@strata/common';
import { SettingsRepository } from '../settings/settings-repository.js';
import type { RelationalStore } from '../store/relational-store.js';

/**
 * Service.Storage.Compaction.MaxFileSize of an account in bytes, read from the stored account
 * settings each planning cycle (default 1 GB). Data can exist for an account id that has no
 * account row (a global admin may push to any id): such data gets the default.
 */
export async function accountCompactionMaxFileSize(store: RelationalStore, accountId: string): Promise<number> {
  const values = await new SettingsRepository(store).accountValues(accountId).catch((err: unknown) => {
    if (err instanceof StrataError && err.kind === 'not_found') return {};
    throw err;
  });
  return compactionMaxFileSizeBytes(values);
}
