import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SettingKeys as K, StrataError } from '@strata/common';
import { DirectoryRepository } from '../../src/directory/directory-repository.js';
import { redactedSettings, SettingsRepository } from '../../src/settings/settings-repository.js';
import { ALL_MIGRATIONS } from '../../src/store/all-migrations.js';
import { RelationalStore } from '../../src/store/relational-store.js';

const ACCOUNT = '0a0a0a0a-0000-0000-0000-000000000001';

describe('SettingsRepository', () => {
  let dir: string;
  let store: RelationalStore;
  let repo: SettingsRepository;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'strata-settings-'));
    store = await RelationalStore.open(dir, { migrations: ALL_MIGRATIONS });
    repo = new SettingsRepository(store);
    await new DirectoryRepository(store).upsertAccount({ accountId: ACCOUNT, accountName: 'acme', createdAt: '' });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores, replaces and removes system settings, keyed by the catalogue spelling', async () => {
    await repo.setSystem(
      [
        { key: 'service.search.executor.query.maxconcurrent', value: '4' },
        { key: K.FrontendUrl, value: 'https://ui.example' },
      ],
      'user-1',
    );
    assert.deepEqual(await repo.systemValues(), { [K.ExecutorQueryMaxConcurrent]: '4', [K.FrontendUrl]: 'https://ui.example' });
    await repo.setSystem(
      [
        { key: K.ExecutorQueryMaxConcurrent, value: '6' },
        { key: K.FrontendUrl, value: null },
      ],
      'user-1',
    );
    assert.deepEqual(await repo.systemValues(), { [K.ExecutorQueryMaxConcurrent]: '6' });
    assert.deepEqual(await repo.executorLimits(), {
      queryMaxConcurrent: 6,
      fileMaxConcurrentRead: 10,
      rowgroupMaxConcurrentRead: 100,
    });
    const audit = await store.one<{ updated_by: string }>('SELECT updated_by FROM system_settings');
    assert.equal(audit?.updated_by, 'user-1');
  });

  it('writes nothing of a batch with one invalid change', async () => {
    await repo.setSystem([{ key: K.EmailUserName, value: 'before' }], 'u');
    await assert.rejects(
      repo.setSystem(
        [
          { key: K.EmailUserName, value: 'after' },
          { key: K.ExecutorFileMaxConcurrentRead, value: 'many' },
        ],
        'u',
      ),
      (err: unknown) => err instanceof StrataError && err.kind === 'invalid' && /File\.MaxConcurrentRead/.test(err.message),
    );
    assert.deepEqual(await repo.systemValues(), { [K.EmailUserName]: 'before' });
  });

  it('keeps account settings per account and refuses an unknown account', async () => {
    await repo.setAccount(ACCOUNT, { key: K.CompactionMaxFileSize, value: '512mb' }, 'u');
    assert.deepEqual(await repo.accountValues(ACCOUNT.toUpperCase()), { [K.CompactionMaxFileSize]: '512mb' });
    await assert.rejects(repo.setAccount(ACCOUNT, { key: K.CompactionMaxFileSize, value: '5 TB' }, 'u'), /B, KB, MB, GB/);
    await assert.rejects(repo.setAccount(ACCOUNT, { key: K.FrontendUrl, value: 'https://x' }, 'u'), /Unknown account setting/);
    const missing = '0a0a0a0a-0000-0000-0000-0000000000ff';
    for (const attempt of [
      repo.accountValues(missing),
      repo.setAccount(missing, { key: K.DashboardsDefault, value: 'd' }, 'u'),
    ]) {
      await assert.rejects(attempt, (err: unknown) => err instanceof StrataError && err.kind === 'not_found');
    }
    await repo.setAccount(ACCOUNT, { key: K.CompactionMaxFileSize, value: '' }, 'u');
    assert.deepEqual(await repo.accountValues(ACCOUNT), {});
  });

  it('resolves the mail settings of an account over the system values, passwords included', async () => {
    await repo.setSystem(
      [
        { key: K.EmailEndpoint, value: 'smtp.sys:25' },
        { key: K.EmailUserName, value: 'sys@x' },
        { key: K.EmailPassword, value: 'sys-pw' },
      ],
      'u',
    );
    await repo.setAccount(ACCOUNT, { key: K.EmailPassword, value: 'acct-pw' }, 'u');
    const mail = await repo.emailSettingsFor(ACCOUNT);
    assert.deepEqual(mail.server, { host: 'smtp.sys', port: 25 });
    assert.equal(mail.userName, 'sys@x');
    assert.equal(mail.password, 'acct-pw');
    assert.equal(mail.fromAddress, 'sys@x');
  });

  it('blanks sensitive values and drops unknown keys in what leaves the master', () => {
    assert.deepEqual(
      redactedSettings('system', {
        [K.EmailPassword]: 'secret',
        [K.EmailUserName]: 'me',
        'Service.Retired.Setting': 'x',
      }),
      [
        { key: K.EmailPassword, value: '' },
        { key: K.EmailUserName, value: 'me' },
      ],
    );
  });
});
