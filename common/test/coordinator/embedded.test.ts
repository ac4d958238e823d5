import assert from 'node:assert/strict';
import { createCoordinator, createLogger, EmbeddedCoordinator, loadConfigObject } from '../../src/index.js';
import { coordinatorContract, RecordingHandlers, uniqueElection } from './contract.js';

const log = createLogger('test', { level: 'silent' });

describe('EmbeddedCoordinator', () => {
  let coord: EmbeddedCoordinator | undefined;

  describe('contract', () => {
    coordinatorContract(
      async () => {
        coord ??= new EmbeddedCoordinator(log);
        return coord;
      },
      async () => {
        await coord?.close();
        coord = undefined;
      },
    );
  });

  it('close demotes the leader and removes every registration', async () => {
    const c = new EmbeddedCoordinator(log);
    const handlers = new RecordingHandlers();
    const election = uniqueElection();
    const candidacy = await c.campaign(election, 'a:1', handlers);
    await c.registerWorker({ endpoint: '127.0.0.1:7001', freeBytes: 1, writable: true });
    const lists: number[] = [];
    c.watchWorkers((w) => lists.push(w.length));
    await new Promise((resolve) => setImmediate(resolve));
    await c.close();
    assert.deepEqual(handlers.elected, [1]);
    assert.deepEqual(handlers.demoted, ['resigned']);
    assert.equal(candidacy.isLeader, false);
    assert.deepEqual(lists, [1, 0]);
    await assert.rejects(c.campaign(election, 'b:1', new RecordingHandlers()), /closed/);
  });

  it('delivers onElected after campaign has returned the candidacy', async () => {
    const c = new EmbeddedCoordinator(log);
    let seenLeader: boolean | undefined;
    const candidacy = await c.campaign(uniqueElection(), 'a:1', {
      onElected: () => {
        seenLeader = candidacy.isLeader;
      },
      onDemoted: () => {},
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(seenLeader, true);
    await c.close();
  });

  it('createCoordinator picks the embedded coordinator when etcd.endpoints is empty', async () => {
    const config = loadConfigObject({ backend: { enable: true }, etcd: { endpoints: [] } }, {});
    const c = await createCoordinator(config, log);
    try {
      assert.ok(c instanceof EmbeddedCoordinator);
    } finally {
      await c.close();
    }
  });
});
