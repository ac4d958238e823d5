import assert from 'node:assert/strict';
import { alertIncidentId } from '../../src/alerts/alert-incident-id.js';
import { ACCOUNT, ALICE, BOB, Fixture, newId, OTHER_ACCOUNT } from './fixture.js';

describe('AlertService', () => {
  let f: Fixture;
  before(async () => {
    f = await Fixture.create();
  });
  after(async () => {
    await f.close();
  });

  const fromAlert = (alertRecordId: string, extra: { incidentId?: string; title?: string } = {}) =>
    f.alerts.createIncidentFromAlert({
      accountId: ACCOUNT,
      alertRecordId,
      actorUserId: BOB,
      incident: { title: extra.title ?? 'CPU high', ownerType: 'USER', ownerId: ALICE, severity: 'SEV2' },
      incidentId: extra.incidentId,
    });

  it('derives the incident id deterministically from account and alert', () => {
    const alert = newId();
    assert.equal(alertIncidentId(ACCOUNT, alert), alertIncidentId(ACCOUNT.toUpperCase(), alert.toUpperCase()));
    assert.notEqual(alertIncidentId(ACCOUNT, alert), alertIncidentId(OTHER_ACCOUNT, alert));
    assert.notEqual(alertIncidentId(ACCOUNT, alert), alertIncidentId(ACCOUNT, newId()));
    assert.match(alertIncidentId(ACCOUNT, alert), /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('creates, links, activates and notifies on the first call; links only on the second', async () => {
    const alert = newId();
    const first = await fromAlert(alert);
    assert.equal(first.created, true);
    assert.equal(first.incident.incidentId, alertIncidentId(ACCOUNT, alert));
    assert.equal(first.incident.createdByUserId, BOB);
    assert.equal(first.incident.severity, 'SEV2');
    assert.equal(first.link.linkSource, 'alert-triggered');
    const second = await fromAlert(alert, { title: 'ignored' });
    assert.equal(second.created, false);
    assert.equal(second.incident.incidentId, first.incident.incidentId);
    assert.equal(second.incident.title, 'CPU high', 'an existing incident is not changed');

    const id = first.incident.incidentId;
    assert.deepEqual(
      (await f.incidents.listHistory(ACCOUNT, id)).map((e) => [e.eventType, e.actorType, e.actorId]),
      [
        ['INCIDENT_CREATED', 'SYSTEM', `alert:${alert}`],
        ['ALERT_TRIGGERED_INCIDENT', 'SYSTEM', `alert:${alert}`],
        ['ALERT_LINKED_INCIDENT', 'SYSTEM', `alert:${alert}`],
      ],
    );
    const linkEvent = (await f.incidents.listHistory(ACCOUNT, id))[1]!;
    assert.deepEqual(JSON.parse(linkEvent.afterJson!), { ...first.link });
    assert.equal(linkEvent.metadataJson, `owner=INCIDENT_OWNER_TYPE_USER:${ALICE}`);
    const mails = await f.outbox(id);
    assert.deepEqual(
      mails.map((m) => m.event_type),
      ['INCIDENT_CREATED'],
      'only the creation notifies',
    );
    const links = (await f.alerts.listLinks(ACCOUNT)).filter((l) => l.alertRecordId === alert);
    assert.deepEqual(
      links.map((l) => [l.incidentId, l.linkSource]),
      [[id, 'alert-triggered']],
    );
    const state = (await f.alerts.listRuntimeStates(ACCOUNT)).find((s) => s.alertRecordId === alert);
    assert.equal(state!.state, 'ACTIVE');
  });

  it('creates exactly one incident for concurrent calls of one alert', async () => {
    const alert = newId();
    const results = await Promise.all(Array.from({ length: 8 }, () => fromAlert(alert)));
    assert.equal(results.filter((r) => r.created).length, 1);
    assert.equal(new Set(results.map((r) => r.incident.incidentId)).size, 1);
    const id = results[0]!.incident.incidentId;
    const events = (await f.incidents.listHistory(ACCOUNT, id)).map((e) => e.eventType);
    assert.equal(events.filter((e) => e === 'INCIDENT_CREATED').length, 1);
    assert.equal(events.filter((e) => e === 'ALERT_LINKED_INCIDENT').length, 7);
    assert.equal((await f.outbox(id)).length, 1);
    assert.equal((await f.alerts.listLinks(ACCOUNT)).filter((l) => l.alertRecordId === alert).length, 1);
  });

  it('uses a supplied incident id, and links an existing incident without creating one', async () => {
    const alert = newId();
    const existing = newId();
    await f.put(existing, {});
    const res = await fromAlert(alert, { incidentId: existing });
    assert.equal(res.created, false);
    assert.equal(res.incident.incidentId, existing);
    assert.equal((await f.incidents.listHistory(ACCOUNT, existing)).at(-1)!.eventType, 'ALERT_LINKED_INCIDENT');
  });

  it('applies the incident rules when it creates: owner required', async () => {
    await assert.rejects(
      f.alerts.createIncidentFromAlert({
        accountId: ACCOUNT,
        alertRecordId: newId(),
        actorUserId: BOB,
        incident: { title: 'x' },
        incidentId: undefined,
      }),
      { kind: 'invalid', message: 'Incident owner is required.' },
    );
  });

  it('manual links default to "manual", record ALERT_LINKED_INCIDENT once, and can be removed', async () => {
    const incident = newId();
    await f.put(incident, {});
    const alert = newId();
    const a = await f.alerts.putLink(ACCOUNT, alert, incident, BOB);
    assert.equal(a.created, true);
    assert.equal(a.link.linkSource, 'manual');
    const b = await f.alerts.putLink(ACCOUNT, alert, incident, BOB, 'runbook');
    assert.equal(b.created, false);
    assert.equal(b.link.linkSource, 'runbook');
    const events = (await f.incidents.listHistory(ACCOUNT, incident)).map((e) => [e.eventType, e.actorType]);
    assert.deepEqual(events, [
      ['INCIDENT_CREATED', 'USER'],
      ['ALERT_LINKED_INCIDENT', 'USER'],
    ]);
    assert.equal((await f.outbox(incident)).length, 1, 'links notify nobody');
    await f.alerts.deleteLink(ACCOUNT, alert, incident);
    assert.equal((await f.alerts.listLinks(ACCOUNT)).filter((l) => l.alertRecordId === alert).length, 0);
    await assert.rejects(f.alerts.deleteLink(ACCOUNT, alert, incident), { kind: 'not_found' });
    await assert.rejects(f.alerts.putLink(ACCOUNT, alert, newId(), BOB), { kind: 'not_found' });
  });

  it('sets runtime states', async () => {
    const alert = newId();
    assert.equal((await f.alerts.putRuntimeState(ACCOUNT, alert, 'active', BOB)).created, true);
    const { state, created } = await f.alerts.putRuntimeState(ACCOUNT, alert, 'RESOLVED', ALICE);
    assert.equal(created, false);
    assert.equal(state.state, 'RESOLVED');
    assert.equal(state.updatedByUserId, ALICE);
    await assert.rejects(f.alerts.putRuntimeState(ACCOUNT, alert, ' ', BOB), { kind: 'invalid' });
    await assert.rejects(f.alerts.putRuntimeState(ACCOUNT, alert, 'not ok!', BOB), { kind: 'invalid' });
  });
});
