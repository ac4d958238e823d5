import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { accountCompactionMaxFileSize } from '../../src/compaction/account-max-file-size.js';
import { DirectoryRepository } from '../../src/directory/directory-repository.js';
import { SettingsRepository } from '../../src/settings/settings-repository.js';
import { ALL_MIGRATIONS } from '../../src/store/all-migrations.js';
import { RelationalStore } from '../../src/store/relational-store.js';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';

describe('compaction MaxFileSize per account (leader duty reader)', () => {
  let dir: string;
  let store: RelationalStore;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'strata-compaction-size-'));
    store = await RelationalStore.open(dir, { migrations: ALL_MIGRATIONS });
    await new DirectoryRepository(store).upsertAccount({ accountId: ACCOUNT, accountName: 'c', createdAt: '' });
  });
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is 1 GB by default, the stored account value once set, and the default for an id with no account', async () => {
    assert.equal(await accountCompactionMaxFileSize(store, ACCOUNT), 1024 ** 3);
    await new SettingsRepository(store).setAccount(
      ACCOUNT,
      { key: 'Service.Storage.Compaction.MaxFileSize', value: '512 mb' },
      'test',
    );
    assert.equal(await accountCompactionMaxFileSize(store, ACCOUNT), 512 * 1024 ** 2);
    assert.equal(await accountCompactionMaxFileSize(store, '00000000-0000-0000-0000-0000000000ff'), 1024 ** 3);
  });
});
