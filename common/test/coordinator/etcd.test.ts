import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import {
  createCoordinator,
  createLogger,
  EtcdCoordinator,
  type LeaderInfo,
  loadConfigObject,
  type WorkerRegistration,
} from '../../src/index.js';
import { type EtcdServer, startEtcd, waitFor } from '../../src/testing/index.js';
import { coordinatorContract, RecordingHandlers, uniqueElection, uniqueEndpoint } from './contract.js';

const log = createLogger('test', { level: 'silent' });
const TTL = 2;
const CHILD = fileURLToPath(new URL('./etcd-child.js', import.meta.url));

/** A child process running etcd-child.js, with its JSON events collected. */
class Child {
  readonly events: Record<string, unknown>[] = [];
  readonly process: ChildProcess;
  constructor(args: string[]) {
    this.process = spawn(process.execPath, [CHILD, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    createInterface({ input: this.process.stdout! }).on('line', (line) => {
      try {
        this.events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not an event line
      }
    });
  }
  has(event: string): Record<string, unknown> | undefined {
    return this.events.find((e) => e.event === event);
  }
  async kill(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise((resolve) => this.process.once('exit', resolve));
    this.process.kill('SIGKILL');
    await exited;
  }
}

describe('EtcdCoordinator (real etcd)', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;
  const opened: EtcdCoordinator[] = [];
  const children: Child[] = [];
  let prefix: string;
  let raw: Etcd3;

  const open = async (overrides: Partial<{ endpoint: string; ttl: number }> = {}) => {
    const coord = new EtcdCoordinator(
      { endpoints: [overrides.endpoint ?? etcd.endpoint], prefix, leaseTtlSeconds: overrides.ttl ?? TTL },
      log,
    );
    opened.push(coord);
    return coord;
  };
  const child = (...args: string[]) => {
    const c = new Child([etcd.endpoint, prefix, String(TTL), ...args]);
    children.push(c);
    return c;
  };

  before(async () => {
    etcd = await startEtcd();
    raw = new Etcd3({ hosts: [etcd.endpoint] });
  });
  after(async () => {
    raw?.close();
    await etcd?.stop();
  });
  beforeEach(() => {
    prefix = `/strata-test/${Math.random().toString(36).slice(2)}`;
  });
  const closeAll = async () => {
    await Promise.all(children.splice(0).map((c) => c.kill()));
    await Promise.all(opened.splice(0).map((c) => c.close()));
  };
  afterEach(closeAll);

  describe('contract', () => {
    coordinatorContract(() => open(), closeAll);
  });

  it('stores election and worker keys under the configured prefix', async () => {
    const coord = await open();
    const handlers = new RecordingHandlers();
    await coord.campaign('database', '127.0.0.1:6000', handlers);
    await waitFor('elected', () => handlers.elected.length === 1);
    await coord.registerWorker({ endpoint: '127.0.0.1:7001', freeBytes: 9, writable: true });
    const keys = Object.keys(await raw.getAll().prefix(`${prefix}/`).strings()).sort();
    assert.equal(keys.length, 2, keys.join(', '));
    assert.match(keys[0]!, new RegExp(`^${prefix}/election/database/[0-9a-f]+$`));
    assert.equal(keys[1], `${prefix}/workers/127.0.0.1:7001`);
    const stored = JSON.parse((await raw.get(keys[1]!).string())!) as WorkerRegistration;
    assert.deepEqual(
      { ...stored, updatedAt: undefined },
      {
        endpoint: '127.0.0.1:7001',
        freeBytes: 9,
        writable: true,
        updatedAt: undefined,
      },
    );
    const { kvs } = await raw.get(keys[0]!).exec();
    assert.equal(Number(kvs[0]!.create_revision), handlers.elected[0], 'the term is the create revision');
  });

  it('fails over to a standby with a higher term when the leader process is killed', async () => {
    const election = uniqueElection();
    const holder = child('campaign', election, 'holder:1');
    const first = await waitFor('child elected', () => holder.has('elected'));
    const coord = await open();
    const standby = new RecordingHandlers();
    const candidacy = await coord.campaign(election, 'standby:1', standby);
    // The standby waits while the holder keeps its lease alive.
    await new Promise((resolve) => setTimeout(resolve, (TTL + 1) * 1000));
    assert.deepEqual(standby.elected, []);
    const observed: (LeaderInfo | undefined)[] = [];
    const stop = coord.observeLeader(election, (l) => observed.push(l));
    await waitFor('observer sees the holder', () => observed.at(-1)?.value === 'holder:1');
    await holder.kill();
    await waitFor('standby elected after the lease expired', () => standby.elected.length === 1, { timeoutMs: 20_000 });
    assert.ok(standby.elected[0]! > (first.term as number), `${standby.elected[0]} > ${first.term}`);
    assert.equal(candidacy.term, standby.elected[0]);
    await waitFor('observer sees the standby', () => observed.at(-1)?.value === 'standby:1');
    stop();
    assert.deepEqual(await coord.getLeader(election), { value: 'standby:1', term: standby.elected[0] });
  });

  it('demotes the leader at once when its lease is revoked, then re-campaigns with a higher term', async () => {
    const coord = await open();
    const election = uniqueElection();
    const handlers = new RecordingHandlers();
    const candidacy = await coord.campaign(election, 'a:1', handlers);
    await waitFor('elected', () => handlers.elected.length === 1);
    const { kvs } = await raw.getAll().prefix(`${prefix}/election/${election}/`).exec();
    assert.equal(kvs.length, 1);
    await raw.leaseClient.leaseRevoke({ ID: kvs[0]!.lease });
    await waitFor('demoted', () => handlers.demoted.length === 1);
    assert.match(handlers.demoted[0]!, /campaign failed|keep-alive/);
    await waitFor('elected again', () => handlers.elected.length === 2, { timeoutMs: 20_000 });
    assert.ok(handlers.elected[1]! > handlers.elected[0]!);
    assert.equal(candidacy.term, handlers.elected[1]);
    await candidacy.assertLeadership();
  });

  it('assertLeadership refuses once the election key no longer carries the term', async () => {
    const coord = await open();
    const election = uniqueElection();
    const handlers = new RecordingHandlers();
    const candidacy = await coord.campaign(election, 'a:1', handlers);
    await waitFor('elected', () => handlers.elected.length === 1);
    await candidacy.assertLeadership();
    // What a deposed leader sees: its key is gone although its own lease may still look alive.
    await raw.delete().prefix(`${prefix}/election/${election}/`);
    await assert.rejects(candidacy.assertLeadership(), { name: 'StrataError', kind: 'unavailable' });
    assert.equal(candidacy.isLeader, false);
    await waitFor('demoted', () => handlers.demoted.length === 1);
  });

  it('removes a worker registration after the TTL when the worker process dies', async () => {
    const endpoint = uniqueEndpoint();
    const coord = await open();
    const lists: WorkerRegistration[][] = [];
    const stop = coord.watchWorkers((w) => lists.push(w));
    const worker = child('worker', endpoint);
    await waitFor('registered', () => worker.has('registered'));
    await waitFor('watch sees the worker', () => lists.at(-1)?.some((w) => w.endpoint === endpoint));
    assert.equal(lists.at(-1)!.find((w) => w.endpoint === endpoint)!.freeBytes, 42);
    // Alive and renewing: still registered after more than one TTL.
    await new Promise((resolve) => setTimeout(resolve, (TTL + 1) * 1000));
    assert.ok((await coord.listWorkers()).some((w) => w.endpoint === endpoint));
    await worker.kill();
    await waitFor('watch sees the worker expire', () => lists.at(-1)?.every((w) => w.endpoint !== endpoint), {
      timeoutMs: 20_000,
    });
    stop();
  });

  it('registers a worker again when its lease is lost', async () => {
    const coord = await open();
    const endpoint = uniqueEndpoint();
    const lease = await coord.registerWorker({ endpoint, freeBytes: 1, writable: true });
    const key = `${prefix}/workers/${endpoint}`;
    const { kvs } = await raw.get(key).exec();
    await raw.leaseClient.leaseRevoke({ ID: kvs[0]!.lease });
    const again = await waitFor('registered again under a new lease', async () => {
      const r = await raw.get(key).exec();
      return r.kvs[0] && r.kvs[0].lease !== kvs[0]!.lease ? r.kvs[0] : undefined;
    });
    assert.equal((JSON.parse(again.value.toString()) as WorkerRegistration).endpoint, endpoint);
    await lease.update({ writable: false });
    const listed = (await coord.listWorkers()).find((w) => w.endpoint === endpoint);
    assert.equal(listed?.writable, false);
  });

  it('close revokes registrations and resigns, so others see it at once', async () => {
    const a = await open();
    const b = await open();
    const election = uniqueElection();
    const ha = new RecordingHandlers();
    const hb = new RecordingHandlers();
    await a.campaign(election, 'a:1', ha);
    await waitFor('a elected', () => ha.elected.length === 1);
    await b.campaign(election, 'b:1', hb);
    const endpoint = uniqueEndpoint();
    await a.registerWorker({ endpoint, freeBytes: 1, writable: true });
    await a.close();
    assert.deepEqual(ha.demoted, ['resigned']);
    await waitFor('b elected', () => hb.elected.length === 1);
    assert.equal(
      (await b.listWorkers()).find((w) => w.endpoint === endpoint),
      undefined,
    );
  });

  it('demotes the leader when etcd stops answering', async () => {
    const own = await startEtcd();
    try {
      const coord = await open({ endpoint: own.endpoint });
      const handlers = new RecordingHandlers();
      const candidacy = await coord.campaign(uniqueElection(), 'a:1', handlers);
      await waitFor('elected', () => handlers.elected.length === 1);
      await own.stop();
      await waitFor('demoted', () => handlers.demoted.length === 1, { timeoutMs: 20_000 });
      assert.equal(candidacy.isLeader, false);
      await assert.rejects(candidacy.assertLeadership(), { kind: 'unavailable' });
    } finally {
      await own.stop();
    }
  });

  it('createCoordinator picks etcd when endpoints are configured', async () => {
    const config = loadConfigObject({ backend: { enable: true }, etcd: { endpoints: [etcd.endpoint], prefix } }, {});
    const coord = await createCoordinator(config, log);
    try {
      assert.ok(coord instanceof EtcdCoordinator);
      assert.deepEqual(await coord.listWorkers(), []);
    } finally {
      await coord.close();
    }
  });
});
