import assert from 'node:assert/strict';
import {
  ACCOUNT_SETTINGS,
  checkSettingChange,
  findSetting,
  SettingKeys,
  type SettingScope,
  StrataError,
  SYSTEM_SETTINGS,
  validateSettingChanges,
} from '../../src/index.js';

/** The stored value of a valid change, or the problem message of an invalid one. */
function check(scope: SettingScope, key: string, value: string | null): string | null {
  const r = checkSettingChange(scope, { key, value });
  return 'problem' in r ? `PROBLEM: ${r.problem}` : r.value;
}

const rejected = (scope: SettingScope, key: string, value: string) => {
  const out = check(scope, key, value);
  assert.ok(out?.startsWith('PROBLEM: '), `${key}=${JSON.stringify(value)} should be rejected, got ${out}`);
  return out!.slice('PROBLEM: '.length);
};

describe('settings catalogue', () => {
  it("holds exactly the spec tables with their types, defaults and sensitivity, plus Strata's retention", () => {
    const table = (list: typeof SYSTEM_SETTINGS) => list.map((d) => [d.key, d.type, d.default, d.sensitive]);
    assert.deepEqual(
      table(ACCOUNT_SETTINGS).sort(),
      [
        ['Service.Communication.Email.Endpoint', 'string', null, false],
        ['Service.Communication.Email.UserName', 'string', null, false],
        ['Service.Communication.Email.Password', 'string', null, true],
        ['Service.Communication.Email.FromAddress', 'string', null, false],
        ['Service.Communication.Email.Drop.Unsent.After', 'TimeSpan', '01:00:00', false],
        ['Service.Dashboards.Default', 'string', null, false],
        ['Service.Storage.Compaction.MaxFileSize', 'size', '1 GB', false],
        // Beyond the spec: the data lifecycle (docs/api.md); no value means keep forever.
        ['Service.Storage.Retention', 'retention', null, false],
      ].sort(),
    );
    assert.deepEqual(
      table(SYSTEM_SETTINGS).sort(),
      [
        ['Service.Communication.Email.UserName', 'string', null, false],
        ['Service.Communication.Email.Endpoint', 'string', null, false],
        ['Service.Communication.Email.Password', 'string', null, true],
        ['Service.Communication.Email.FromAddress', 'string', null, false],
        ['Service.Communication.Email.Send.Interval', 'TimeSpan', '00:00:10', false],
        ['Service.Application.FrontendUrl', 'string', null, false],
        ['Service.Search.Executor.Query.MaxConcurrent', 'int', '10', false],
        ['Service.Search.Executor.File.MaxConcurrentRead', 'int', '10', false],
        ['Service.Search.Executor.File.Rowgroup.MaxConcurrentRead', 'int', '100', false],
        ['Service.Storage.Retention', 'retention', null, false],
      ].sort(),
    );
  });

  it('every default is itself a valid value of its setting', () => {
    for (const d of [...SYSTEM_SETTINGS, ...ACCOUNT_SETTINGS]) {
      assert.equal(check(d.scope, d.key, d.default), d.default, d.key);
    }
  });

  it('matches names without regard to case and keeps the scopes apart', () => {
    assert.equal(
      findSetting('system', 'service.search.executor.query.maxconcurrent')?.key,
      SettingKeys.ExecutorQueryMaxConcurrent,
    );
    assert.equal(findSetting('account', SettingKeys.ExecutorQueryMaxConcurrent), undefined);
    assert.equal(findSetting('system', SettingKeys.CompactionMaxFileSize), undefined);
    const r = checkSettingChange('account', { key: 'SERVICE.DASHBOARDS.DEFAULT', value: 'd1' });
    assert.ok(!('problem' in r));
    assert.equal(r.key, 'Service.Dashboards.Default');
  });

  it('rejects unknown names with the scope in the message', () => {
    assert.equal(rejected('system', 'Service.Nope', 'x'), 'Unknown system setting: Service.Nope.');
    assert.equal(
      rejected('account', SettingKeys.FrontendUrl, 'https://x'),
      'Unknown account setting: Service.Application.FrontendUrl.',
    );
    assert.equal(rejected('system', SettingKeys.DashboardsDefault, 'd'), 'Unknown system setting: Service.Dashboards.Default.');
  });
});

describe('setting value validation', () => {
  const size = SettingKeys.CompactionMaxFileSize;

  it('accepts sizes: integer, optional space, B/KB/MB/GB in any case', () => {
    for (const v of ['1 GB', '512mb', '10 B', '1GB', '3 Kb', '7 kB', '2048 MB', '1 gb'])
      assert.equal(check('account', size, v), v);
    assert.equal(check('account', size, '  64 MB  '), '64 MB', 'values are trimmed');
  });

  it('rejects other sizes naming the setting and the accepted units', () => {
    for (const v of [
      '5 TB',
      '1.5GB',
      '1.5 GB',
      'GB',
      '10',
      '-1 GB',
      '1  GB',
      '1 G',
      'one GB',
      '1 GiB',
      '0 B',
      '99999999999 GB',
    ]) {
      const msg = rejected('account', size, v);
      assert.match(msg, /Service\.Storage\.Compaction\.MaxFileSize/, v);
      if (v !== '0 B') assert.match(msg, /B, KB, MB, GB/, v);
    }
    assert.equal(
      rejected('account', size, '5 TB'),
      'Invalid value "5 TB" for setting Service.Storage.Compaction.MaxFileSize: a size is a whole number followed by one of the units B, KB, MB, GB (case-insensitive, a space between number and unit is allowed), for example 512 MB.',
    );
  });

  it('accepts TimeSpans hh:mm:ss and rejects everything else', () => {
    const drop = SettingKeys.EmailDropUnsentAfter;
    const send = SettingKeys.EmailSendInterval;
    for (const v of ['00:15:00', '01:00:00', '06:00:00', '23:59:59', '1:30:00', '2.00:00:00'])
      assert.equal(check('account', drop, v), v);
    assert.equal(check('system', send, '00:00:01'), '00:00:01');
    for (const v of ['15:00', '1h', '00:60:00', '00:00:60', '24:00:00', '00:15', 'abc', '-01:00:00', '00:15:00.5', '3600']) {
      assert.equal(
        rejected('account', drop, v),
        `Invalid value ${JSON.stringify(v)} for setting Service.Communication.Email.Drop.Unsent.After: a TimeSpan is written hh:mm:ss, for example 00:15:00.`,
      );
    }
    assert.match(rejected('system', send, '00:00:00'), /Send\.Interval: the TimeSpan must be from 00:00:01 to 1\.00:00:00\./);
    assert.match(rejected('system', send, '2.00:00:00'), /must be from 00:00:01/);
  });

  it('accepts ints in range for the executor limits and rejects the rest', () => {
    for (const key of [
      SettingKeys.ExecutorQueryMaxConcurrent,
      SettingKeys.ExecutorFileMaxConcurrentRead,
      SettingKeys.ExecutorRowgroupMaxConcurrentRead,
    ]) {
      for (const v of ['1', '10', '100', '+5', '100000']) assert.equal(check('system', key, v), v);
      for (const v of ['0', '-3', '1.5', 'ten', '1e3', '100001', '0x10']) {
        assert.equal(
          rejected('system', key, v),
          `Invalid value ${JSON.stringify(v)} for setting ${key}: expected a whole number from 1 to 100000.`,
        );
      }
    }
  });

  it('takes free text for string settings, host:port for the mail endpoint', () => {
    assert.equal(check('account', SettingKeys.DashboardsDefault, ' dash-1 '), 'dash-1');
    assert.equal(check('system', SettingKeys.EmailUserName, 'mailer@example.com'), 'mailer@example.com');
    // FrontendUrl is stored as given: when invalid, links are left out (settings rule 7).
    assert.equal(check('system', SettingKeys.FrontendUrl, 'not a url'), 'not a url');
    for (const v of ['smtp.example.com:587', '127.0.0.1:25', '[::1]:2525', 'mail:465'])
      assert.equal(check('account', SettingKeys.EmailEndpoint, v), v);
    for (const v of ['smtp.example.com', 'smtp.example.com:0', 'smtp.example.com:70000', 'http://smtp:25', 'a b:25'])
      assert.match(rejected('system', SettingKeys.EmailEndpoint, v), /Email\.Endpoint: expected host:port/);
    assert.match(rejected('account', SettingKeys.DashboardsDefault, 'x'.repeat(4097)), /longer than 4096 characters/);
  });

  it('treats null and blank as "remove", keeps passwords exactly and never echoes them', () => {
    for (const v of [null, '', '   ']) assert.equal(check('account', SettingKeys.CompactionMaxFileSize, v), null);
    assert.equal(check('system', SettingKeys.EmailPassword, ' s3cret '), ' s3cret ');
    const secret = 'p'.repeat(5000);
    const msg = rejected('system', SettingKeys.EmailPassword, secret);
    assert.ok(!msg.includes('ppp'), 'a rejected password is not echoed');
  });

  it('validates a batch all-or-nothing and lists every problem', () => {
    const ok = validateSettingChanges('system', [
      { key: 'service.search.executor.query.maxconcurrent', value: '4' },
      { key: SettingKeys.FrontendUrl, value: null },
    ]);
    assert.deepEqual(
      ok.map((c) => [c.key, c.value]),
      [
        [SettingKeys.ExecutorQueryMaxConcurrent, '4'],
        [SettingKeys.FrontendUrl, null],
      ],
    );
    assert.throws(
      () =>
        validateSettingChanges('system', [
          { key: SettingKeys.ExecutorQueryMaxConcurrent, value: '4' },
          { key: 'Service.Unknown', value: '1' },
          { key: SettingKeys.EmailSendInterval, value: 'soon' },
        ]),
      (err: unknown) => {
        assert.ok(err instanceof StrataError);
        assert.equal(err.kind, 'invalid');
        assert.deepEqual(
          err.details.map((d) => d.message),
          [
            'Unknown system setting: Service.Unknown.',
            'Invalid value "soon" for setting Service.Communication.Email.Send.Interval: a TimeSpan is written hh:mm:ss, for example 00:15:00.',
          ],
        );
        return true;
      },
    );
    assert.throws(
      () =>
        validateSettingChanges('system', [
          { key: SettingKeys.ExecutorQueryMaxConcurrent, value: '4' },
          { key: SettingKeys.ExecutorQueryMaxConcurrent.toUpperCase(), value: '5' },
        ]),
      /Setting Service\.Search\.Executor\.Query\.MaxConcurrent is given more than once\./,
    );
  });
});

describe('retention values', () => {
  it('accepts what people type and refuses the rest with the accepted forms', () => {
    for (const ok of ['30d', '90 d', '12h', '45m', '30.00:00:00', '1.12:30:00', '12:00:00', 'forever', 'FOREVER', '7D']) {
      assert.equal(check('account', SettingKeys.StorageRetention, ok), ok, ok);
    }
    for (const bad of ['30s', '7 weeks', '-1d', '1.5d', '0d', 'soon', '1.24:00:00']) {
      assert.match(rejected('account', SettingKeys.StorageRetention, bad), /retention/, bad);
    }
  });
});
