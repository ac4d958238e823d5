import assert from 'node:assert/strict';
import {
  compactionMaxFileSizeBytes,
  DEFAULT_EXECUTOR_LIMITS,
  defaultDashboard,
  effectiveValue,
  emailSendIntervalMs,
  executorLimits,
  formatTimeSpan,
  incidentDeepLink,
  incidentDeepLinkFromSettings,
  SettingKeys as K,
  parseSize,
  parseTimeSpan,
  resolveEmailSettings,
} from '../../src/index.js';

describe('parsed setting accessors', () => {
  it('parses sizes to bytes and TimeSpans to milliseconds', () => {
    assert.equal(parseSize('1 GB'), 1024 ** 3);
    assert.equal(parseSize('512mb'), 512 * 1024 ** 2);
    assert.equal(parseSize('10 B'), 10);
    assert.equal(parseSize('3kb'), 3072);
    assert.equal(parseSize('5 TB'), undefined);
    assert.equal(parseSize('1.5GB'), undefined);
    assert.equal(parseTimeSpan('00:15:00'), 900_000);
    assert.equal(parseTimeSpan('06:00:00'), 21_600_000);
    assert.equal(parseTimeSpan('1.02:03:04'), ((26 * 60 + 3) * 60 + 4) * 1000);
    assert.equal(formatTimeSpan(90_061_000), '1.01:01:01');
    assert.equal(formatTimeSpan(10_000), '00:00:10');
  });

  it('uses defaults when nothing is stored', () => {
    assert.deepEqual(DEFAULT_EXECUTOR_LIMITS, {
      queryMaxConcurrent: 10,
      fileMaxConcurrentRead: 10,
      rowgroupMaxConcurrentRead: 100,
    });
    assert.equal(compactionMaxFileSizeBytes({}), 1024 ** 3);
    assert.equal(emailSendIntervalMs({}), 10_000);
    assert.equal(defaultDashboard({}), undefined);
    assert.equal(effectiveValue('account', {}, K.EmailDropUnsentAfter), '01:00:00');
    assert.equal(effectiveValue('system', {}, K.FrontendUrl), null);
  });

  it('uses stored values, falling back to the default for one that no longer parses', () => {
    assert.deepEqual(executorLimits({ [K.ExecutorQueryMaxConcurrent]: '3', [K.ExecutorRowgroupMaxConcurrentRead]: '7' }), {
      queryMaxConcurrent: 3,
      fileMaxConcurrentRead: 10,
      rowgroupMaxConcurrentRead: 7,
    });
    assert.equal(compactionMaxFileSizeBytes({ [K.CompactionMaxFileSize]: '512mb' }), 512 * 1024 ** 2);
    assert.equal(compactionMaxFileSizeBytes({ [K.CompactionMaxFileSize]: '5 TB' }), 1024 ** 3);
    assert.equal(executorLimits({ [K.ExecutorQueryMaxConcurrent]: '0' }).queryMaxConcurrent, 10);
    assert.equal(defaultDashboard({ [K.DashboardsDefault]: 'd-7' }), 'd-7');
  });
});

describe('resolveEmailSettings', () => {
  const system = {
    [K.EmailEndpoint]: 'smtp.system.example:587',
    [K.EmailUserName]: 'system-user',
    [K.EmailPassword]: 'system-pw',
    [K.EmailFromAddress]: 'noreply@system.example',
    [K.EmailSendInterval]: '00:00:30',
  };

  it('uses the system values when the account sets none', () => {
    assert.deepEqual(resolveEmailSettings(system, {}), {
      server: { host: 'smtp.system.example', port: 587 },
      userName: 'system-user',
      password: 'system-pw',
      fromAddress: 'noreply@system.example',
      dropUnsentAfterMs: 3_600_000,
      sendIntervalMs: 30_000,
    });
  });

  it('overrides field by field with the account values', () => {
    const r = resolveEmailSettings(system, {
      [K.EmailUserName]: 'acct-user',
      [K.EmailPassword]: '',
      [K.EmailDropUnsentAfter]: '00:05:00',
    });
    assert.deepEqual(r.server, { host: 'smtp.system.example', port: 587 });
    assert.equal(r.userName, 'acct-user');
    assert.equal(r.password, 'system-pw', 'a blank account value falls back');
    assert.equal(r.fromAddress, 'noreply@system.example');
    assert.equal(r.dropUnsentAfterMs, 300_000);
    const all = resolveEmailSettings(system, {
      [K.EmailEndpoint]: '[::1]:2525',
      [K.EmailUserName]: 'a',
      [K.EmailPassword]: 'b',
      [K.EmailFromAddress]: 'c@x',
    });
    assert.deepEqual([all.server, all.userName, all.password, all.fromAddress], [{ host: '::1', port: 2525 }, 'a', 'b', 'c@x']);
  });

  it('falls back from FromAddress to the effective user name', () => {
    const { [K.EmailFromAddress]: _, ...noFrom } = system;
    assert.equal(resolveEmailSettings(noFrom, {}).fromAddress, 'system-user');
    assert.equal(resolveEmailSettings(noFrom, { [K.EmailUserName]: 'acct@x' }).fromAddress, 'acct@x');
    assert.equal(resolveEmailSettings({}, {}).fromAddress, undefined);
    assert.equal(resolveEmailSettings({}, {}).server, undefined);
  });
});

describe('incident deep links', () => {
  const acc = '00000000-0000-0000-0000-000000000001';
  const inc = '11111111-2222-3333-4444-555555555555';

  it('builds <frontend_url>/account/<accountId>/incidents/<incidentId> from a valid absolute URL', () => {
    assert.equal(incidentDeepLink('https://ui.example.com', acc, inc), `https://ui.example.com/account/${acc}/incidents/${inc}`);
    assert.equal(incidentDeepLink('https://ui.example.com/', acc, inc), `https://ui.example.com/account/${acc}/incidents/${inc}`);
    assert.equal(incidentDeepLink(' http://h:8000/app// ', acc, inc), `http://h:8000/app/account/${acc}/incidents/${inc}`);
    assert.equal(
      incidentDeepLink('https://ui.example.com/x?y=1#z', acc, inc),
      `https://ui.example.com/x/account/${acc}/incidents/${inc}`,
    );
    assert.equal(
      incidentDeepLinkFromSettings({ [K.FrontendUrl]: 'https://f.example' }, acc, inc),
      `https://f.example/account/${acc}/incidents/${inc}`,
    );
  });

  it('gives no link when the URL is blank or not a valid absolute URL', () => {
    for (const v of [
      null,
      undefined,
      '',
      '   ',
      'ui.example.com',
      '/relative/path',
      'not a url',
      'ftp://ui.example.com',
      'javascript:alert(1)',
      'mailto:a@b',
    ])
      assert.equal(incidentDeepLink(v, acc, inc), undefined, String(v));
    assert.equal(incidentDeepLinkFromSettings({}, acc, inc), undefined);
  });
});
