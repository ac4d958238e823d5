import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger, SettingKeys } from '@strata/common';
import { storedMailSettings } from '../../src/notifications/mail-settings.js';
import { Mailer } from '../../src/notifications/mailer.js';
import { Outbox } from '../../src/notifications/outbox.js';
import { SettingsRepository } from '../../src/settings/settings-repository.js';
import { ACCOUNT, ALICE, BOB, CAROL, CAROL_ALIAS, Fixture, NOMAIL, newId, OTHER_ACCOUNT } from '../incidents/fixture.js';
import { closedPort, TestSmtpServer } from './smtp-test-server.js';

const FROM = 'strata@example.test';

/** Log lines the mailer wrote (warn and above). */
class LogCapture extends Writable {
  readonly lines: { level: string; msg: string; [k: string]: unknown }[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    for (const line of chunk.toString().split('\n').filter(Boolean)) this.lines.push(JSON.parse(line));
    done();
  }
}

describe('notification mail over a real SMTP server', function () {
  this.timeout(30_000);
  let f: Fixture;
  let settings: SettingsRepository;
  let smtp: TestSmtpServer;
  let logs: LogCapture;
  /** The mailer's clock: real time until a test freezes or advances it. */
  let frozen: number | undefined;
  const advance = (ms: number) => {
    frozen = (frozen ?? Date.now()) + ms;
  };
  let mailer: Mailer;
  let group: string;

  const newMailer = () =>
    new Mailer({
      store: f.store,
      settings: storedMailSettings(f.store),
      log: createLogger('test', { level: 'warn', destination: logs }),
      now: () => frozen ?? Date.now(),
      smtpTimeoutMs: 5_000,
    });

  beforeEach(async () => {
    f = await Fixture.create();
    settings = new SettingsRepository(f.store);
    smtp = await TestSmtpServer.start();
    logs = new LogCapture();
    frozen = undefined;
    await settings.setSystem(
      [
        { key: SettingKeys.EmailEndpoint, value: smtp.endpoint },
        { key: SettingKeys.EmailFromAddress, value: FROM },
        { key: SettingKeys.FrontendUrl, value: 'https://ops.example.test/strata/' },
      ],
      ALICE,
    );
    group = newId();
    await f.groups.putGroup({ accountId: ACCOUNT, groupId: group, actorUserId: ALICE, name: 'On-call' });
    for (const u of [BOB, CAROL, CAROL_ALIAS, NOMAIL]) await f.groups.putMember(ACCOUNT, group, u, ALICE);
    mailer = newMailer();
  });

  afterEach(async () => {
    await smtp.stop();
    await f.close();
  });

  const outbox = () => new Outbox(f.store).entries();

  it('sends one mail per distinct recipient with markdown text, an HTML rendering and the deep link', async () => {
    const id = newId();
    await f.put(id, {
      ownerType: 'GROUP',
      ownerId: group,
      assigneeUserId: BOB,
      severity: 'SEV1',
      description: 'Disk **97%** full',
    });
    const result = await mailer.runCycle();
    assert.equal(result.sent, 2);
    assert.deepEqual(smtp.received.map((m) => m.to).sort(), [['bob@example.test'], ['carol@example.test']]);
    const mail = smtp.received[0]!;
    assert.equal(mail.subject, '[SEV1] Incident created: Disk full');
    assert.match(mail.raw, new RegExp(`^From: ${FROM}`, 'm'));
    assert.match(mail.raw, /Content-Type: text\/plain/);
    assert.match(mail.raw, /Content-Type: text\/html/);
    for (const text of [
      '# Incident created: Disk full',
      `**Incident:** ${id}`,
      '**Title:** Disk full',
      '**State:** OPEN',
      '**Severity:** SEV1',
      `**Owner:** group On-call (${group})`,
      '**Assignee:** bob',
      '**Updated:** ',
      '## Description',
      'Disk **97%** full',
    ]) {
      assert.ok(mail.raw.includes(text), `text part has ${text}`);
    }
    assert.match(mail.raw, /<h1>Incident created: Disk full<\/h1>/);
    assert.match(mail.raw, /Disk <strong>97%<\/strong> full/);
    const link = `https://ops.example.test/strata/account/${ACCOUNT}/incidents/${id}`;
    assert.ok(mail.raw.includes(`[Open the incident](${link})`), 'markdown link');
    assert.ok(mail.raw.includes(`<a href="${link}">Open the incident</a>`), 'HTML link');
    const rows = await outbox();
    assert.ok(rows.every((r) => r.status === 'sent' && r.attempts === 1));
    assert.deepEqual(smtp.received.map((m) => m.messageId).sort(), rows.map((r) => r.messageId).sort());
    assert.equal((await mailer.runCycle()).sent, 0, 'nothing is sent twice');
  });

  it('omits the deep link when FrontendUrl is blank or not a valid absolute URL', async () => {
    for (const value of ['not a url', '/relative/path', null]) {
      await settings.setSystem([{ key: SettingKeys.FrontendUrl, value }], ALICE);
      await f.put(newId(), {});
      await mailer.runCycle();
      const mail = smtp.received.at(-1)!;
      assert.ok(mail.raw.includes('# Incident created'));
      assert.ok(!mail.raw.includes('Open the incident'), `no link for ${value}`);
      assert.ok(!mail.raw.includes('/incidents/'), `no link for ${value}`);
    }
  });

  it('puts a comment body in its own section and describes updates, resolution and reopening', async () => {
    const id = newId();
    await f.put(id, { assigneeUserId: BOB });
    await f.incidents.addComment(ACCOUNT, id, BOB, 'Rotated the logs.\n\nWatching it.');
    await f.put(id, { assigneeUserId: BOB, state: 'RESOLVED', resolutionNote: 'logs rotated' });
    await f.put(id, { assigneeUserId: BOB, state: 'OPEN', reopenReason: 'full again' });
    await f.put(id, { assigneeUserId: BOB, severity: 'SEV2', title: 'Disk full again' });
    await mailer.runCycle();
    const toAlice = smtp.received.filter((m) => m.to[0] === 'alice@example.test');
    assert.deepEqual(
      toAlice.map((m) => m.subject),
      [
        '[SEV3] Incident created: Disk full',
        '[SEV3] Comment added: Disk full',
        '[SEV3] Incident resolved: Disk full',
        '[SEV3] Incident reopened: Disk full',
        '[SEV2] Incident updated: Disk full again',
      ],
    );
    const [, comment, resolved, reopened, updated] = toAlice;
    assert.ok(comment!.raw.includes('## Comment'));
    assert.ok(
      comment!.raw.includes('Rotated the logs.\n\nWatching it.') ||
        comment!.raw.includes('Rotated the logs.\r\n\r\nWatching it.'),
    );
    assert.ok(resolved!.raw.includes('Resolution note: logs rotated'));
    assert.ok(resolved!.raw.includes('State: OPEN → RESOLVED'));
    assert.ok(reopened!.raw.includes('Reopen reason: full again'));
    assert.ok(updated!.raw.includes('Severity: SEV3 → SEV2'));
    assert.ok(updated!.raw.includes('Title updated'));
  });

  it('shows raw HTML in incident text as text, not markup', async () => {
    await f.put(newId(), { description: '<script>alert(1)</script> <img src=x onerror=y> [x](javascript:alert(2))' });
    await mailer.runCycle();
    const raw = smtp.received[0]!.raw;
    const html = raw.slice(raw.indexOf('Content-Type: text/html'));
    assert.ok(!html.includes('<script>'));
    assert.ok(html.includes('&lt;script&gt;'));
    assert.ok(!html.includes('<img'));
    assert.ok(!html.includes('href="javascript:'));
  });

  it("uses the account's own mail server over the system's, field by field", async () => {
    const accountServer = await TestSmtpServer.start();
    try {
      await settings.setAccount(ACCOUNT, { key: SettingKeys.EmailEndpoint, value: accountServer.endpoint }, ALICE);
      await f.directory.setPermissions(BOB, OTHER_ACCOUNT, ['Service.Incident.Editor']);
      await f.put(newId(), {});
      await f.incidents.putIncident({
        accountId: OTHER_ACCOUNT,
        incidentId: newId(),
        input: { title: 'other', ownerType: 'USER', ownerId: BOB },
        actor: { type: 'USER', id: BOB },
        creatorUserId: BOB,
      });
      assert.equal((await mailer.runCycle()).sent, 2);
      assert.deepEqual(
        accountServer.received.map((m) => m.to),
        [['alice@example.test']],
      );
      // FromAddress is not overridden: the system's applies.
      assert.match(accountServer.received[0]!.raw, new RegExp(`^From: ${FROM}`, 'm'));
      assert.deepEqual(
        smtp.received.map((m) => m.to),
        [['bob@example.test']],
      );
    } finally {
      await accountServer.stop();
    }
  });

  it('keeps the save and the mail when the mail server is down, logs a warning and retries with backoff', async () => {
    await settings.setSystem([{ key: SettingKeys.EmailEndpoint, value: `127.0.0.1:${await closedPort()}` }], ALICE);
    const id = newId();
    const saved = await f.put(id, {});
    assert.equal(saved.created, true);
    const result = await mailer.runCycle();
    assert.deepEqual(result, { sent: 0, failed: 0, dropped: 0, retried: 1, waiting: 0 });
    assert.equal((await f.incidents.getIncident(ACCOUNT, id)).title, 'Disk full', 'nothing rolled back');
    const [row] = await outbox();
    assert.equal(row!.status, 'pending');
    assert.equal(row!.attempts, 1);
    assert.match(row!.lastError!, /ECONNECTION|ECONNREFUSED/);
    assert.ok(logs.lines.some((l) => l.level === 'warn' && /will retry/.test(l.msg)));
    // Not due again before the backoff (Send.Interval, 10 s by default) has passed.
    assert.equal((await mailer.runCycle()).retried, 0);
    // The server comes back: the next due attempt delivers.
    await settings.setSystem([{ key: SettingKeys.EmailEndpoint, value: smtp.endpoint }], ALICE);
    advance(10_001);
    assert.equal((await mailer.runCycle()).sent, 1);
    assert.equal(smtp.received.length, 1);
  });

  it('retries a 4xx answer with backoff and keeps the Message-ID on the resend', async () => {
    smtp.reply = (attempt) => (attempt === 0 ? 451 : undefined);
    await f.put(newId(), {});
    assert.equal((await mailer.runCycle()).retried, 1);
    const [pending] = await outbox();
    assert.equal(pending!.status, 'pending');
    assert.match(pending!.lastError!, /^SMTP 451/);
    advance(10_001);
    assert.equal((await mailer.runCycle()).sent, 1);
    assert.equal(smtp.attempts.length, 2);
    assert.equal(smtp.attempts[0]!.messageId, pending!.messageId);
    assert.equal(smtp.attempts[1]!.messageId, pending!.messageId, 'the resend carries the same Message-ID');
    const [sent] = await outbox();
    assert.equal(sent!.status, 'sent');
    assert.equal(sent!.attempts, 2);
  });

  it('backs off exponentially between temporary failures', async () => {
    smtp.reply = () => 421;
    await f.put(newId(), {});
    advance(0);
    const waits: number[] = [];
    for (let k = 0; k < 3; k++) {
      await mailer.runCycle();
      const [row] = await outbox();
      waits.push(Date.parse(row!.nextAttemptAt) - frozen!);
      frozen = Date.parse(row!.nextAttemptAt);
    }
    assert.deepEqual(waits, [10_000, 20_000, 40_000]);
  });

  it('stops at a 5xx answer and records it', async () => {
    smtp.reply = () => 550;
    await f.put(newId(), {});
    assert.equal((await mailer.runCycle()).failed, 1);
    const [row] = await outbox();
    assert.equal(row!.status, 'failed');
    assert.match(row!.lastError!, /^SMTP 550/);
    advance(3_600_000);
    await mailer.runCycle();
    assert.equal(smtp.attempts.length, 1, 'a permanent failure is not retried');
    assert.ok(logs.lines.some((l) => l.level === 'warn' && /permanently/.test(l.msg)));
  });

  it("drops a mail older than the account's Drop.Unsent.After at processing time", async () => {
    await settings.setAccount(ACCOUNT, { key: SettingKeys.EmailDropUnsentAfter, value: '00:05:00' }, ALICE);
    await f.put(newId(), {});
    advance(5 * 60_000 + 1_000);
    const result = await mailer.runCycle();
    assert.equal(result.dropped, 1);
    assert.equal(smtp.attempts.length, 0);
    const [row] = await outbox();
    assert.equal(row!.status, 'dropped');
  });

  it('drops by the default of one hour, and not before', async () => {
    await f.put(newId(), {});
    smtp.reply = () => 451;
    await mailer.runCycle();
    advance(59 * 60_000);
    assert.equal((await mailer.runCycle()).dropped, 0);
    advance(2 * 60_000);
    assert.equal((await mailer.runCycle()).dropped, 1);
  });

  it('leaves mail waiting while no mail server is configured', async () => {
    await settings.setSystem([{ key: SettingKeys.EmailEndpoint, value: null }], ALICE);
    await f.put(newId(), {});
    assert.equal((await mailer.runCycle()).waiting, 1);
    assert.equal((await outbox())[0]!.status, 'pending');
    assert.ok(logs.lines.some((l) => /no mail server/.test(l.msg)));
  });
});
