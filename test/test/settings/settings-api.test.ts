import assert from 'node:assert/strict';
import { ACCOUNT_SETTINGS, SettingKeys as K, SYSTEM_SETTINGS } from '@strata/common';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT_A, ACCOUNT_B, ACCOUNT_MISSING, type Answer, SettingsCluster, type UserName } from './settings-cluster.js';

/** Secrets that must never come back in any answer. */
const SYSTEM_PASSWORD = 'system-mail-Secret-7731';
const ACCOUNT_PASSWORD = 'account-mail-Secret-5519';

const entry = (answer: Answer, key: string) => {
  const list = answer.body.settings as { key: string }[];
  const found = list.find((s) => s.key === key);
  assert.ok(found, `${key} listed`);
  return found as { key: string; value: string | null; type: string; default: string | null; sensitive: boolean; isSet: boolean };
};

const assertNoSecret = (answer: Answer) => {
  assert.ok(!answer.text.includes(SYSTEM_PASSWORD), `system password leaked: ${answer.text}`);
  assert.ok(!answer.text.includes(ACCOUNT_PASSWORD), `account password leaked: ${answer.text}`);
};

const assertError = (answer: Answer, status: number, message?: string | RegExp) => {
  assert.equal(answer.status, status, answer.text);
  assert.equal(answer.body.stackTrace, null);
  assert.ok(Array.isArray(answer.body.errors));
  if (typeof message === 'string') assert.equal(answer.body.message, message);
  else if (message) assert.match(answer.body.message, message);
};

describe('settings API (gateway + master + worker in one process)', function () {
  this.timeout(60_000);
  let cluster: SettingsCluster;

  before(async () => {
    cluster = await SettingsCluster.start();
  });

  after(async () => {
    await cluster?.stop();
  });

  describe('system settings', () => {
    it('GET lists every system setting with type, default and isSet', async () => {
      const r = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.settings.map((s: { key: string }) => s.key).sort(), SYSTEM_SETTINGS.map((d) => d.key).sort());
      assert.deepEqual(entry(r, K.ExecutorRowgroupMaxConcurrentRead), {
        key: K.ExecutorRowgroupMaxConcurrentRead,
        value: null,
        type: 'int',
        default: '100',
        sensitive: false,
        isSet: false,
        description: 'Maximum concurrent rowgroup reads per executor.',
      });
      assert.equal(entry(r, K.EmailSendInterval).default, '00:00:10');
      assert.equal(entry(r, K.EmailSendInterval).type, 'TimeSpan');
      assert.equal(entry(r, K.EmailPassword).sensitive, true);
    });

    it('POST stores a batch (keys in any case) and answers it; the password reads back null', async () => {
      const r = await cluster.request('POST', '/settings', {
        as: 'globalAdmin',
        body: {
          Settings: [
            { Key: 'service.communication.email.username', Value: 'mailer@example.com' },
            { key: K.EmailEndpoint, value: 'smtp.example.com:587' },
            { key: K.EmailPassword, value: SYSTEM_PASSWORD },
            { key: K.EmailSendInterval, value: '00:00:30' },
            { key: K.FrontendUrl, value: 'https://ui.example.com' },
          ],
        },
      });
      assert.equal(r.status, 200, r.text);
      assertNoSecret(r);
      assert.equal(entry(r, K.EmailUserName).value, 'mailer@example.com');
      assert.equal(entry(r, K.EmailSendInterval).value, '00:00:30');
      assert.deepEqual([entry(r, K.EmailPassword).value, entry(r, K.EmailPassword).isSet], [null, true]);
      const again = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      assertNoSecret(again);
      assert.deepEqual(again.body, r.body);
    });

    it('POST rejects the whole batch when one value is invalid, listing every problem', async () => {
      const before = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      const r = await cluster.request('POST', '/settings', {
        as: 'globalAdmin',
        body: {
          settings: [
            { key: K.EmailUserName, value: 'changed@example.com' },
            { key: K.EmailSendInterval, value: '10 seconds' },
            { key: K.ExecutorQueryMaxConcurrent, value: '0' },
          ],
        },
      });
      assertError(r, 400, /Send\.Interval: a TimeSpan is written hh:mm:ss/);
      assert.deepEqual(
        r.body.errors.map((e: { message: string }) => e.message),
        [
          'Invalid value "10 seconds" for setting Service.Communication.Email.Send.Interval: a TimeSpan is written hh:mm:ss, for example 00:15:00.',
          'Invalid value "0" for setting Service.Search.Executor.Query.MaxConcurrent: expected a whole number from 1 to 100000.',
        ],
      );
      const after = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      assert.deepEqual(after.body, before.body, 'nothing of the batch was stored');
    });

    it('POST rejects unknown names, account-only names and malformed bodies', async () => {
      for (const key of ['Service.Does.Not.Exist', K.CompactionMaxFileSize, K.DashboardsDefault]) {
        const r = await cluster.request('POST', '/settings', { as: 'globalAdmin', body: { settings: [{ key, value: '1 GB' }] } });
        assertError(r, 400, `Unknown system setting: ${key}.`);
      }
      assertError(
        await cluster.request('POST', '/settings', { as: 'globalAdmin', body: { settings: 'x' } }),
        400,
        /Invalid request body/,
      );
      assertError(await cluster.request('POST', '/settings', { as: 'globalAdmin', body: {} }), 400, /Invalid request body/);
    });

    it('POST with a null or blank value removes the stored value', async () => {
      const r = await cluster.request('POST', '/settings', {
        as: 'globalAdmin',
        body: {
          settings: [
            { key: K.FrontendUrl, value: null },
            { key: K.EmailSendInterval, value: '' },
          ],
        },
      });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual([entry(r, K.FrontendUrl).value, entry(r, K.FrontendUrl).isSet], [null, false]);
      assert.deepEqual([entry(r, K.EmailSendInterval).value, entry(r, K.EmailSendInterval).isSet], [null, false]);
      assert.equal(entry(r, K.EmailPassword).isSet, true, 'untouched settings stay');
    });

    it('only a global admin may read or write them', async () => {
      for (const user of ['adminA', 'adminB', 'viewerA', 'managerA'] as UserName[]) {
        assertError(await cluster.request('GET', '/settings', { as: user }), 403, 'No permission.');
        const w = await cluster.request('POST', '/settings', {
          as: user,
          body: { settings: [{ key: K.EmailUserName, value: 'x' }] },
        });
        assertError(w, 403, 'No permission.');
      }
      assertError(await cluster.request('GET', '/settings'), 401);
      assertError(await cluster.request('POST', '/settings', { body: { settings: [] } }), 401);
      const still = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      assert.equal(entry(still, K.EmailUserName).value, 'mailer@example.com');
    });
  });

  describe('account settings', () => {
    const url = (account: string, name?: string) => `/accounts/${account}/settings${name ? `/${name}` : ''}`;

    it('GET lists every account setting with its default', async () => {
      const r = await cluster.request('GET', url(ACCOUNT_A), { as: 'adminA' });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.settings.map((s: { key: string }) => s.key).sort(), ACCOUNT_SETTINGS.map((d) => d.key).sort());
      assert.deepEqual(
        [
          entry(r, K.CompactionMaxFileSize).default,
          entry(r, K.CompactionMaxFileSize).type,
          entry(r, K.CompactionMaxFileSize).isSet,
        ],
        ['1 GB', 'size', false],
      );
      assert.equal(entry(r, K.EmailDropUnsentAfter).default, '01:00:00');
    });

    it('PUT stores valid sizes and answers the setting', async () => {
      for (const value of ['1 GB', '512mb', '10 B']) {
        const r = await cluster.request('PUT', url(ACCOUNT_A, K.CompactionMaxFileSize), { as: 'adminA', body: { value } });
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.body, {
          key: K.CompactionMaxFileSize,
          value,
          type: 'size',
          default: '1 GB',
          sensitive: false,
          isSet: true,
          description: 'Maximum total file size targeted when selecting files for one compaction job.',
        });
      }
      const got = await cluster.request('GET', url(ACCOUNT_A), { as: 'adminA' });
      assert.equal(entry(got, K.CompactionMaxFileSize).value, '10 B');
    });

    it('PUT rejects invalid sizes with a 400 naming the setting and the accepted units', async () => {
      for (const value of ['5 TB', '1.5GB', 'big']) {
        const r = await cluster.request('PUT', url(ACCOUNT_A, K.CompactionMaxFileSize), { as: 'adminA', body: { value } });
        assertError(
          r,
          400,
          `Invalid value ${JSON.stringify(value)} for setting Service.Storage.Compaction.MaxFileSize: a size is a whole number followed by one of the units B, KB, MB, GB (case-insensitive, a space between number and unit is allowed), for example 512 MB.`,
        );
      }
      const got = await cluster.request('GET', url(ACCOUNT_A), { as: 'adminA' });
      assert.equal(entry(got, K.CompactionMaxFileSize).value, '10 B', 'unchanged');
    });

    it('PUT checks TimeSpans, takes the name in any case, and rejects unknown or system-only names', async () => {
      const ok = await cluster.request('PUT', url(ACCOUNT_A, 'service.communication.email.drop.unsent.after'), {
        as: 'adminA',
        body: { Value: '00:15:00' },
      });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.key, K.EmailDropUnsentAfter);
      assertError(
        await cluster.request('PUT', url(ACCOUNT_A, K.EmailDropUnsentAfter), { as: 'adminA', body: { value: '15 minutes' } }),
        400,
        /Drop\.Unsent\.After: a TimeSpan is written hh:mm:ss/,
      );
      for (const name of ['Service.Nope', K.FrontendUrl, K.ExecutorQueryMaxConcurrent]) {
        assertError(
          await cluster.request('PUT', url(ACCOUNT_A, name), { as: 'adminA', body: { value: '1' } }),
          400,
          `Unknown account setting: ${name}.`,
        );
      }
      assertError(await cluster.request('PUT', url(ACCOUNT_A, K.DashboardsDefault), { as: 'adminA', body: { nothing: 1 } }), 400);
    });

    it('stores the account password but never returns it (PUT and GET)', async () => {
      const put = await cluster.request('PUT', url(ACCOUNT_A, K.EmailPassword), {
        as: 'adminA',
        body: { value: ACCOUNT_PASSWORD },
      });
      assert.equal(put.status, 200, put.text);
      assertNoSecret(put);
      assert.deepEqual([put.body.value, put.body.isSet, put.body.sensitive], [null, true, true]);
      for (const user of ['adminA', 'globalAdmin'] as UserName[]) {
        const got = await cluster.request('GET', url(ACCOUNT_A), { as: user });
        assertNoSecret(got);
        assert.deepEqual([entry(got, K.EmailPassword).value, entry(got, K.EmailPassword).isSet], [null, true]);
      }
      const sys = await cluster.request('GET', '/settings', { as: 'globalAdmin' });
      assertNoSecret(sys);
      const openapi = await cluster.request('GET', '/openapi.json');
      assertNoSecret(openapi);
      assert.equal(openapi.status, 200);
      assert.ok(openapi.body.paths['/accounts/{accountId}/settings/{settingName}'].put.requestBody);
    });

    it('keeps accounts apart and lets a global admin or that account admin in, nobody else', async () => {
      const dash = (account: string, as: UserName, value = 'dash-1') =>
        cluster.request('PUT', url(account, K.DashboardsDefault), { as, body: { value } });
      assert.equal((await dash(ACCOUNT_B, 'adminB', 'dash-b')).status, 200);
      assert.equal((await dash(ACCOUNT_A, 'globalAdmin', 'dash-a')).status, 200);
      assert.equal((await cluster.request('GET', url(ACCOUNT_B), { as: 'globalAdmin' })).status, 200);
      for (const [account, user] of [
        [ACCOUNT_B, 'adminA'],
        [ACCOUNT_A, 'adminB'],
        [ACCOUNT_A, 'viewerA'],
        [ACCOUNT_A, 'managerA'],
      ] as [string, UserName][]) {
        assertError(await cluster.request('GET', url(account), { as: user }), 403, 'No permission.');
        assertError(await dash(account, user), 403, 'No permission.');
      }
      assertError(await cluster.request('GET', url(ACCOUNT_A)), 401);
      const a = await cluster.request('GET', url(ACCOUNT_A), { as: 'adminA' });
      const b = await cluster.request('GET', url(ACCOUNT_B), { as: 'adminB' });
      assert.equal(entry(a, K.DashboardsDefault).value, 'dash-a');
      assert.equal(entry(b, K.DashboardsDefault).value, 'dash-b');
      assert.equal(entry(b, K.EmailPassword).isSet, false);
    });

    it('refuses a long-lived scoped token even for its own account', async () => {
      const pat = await cluster.request('POST', '/auth/pat-token', {
        as: 'adminA',
        body: { expiration: null, accounts: [{ accountId: ACCOUNT_A, inflow: { schemas: [{ schema: '*' }] } }] },
      });
      assert.equal(pat.status, 200, pat.text);
      assertError(await cluster.request('GET', url(ACCOUNT_A), { token: pat.body.token }), 403);
      assertError(
        await cluster.request('PUT', url(ACCOUNT_A, K.DashboardsDefault), { token: pat.body.token, body: { value: 'x' } }),
        403,
      );
    });

    it('answers 404 for an account that does not exist, to a global admin only', async () => {
      assertError(
        await cluster.request('GET', url(ACCOUNT_MISSING), { as: 'globalAdmin' }),
        404,
        `Account ${ACCOUNT_MISSING} does not exist.`,
      );
      assertError(
        await cluster.request('PUT', url(ACCOUNT_MISSING, K.DashboardsDefault), { as: 'globalAdmin', body: { value: 'd' } }),
        404,
        `Account ${ACCOUNT_MISSING} does not exist.`,
      );
      // Anyone else cannot tell a missing account from someone else's.
      assertError(await cluster.request('GET', url(ACCOUNT_MISSING), { as: 'adminA' }), 403, 'No permission.');
    });

    it('PUT with null removes the value', async () => {
      const r = await cluster.request('PUT', url(ACCOUNT_A, K.CompactionMaxFileSize), { as: 'adminA', body: { value: null } });
      assert.deepEqual([r.status, r.body.value, r.body.isSet], [200, null, false]);
    });
  });

  describe('live executor limits', () => {
    const metric = async (name: string) => {
      const r = await cluster.ops('/metrics');
      const line = r.text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? undefined : Number(line.slice(name.length + 1));
    };

    it('are served on the ops port only, not on the public API port', async () => {
      assert.equal((await cluster.ops('/metrics')).status, 200);
      for (const as of [undefined, 'globalAdmin'] as const) {
        const r = await cluster.request('GET', '/metrics', as ? { as } : {});
        assert.equal(r.status, 404, `GET /metrics on the API port as ${as ?? 'anonymous'}`);
        assert.doesNotMatch(r.text, /strata_/);
      }
    });

    it('reach the running worker within a few seconds, without restart', async () => {
      assert.equal(await metric('strata_executor_query_max_concurrent'), 10);
      const r = await cluster.request('POST', '/settings', {
        as: 'globalAdmin',
        body: {
          settings: [
            { key: K.ExecutorQueryMaxConcurrent, value: 3 },
            { key: K.ExecutorFileMaxConcurrentRead, value: '4' },
            { key: K.ExecutorRowgroupMaxConcurrentRead, value: '25' },
          ],
        },
      });
      assert.equal(r.status, 200, r.text);
      await waitFor(
        'the worker to apply the new limits',
        async () => (await metric('strata_executor_query_max_concurrent')) === 3,
        {
          timeoutMs: 15_000,
          intervalMs: 200,
        },
      );
      assert.equal(await metric('strata_executor_file_max_concurrent_read'), 4);
      assert.equal(await metric('strata_executor_rowgroup_max_concurrent_read'), 25);
      // Removing the values brings the defaults back.
      await cluster.request('POST', '/settings', {
        as: 'globalAdmin',
        body: { settings: [{ key: K.ExecutorQueryMaxConcurrent, value: null }] },
      });
      await waitFor('the default to come back', async () => (await metric('strata_executor_query_max_concurrent')) === 10, {
        timeoutMs: 15_000,
        intervalMs: 200,
      });
    });
  });
});
