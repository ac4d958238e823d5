import assert from 'node:assert/strict';
import { INCIDENT_STATES, type IncidentState } from '../../src/incidents/incident-model.js';
import { Fixture, newId } from './fixture.js';

/** The state table of docs/api.md: (from, to) → event type for allowed moves. Everything else is refused. */
const ALLOWED: Record<string, string> = {
  'OPEN->IN_PROGRESS': 'INCIDENT_UPDATED',
  'OPEN->MITIGATED': 'INCIDENT_UPDATED',
  'OPEN->RESOLVED': 'INCIDENT_RESOLVED',
  'IN_PROGRESS->MITIGATED': 'INCIDENT_UPDATED',
  'IN_PROGRESS->RESOLVED': 'INCIDENT_RESOLVED',
  'MITIGATED->IN_PROGRESS': 'INCIDENT_UPDATED',
  'MITIGATED->RESOLVED': 'INCIDENT_RESOLVED',
  'RESOLVED->OPEN': 'INCIDENT_REOPENED',
};

/** How to bring a new incident into `state` through allowed moves. */
const PATH: Record<IncidentState, Record<string, string>[]> = {
  OPEN: [],
  IN_PROGRESS: [{ state: 'IN_PROGRESS' }],
  MITIGATED: [{ state: 'MITIGATED' }],
  RESOLVED: [{ state: 'RESOLVED', resolutionNote: 'fixed' }],
};

describe('incident state table', () => {
  let f: Fixture;
  before(async () => {
    f = await Fixture.create();
  });
  after(async () => {
    await f.close();
  });

  async function incidentIn(state: IncidentState): Promise<string> {
    const id = newId();
    await f.put(id, {});
    for (const step of PATH[state]) await f.put(id, step);
    assert.equal((await f.incidents.getIncident('11111111-1111-4111-8111-111111111111', id)).state, state);
    return id;
  }

  for (const from of INCIDENT_STATES) {
    for (const to of INCIDENT_STATES) {
      const key = `${from}->${to}`;
      const expected = ALLOWED[key];
      if (from === to) {
        it(`${key}: re-saving the same state is a normal save`, async () => {
          const id = await incidentIn(from);
          const res = await f.put(id, { state: to, title: 'Disk full (renamed)' });
          assert.equal(res.incident.state, to);
          const history = await f.incidents.listHistory('11111111-1111-4111-8111-111111111111', id);
          assert.equal(history.at(-1)!.eventType, 'INCIDENT_UPDATED');
          assert.equal(history.at(-1)!.metadataJson.includes('State:'), false);
        });
      } else if (expected) {
        it(`${key}: allowed, records ${expected}`, async () => {
          const id = await incidentIn(from);
          const extra =
            to === 'RESOLVED'
              ? { resolutionNote: 'root cause removed' }
              : from === 'RESOLVED'
                ? { reopenReason: 'came back' }
                : {};
          const mailsBefore = (await f.outbox(id)).length;
          const res = await f.put(id, { state: to, ...extra });
          assert.equal(res.incident.state, to);
          assert.equal(res.changed, true);
          const history = await f.incidents.listHistory('11111111-1111-4111-8111-111111111111', id);
          assert.equal(history.at(-1)!.eventType, expected);
          assert.match(history.at(-1)!.metadataJson, new RegExp(`changes=State:${from}->${to}`));
          const mails = (await f.outbox(id)).slice(mailsBefore);
          assert.deepEqual(
            mails.map((m) => m.event_type),
            [expected],
            `one ${expected} notification to the owner`,
          );
        });
        if (to === 'RESOLVED') {
          it(`${key}: refused without resolutionNote`, async () => {
            const id = await incidentIn(from);
            await assert.rejects(f.put(id, { state: to }), {
              kind: 'invalid',
              message: 'Resolution note is required when resolving an incident.',
            });
            await assert.rejects(f.put(id, { state: to, resolutionNote: '   ' }), {
              message: 'Resolution note is required when resolving an incident.',
            });
          });
        }
        if (from === 'RESOLVED') {
          it(`${key}: refused without reopenReason`, async () => {
            const id = await incidentIn(from);
            await assert.rejects(f.put(id, { state: to }), {
              kind: 'invalid',
              message: 'Reopen reason is required when reopening a resolved incident.',
            });
          });
        }
      } else {
        it(`${key}: refused with "Invalid incident state transition"`, async () => {
          const id = await incidentIn(from);
          const before = await f.incidents.listHistory('11111111-1111-4111-8111-111111111111', id);
          await assert.rejects(f.put(id, { state: to, resolutionNote: 'n', reopenReason: 'r' }), {
            kind: 'invalid',
            message: 'Invalid incident state transition',
          });
          const incident = await f.incidents.getIncident('11111111-1111-4111-8111-111111111111', id);
          assert.equal(incident.state, from);
          assert.equal((await f.incidents.listHistory('11111111-1111-4111-8111-111111111111', id)).length, before.length);
        });
      }
    }
  }
});
