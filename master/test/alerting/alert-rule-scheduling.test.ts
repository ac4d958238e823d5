import assert from 'node:assert/strict';
import type { AlertRuleDefinition, FiringRecord } from '@strata/proto/alerting/v1/alert_rules';
import { alertRecordId } from '../../src/alerting/alert-record-id.js';
import { AlertRuleService, currentTick } from '../../src/alerting/alert-rule-service.js';
import { renderAlertTemplate } from '../../src/alerting/alert-template.js';
import { ACCOUNT, ALICE, Fixture, newId } from '../incidents/fixture.js';

const definition = (overrides: Partial<AlertRuleDefinition> = {}): AlertRuleDefinition => ({
  name: 'CPU',
  query: 'cpu | where v > 90',
  intervalSeconds: 60,
  lookbackSeconds: 60,
  condition: { kind: 'rows', column: '', operator: '', threshold: 0 },
  dimensions: ['host'],
  severity: 'SEV3',
  ownerType: 'USER',
  ownerId: ALICE,
  assigneeUserId: '',
  title: 'CPU on {{host}}',
  description: '',
  enabled: true,
  mutedUntil: '',
  resolveAfter: 1,
  timeoutSeconds: 10,
  ...overrides,
});

const firing = (host: string): FiringRecord => ({ dimensionsJson: JSON.stringify({ host }), rowJson: JSON.stringify({ host }) });

describe('alert rule scheduling (master)', () => {
  let f: Fixture;
  let nowMs = Date.parse('2026-03-01T10:00:30.000Z');
  let rules: AlertRuleService;
  before(async () => {
    f = await Fixture.create();
    rules = new AlertRuleService(f.store, f.incidents, f.alerts, () => new Date(nowMs));
  });
  after(async () => {
    await f.close();
  });

  it('aligns ticks to the interval', () => {
    assert.equal(currentTick(new Date('2026-03-01T10:00:30Z'), 60), '2026-03-01T10:00:00.000Z');
    assert.equal(currentTick(new Date('2026-03-01T10:07:30Z'), 300), '2026-03-01T10:05:00.000Z');
  });

  it('derives one stable record id per rule and dimension values', () => {
    const a = alertRecordId(ACCOUNT, 'r', ['host', 'svc'], { svc: 'api', host: 'a' });
    assert.equal(a, alertRecordId(ACCOUNT.toUpperCase(), 'R', ['host', 'svc'], { host: 'a', svc: 'api' }));
    assert.notEqual(a, alertRecordId(ACCOUNT, 'r', ['host', 'svc'], { host: 'b', svc: 'api' }));
    assert.notEqual(a, alertRecordId(ACCOUNT, 'other', ['host', 'svc'], { host: 'a', svc: 'api' }));
  });

  it('renders row values into titles, cut to the limit', () => {
    assert.equal(renderAlertTemplate('CPU {{ host }} at {{V}}% {{missing}}', { host: 'a', v: 97 }, 100), 'CPU a at 97% ');
    assert.equal(renderAlertTemplate('{{x}}', { x: 'y'.repeat(50) }, 10).length, 10);
  });

  it('hands each due tick to one claimer; a second claim finds nothing', async () => {
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition(), ALICE);
    const [one, two] = await Promise.all([rules.claim(10), rules.claim(10)]);
    const all = [...one!, ...two!].filter((c) => c.rule!.alertId === alertId);
    assert.equal(all.length, 1);
    assert.equal(all[0]!.tickAt, '2026-03-01T10:00:00.000Z');
  });

  it('applies a tick once; a stale or repeated completion is refused', async () => {
    nowMs = Date.parse('2026-03-01T10:01:05.000Z');
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition(), ALICE);
    const [claim] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
    const report = {
      accountId: ACCOUNT,
      alertId,
      tickAt: claim!.tickAt,
      claimToken: claim!.claimToken,
      durationMs: 5,
      rows: 1,
      firing: [firing('a')],
      error: '',
      evaluator: 'test',
    };
    const first = await rules.complete(report);
    assert.equal(first.applied, true);
    assert.equal(first.evaluation!.firedRecordIds.length, 1);
    assert.equal((await rules.complete(report)).applied, false, 'the same tick twice');
    assert.equal((await rules.complete({ ...report, claimToken: 'forged' })).applied, false);
    const { incidents } = await f.incidents.listIncidents(
      ACCOUNT,
      { states: [], severities: [], ownerIds: [], assigneeUserIds: [] },
      { offset: 0, limit: 100 },
    );
    assert.equal(incidents.filter((i) => i.title === 'CPU on a').length, 1);
    assert.equal((await rules.claim(10)).filter((c) => c.rule!.alertId === alertId).length, 0, 'nothing due within the tick');
  });

  it('hands an expired claim out again and refuses the late report of the first claimer', async () => {
    nowMs = Date.parse('2026-03-01T10:02:01.000Z');
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition({ timeoutSeconds: 1 }), ALICE);
    const [first] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
    nowMs += 1000 + 30_000 + 1; // past the timeout and the grace, still within the tick
    const [second] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
    assert.equal(second!.tickAt, first!.tickAt);
    const report = {
      accountId: ACCOUNT,
      alertId,
      tickAt: first!.tickAt,
      durationMs: 1,
      rows: 0,
      firing: [],
      error: '',
      evaluator: 'x',
    };
    assert.equal((await rules.complete({ ...report, claimToken: first!.claimToken })).applied, false);
    assert.equal((await rules.complete({ ...report, claimToken: second!.claimToken })).applied, true);
    assert.equal((await rules.evaluations(ACCOUNT, alertId, 10)).length, 1);
  });

  it('the next tick supersedes a claim of the previous one, so a lost claim costs one tick at most', async () => {
    nowMs = Date.parse('2026-03-01T10:04:01.000Z');
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition({ timeoutSeconds: 60 }), ALICE);
    const [lost] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
    nowMs = Date.parse('2026-03-01T10:05:00.500Z'); // the claim has not expired, but its tick is over
    const [next] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
    assert.equal(next!.tickAt, '2026-03-01T10:05:00.000Z');
    const report = { accountId: ACCOUNT, alertId, durationMs: 1, rows: 0, firing: [], error: '', evaluator: 'x' };
    assert.equal((await rules.complete({ ...report, tickAt: lost!.tickAt, claimToken: lost!.claimToken })).applied, false);
    assert.equal((await rules.complete({ ...report, tickAt: next!.tickAt, claimToken: next!.claimToken })).applied, true);
  });

  it('a record that fires while muted is MUTED without an incident, and fires once the mute is over', async () => {
    nowMs = Date.parse('2026-03-01T11:00:01.000Z');
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition({ mutedUntil: '2026-03-01T11:01:30.000Z', title: 'Muted {{host}}' }), ALICE);
    const run = async () => {
      const [claim] = (await rules.claim(10)).filter((c) => c.rule!.alertId === alertId);
      return rules.complete({
        accountId: ACCOUNT,
        alertId,
        tickAt: claim!.tickAt,
        claimToken: claim!.claimToken,
        durationMs: 1,
        rows: 1,
        firing: [firing('m')],
        error: '',
        evaluator: 'x',
      });
    };
    const titled = async () =>
      (
        await f.incidents.listIncidents(
          ACCOUNT,
          { states: [], severities: [], ownerIds: [], assigneeUserIds: [] },
          { offset: 0, limit: 500 },
        )
      ).incidents.filter((i) => i.title === 'Muted m');
    assert.deepEqual((await run()).evaluation!.firedRecordIds, []);
    assert.equal((await rules.records(ACCOUNT, alertId))[0]!.state, 'MUTED');
    assert.equal((await titled()).length, 0);
    nowMs = Date.parse('2026-03-01T11:01:01.000Z'); // still muted
    assert.deepEqual((await run()).evaluation!.firedRecordIds, []);
    nowMs = Date.parse('2026-03-01T11:02:01.000Z'); // the mute is over
    assert.equal((await run()).evaluation!.firedRecordIds.length, 1);
    assert.equal((await rules.records(ACCOUNT, alertId))[0]!.state, 'ACTIVE');
    assert.equal((await titled()).length, 1);
  });

  it('does not claim disabled rules', async () => {
    nowMs = Date.parse('2026-03-01T11:06:01.000Z');
    const alertId = newId();
    await rules.put(ACCOUNT, alertId, definition({ enabled: false }), ALICE);
    assert.equal((await rules.claim(10)).filter((c) => c.rule!.alertId === alertId).length, 0);
  });
});
