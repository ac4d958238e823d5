import assert from 'node:assert/strict';
import { createLogger, SettingKeys } from '@strata/common';
import { waitFor } from '@strata/common/testing';
import type { LeaderState } from '../../src/leader-state.js';
import { storedMailSettings } from '../../src/notifications/mail-settings.js';
import { MailerDuty } from '../../src/notifications/mailer-duty.js';
import { Outbox } from '../../src/notifications/outbox.js';
import { SettingsRepository } from '../../src/settings/settings-repository.js';
import { ALICE, Fixture, newId } from '../incidents/fixture.js';
import { TestSmtpServer } from './smtp-test-server.js';

describe('MailerDuty (leader duty)', function () {
  this.timeout(30_000);
  let f: Fixture;
  let smtp: TestSmtpServer;
  before(async () => {
    f = await Fixture.create();
    smtp = await TestSmtpServer.start();
    await new SettingsRepository(f.store).setSystem(
      [
        { key: SettingKeys.EmailEndpoint, value: smtp.endpoint },
        { key: SettingKeys.EmailFromAddress, value: 'strata@example.test' },
        { key: SettingKeys.EmailSendInterval, value: '00:00:01' },
      ],
      ALICE,
    );
  });
  after(async () => {
    await smtp.stop();
    await f.close();
  });

  it('sends the backlog at election, then every Send.Interval, and sends nothing after stop', async () => {
    await f.put(newId(), {});
    const duty = new MailerDuty((state) => storedMailSettings(state.store));
    const state = { term: 1, store: f.store, log: createLogger('test', { level: 'silent' }) } as unknown as LeaderState;
    await duty.start(state);
    await waitFor('the queued mail', () => smtp.received.length === 1);
    await f.put(newId(), {});
    await waitFor('the mail of the next interval', () => smtp.received.length === 2);
    await duty.stop();
    await f.put(newId(), {});
    // Two intervals pass without a leader duty: the new mail stays queued.
    await new Promise((r) => setTimeout(r, 2_200));
    assert.equal(smtp.received.length, 2);
    const statuses = (await new Outbox(f.store).entries()).map((e) => e.status);
    assert.deepEqual(statuses, ['sent', 'sent', 'pending']);
  });
});
