import assert from 'node:assert/strict';
import {
  type Coordinator,
  type KeyRankingHistory,
  keyRankingId,
  type LeaderInfo,
  type LeadershipHandlers,
  sortMembers,
  type WorkerRegistration,
} from '../../src/index.js';
import { waitFor } from '../../src/testing/index.js';

/** Records what a candidate's handlers were told, for assertions. */
export class RecordingHandlers implements LeadershipHandlers {
  readonly elected: number[] = [];
  readonly demoted: string[] = [];
  onElected(term: number): void {
    this.elected.push(term);
  }
  onDemoted(reason: string): void {
    this.demoted.push(reason);
  }
}

let electionSeq = 0;
/** A fresh election name per test, so tests never see each other's candidates. */
export function uniqueElection(): string {
  return `test-${process.pid}-${Date.now()}-${electionSeq++}`;
}

let endpointSeq = 0;
export function uniqueEndpoint(): string {
  return `127.0.0.1:${20_000 + (endpointSeq++ % 40_000)}`;
}

/**
 * Behaviour every Coordinator implementation shares. `open` gives a coordinator connected to the
 * same store each time it is called (embedded: the same instance; etcd: a new client); the suite
 * closes nothing it did not open with `open`, and `closeAll` runs after each test.
 */
export function coordinatorContract(open: () => Promise<Coordinator>, closeAll: () => Promise<void>): void {
  afterEach(closeAll);

  it('elects the first campaigner and keeps the second waiting', async () => {
    const coord = await open();
    const election = uniqueElection();
    const first = new RecordingHandlers();
    const second = new RecordingHandlers();
    const a = await coord.campaign(election, 'a:1', first);
    await waitFor('first elected', () => first.elected.length === 1);
    const b = await coord.campaign(election, 'b:1', second);
    assert.equal(a.isLeader, true);
    assert.equal(a.term, first.elected[0]);
    const leader = await coord.getLeader(election);
    assert.deepEqual(leader, { value: 'a:1', term: first.elected[0] });
    assert.equal(b.isLeader, false);
    assert.equal(b.term, undefined);
    assert.deepEqual(second.elected, []);
    await a.assertLeadership();
    await assert.rejects(b.assertLeadership(), { name: 'StrataError', kind: 'unavailable' });
  });

  it('passes leadership to the next candidate on resign, with a higher term', async () => {
    const coord = await open();
    const election = uniqueElection();
    const first = new RecordingHandlers();
    const second = new RecordingHandlers();
    const a = await coord.campaign(election, 'a:1', first);
    await waitFor('first elected', () => first.elected.length === 1);
    const b = await coord.campaign(election, 'b:1', second);
    await a.resign();
    assert.deepEqual(first.demoted, ['resigned']);
    assert.equal(a.isLeader, false);
    await assert.rejects(a.assertLeadership(), { kind: 'unavailable' });
    await waitFor('second elected', () => second.elected.length === 1);
    assert.ok(second.elected[0]! > first.elected[0]!, `term ${second.elected[0]} must exceed ${first.elected[0]}`);
    assert.equal(b.isLeader, true);
    await b.assertLeadership();
    const leader = await waitFor('leader b', async () => {
      const l = await coord.getLeader(election);
      return l?.value === 'b:1' ? l : undefined;
    });
    assert.equal(leader.term, second.elected[0]);
    await b.resign();
    await waitFor('no leader', async () => (await coord.getLeader(election)) === undefined || undefined);
  });

  it('a leader that steps aside is demoted, hands over, and campaigns again (it does not leave)', async () => {
    const coord = await open();
    const election = uniqueElection();
    const first = new RecordingHandlers();
    const second = new RecordingHandlers();
    const a = await coord.campaign(election, 'a:1', first);
    await waitFor('first elected', () => first.elected.length === 1);
    const b = await coord.campaign(election, 'b:1', second);
    a.stepAside('store locked');
    await waitFor('a demoted', () => first.demoted.length === 1);
    assert.deepEqual(first.demoted, ['store locked']);
    assert.equal(a.isLeader, false);
    await waitFor('b elected', () => second.elected.length === 1, { timeoutMs: 20_000 });
    assert.ok(second.elected[0]! > first.elected[0]!);
    // a is still a candidate: when b leaves, a leads again with a higher term.
    await b.resign();
    await waitFor('a elected again', () => first.elected.length === 2, { timeoutMs: 20_000 });
    assert.ok(first.elected[1]! > second.elected[0]!);
    await a.assertLeadership();
    // Alone in the election, a candidate that steps aside is elected again after its backoff.
    a.stepAside('again');
    await waitFor('a demoted again', () => first.demoted.length === 2);
    await waitFor('a elected a third time', () => first.elected.length === 3, { timeoutMs: 20_000 });
    assert.ok(first.elected[2]! > first.elected[1]!);
    await a.resign();
  });

  it('keeps placements until they are removed, per account and worker, also from another client', async () => {
    const coord = await open();
    const account = `acc-${uniqueElection()}`;
    const other = `acc-${uniqueElection()}`;
    await coord.recordPlacement({ accountId: account, workerId: 'w-1', endpoint: '10.0.0.1:1' });
    await coord.recordPlacement({ accountId: account, workerId: 'w-2', endpoint: '10.0.0.2:1' });
    await coord.recordPlacement({ accountId: other, workerId: 'w-1', endpoint: '10.0.0.1:1' });
    // Recording again refreshes (a worker that moved keeps one record).
    await coord.recordPlacement({ accountId: account, workerId: 'w-1', endpoint: '10.0.0.9:1' });
    const second = await open();
    const listed = await second.listPlacements(account);
    assert.deepEqual(
      listed.map((p) => [p.workerId, p.endpoint]),
      [
        ['w-1', '10.0.0.9:1'],
        ['w-2', '10.0.0.2:1'],
      ],
    );
    assert.ok(listed.every((p) => p.accountId === account && !Number.isNaN(Date.parse(p.since))));
    const all = await second.listPlacements();
    assert.ok(all.some((p) => p.accountId === other && p.workerId === 'w-1'));
    assert.equal(await second.removePlacements('w-1', account), 1);
    assert.deepEqual(
      (await coord.listPlacements(account)).map((p) => p.workerId),
      ['w-2'],
    );
    assert.equal(await coord.removePlacements('w-1'), 1);
    assert.deepEqual(await coord.listPlacements(other), []);
    assert.equal(await coord.removePlacements('w-2'), 1);
  });

  it('reads an account view at one revision; a handoff orders the views before and after it', async () => {
    const coord = await open();
    const account = `acc-${uniqueElection()}`;
    const endpoint = uniqueEndpoint();
    const lease = await coord.registerWorker({ endpoint, workerId: `w-${endpoint}`, freeBytes: 1, writable: true });
    await coord.recordPlacement({ accountId: account, workerId: 'w-giver', endpoint: '10.0.0.1:1' });
    const before = await coord.readAccountView(account);
    assert.deepEqual(before.handoffs, []);
    assert.ok(before.workers.some((w) => w.endpoint === endpoint));
    assert.deepEqual(
      before.placements.map((p) => p.workerId),
      ['w-giver'],
    );
    await coord.recordPlacement({ accountId: account, workerId: 'w-taker', endpoint: '10.0.0.2:1' });
    const handoff = { accountId: account, segmentId: 'seg-1', fromWorkerId: 'w-giver', toWorkerId: 'w-taker' };
    const revision = await coord.recordHandoff(handoff);
    assert.ok(revision > before.revision, 'a handoff is later than every view read before it');
    const second = await open();
    const after = await second.readAccountView(account);
    assert.ok(after.revision >= revision);
    assert.deepEqual(after.handoffs, [handoff]);
    assert.deepEqual(
      after.placements.map((p) => p.workerId),
      ['w-giver', 'w-taker'],
      'the view that sees the handoff sees the placement recorded before it',
    );
    assert.deepEqual(await second.listHandoffs(account), [handoff]);
    await coord.removeHandoff(account, 'seg-1');
    assert.deepEqual((await second.readAccountView(account)).handoffs, []);
    await coord.removePlacements('w-giver');
    await coord.removePlacements('w-taker');
    await lease.revoke();
  });

  it('keeps drain records, lost workers and rebalance requests for every client', async () => {
    const coord = await open();
    const worker = `w-${uniqueElection()}`;
    const first = await coord.requestDrain(worker);
    assert.equal(first.phase, 'requested');
    await coord.putDrain({ ...first, phase: 'moving', segmentsTotal: 4, segmentsMoved: 1, bytesTotal: 40, bytesMoved: 10 });
    const second = await open();
    const again = await second.requestDrain(worker);
    assert.equal(again.phase, 'moving', 'asking again keeps the progress of the drain under way');
    assert.equal(again.segmentsMoved, 1);
    assert.ok((await second.listDrains()).some((d) => d.workerId === worker));
    await second.removeDrain(worker);
    assert.equal(await coord.getDrain(worker), undefined);

    await coord.markLost(worker);
    assert.ok((await second.listLost()).includes(worker));

    const request = await coord.requestRebalance();
    assert.deepEqual(await second.getRebalance(), request);
    const progress = {
      requestId: request.requestId,
      workerId: worker,
      phase: 'done' as const,
      segmentsTotal: 2,
      segmentsMoved: 2,
      bytesTotal: 20,
      bytesMoved: 20,
      updatedAt: new Date().toISOString(),
    };
    await second.putRebalanceProgress(progress);
    assert.deepEqual(
      (await coord.listRebalanceProgress()).find((p) => p.workerId === worker),
      progress,
    );
    const newer = await second.requestRebalance();
    assert.notEqual(newer.requestId, request.requestId, 'a new request replaces the older one');
  });

  it('resigning a waiting candidate removes it from the campaign', async () => {
    const coord = await open();
    const election = uniqueElection();
    const first = new RecordingHandlers();
    const second = new RecordingHandlers();
    const third = new RecordingHandlers();
    const a = await coord.campaign(election, 'a:1', first);
    await waitFor('first elected', () => first.elected.length === 1);
    const b = await coord.campaign(election, 'b:1', second);
    await coord.campaign(election, 'c:1', third);
    await b.resign();
    await a.resign();
    await waitFor('third elected', () => third.elected.length === 1);
    assert.deepEqual(second.elected, []);
    assert.deepEqual(second.demoted, []);
    assert.equal((await coord.getLeader(election))?.value, 'c:1');
  });

  it('tells leader observers the current leader at once and every change', async () => {
    const coord = await open();
    const election = uniqueElection();
    const seen: (LeaderInfo | undefined)[] = [];
    const stop = coord.observeLeader(election, (leader) => seen.push(leader));
    try {
      await waitFor('initial callback', () => seen.length >= 1);
      assert.equal(seen[0], undefined);
      const first = new RecordingHandlers();
      const a = await coord.campaign(election, 'a:1', first);
      await waitFor('observer sees a', () => seen.at(-1)?.value === 'a:1');
      const second = new RecordingHandlers();
      await coord.campaign(election, 'b:1', second);
      await a.resign();
      await waitFor('observer sees b', () => seen.at(-1)?.value === 'b:1');
      const values = seen.filter((l) => l !== undefined);
      const terms = values.map((l) => l.term);
      assert.deepEqual([...new Set(values.map((l) => l.value))], ['a:1', 'b:1']);
      assert.ok(terms.at(-1)! > terms[0]!, 'the second leader has a higher term');
    } finally {
      stop();
    }
    // A late observer starts from the current state.
    const late: (LeaderInfo | undefined)[] = [];
    const stopLate = coord.observeLeader(election, (leader) => late.push(leader));
    await waitFor('late observer', () => late.length >= 1);
    stopLate();
    assert.equal(late[0]?.value, 'b:1');
  });

  it('registers, updates and revokes workers, and watchers see each step', async () => {
    const coord = await open();
    const endpoint = uniqueEndpoint();
    const lists: WorkerRegistration[][] = [];
    const stop = coord.watchWorkers((workers) => lists.push(workers));
    const mine = () => lists.at(-1)?.find((w) => w.endpoint === endpoint);
    try {
      await waitFor('initial worker list', () => lists.length >= 1);
      assert.equal(mine(), undefined);
      const lease = await coord.registerWorker({ endpoint, freeBytes: 1000, writable: true });
      await waitFor('watcher sees registration', () => mine()?.freeBytes === 1000);
      const listed = (await coord.listWorkers()).find((w) => w.endpoint === endpoint);
      assert.equal(listed?.writable, true);
      assert.ok(!Number.isNaN(Date.parse(listed!.updatedAt)), 'updatedAt is an ISO time');
      await lease.update({ freeBytes: 5, writable: false });
      await waitFor('watcher sees update', () => mine()?.writable === false);
      assert.equal(mine()?.freeBytes, 5);
      await lease.revoke();
      await waitFor('watcher sees removal', () => lists.length > 0 && mine() === undefined);
      assert.equal(
        (await coord.listWorkers()).find((w) => w.endpoint === endpoint),
        undefined,
      );
    } finally {
      stop();
    }
  });

  it('a revoked older registration does not remove a newer one of the same endpoint', async () => {
    const coord = await open();
    const endpoint = uniqueEndpoint();
    const old = await coord.registerWorker({ endpoint, freeBytes: 1, writable: true });
    await coord.registerWorker({ endpoint, freeBytes: 2, writable: true });
    await old.revoke();
    const listed = (await coord.listWorkers()).filter((w) => w.endpoint === endpoint);
    assert.equal(listed.length, 1);
    assert.equal(listed[0]?.freeBytes, 2);
  });

  it('raises the directory revision with every bump, for every client, and never lowers it', async () => {
    const coord = await open();
    const other = await open();
    const start = await other.readDirectoryRevision();
    await coord.bumpDirectoryRevision();
    const first = await other.readDirectoryRevision();
    assert.ok(first > start, 'a bump is seen by the next read of another client');
    assert.equal(await coord.readDirectoryRevision(), first, 'no change, the same revision');
    await coord.bumpDirectoryRevision();
    await other.bumpDirectoryRevision();
    assert.ok((await coord.readDirectoryRevision()) > first);
  });

  it('keeps key rankings for their TTL, one record per set of workers, readable by every client at a revision', async () => {
    const coord = await open();
    const a = { endpoint: uniqueEndpoint(), workerId: 'wa' };
    const b = { endpoint: uniqueEndpoint(), workerId: 'wb' };
    const both = { id: keyRankingId([a, b]), workers: sortMembers([b, a]) };
    assert.equal(keyRankingId([b, a]), both.id, 'the id does not depend on the order');
    assert.notEqual(keyRankingId([a]), both.id);
    const before = await coord.listKeyRankings();
    await coord.recordKeyRanking(both, 3600);
    await coord.recordKeyRanking(both, 3600);
    await coord.recordKeyRanking({ id: keyRankingId([a]), workers: [a] }, 2);
    const other = await open();
    const after = await other.listKeyRankings();
    assert.ok(after.revision > before.revision, 'a record moves the revision');
    const mine = (h: KeyRankingHistory) => h.rankings.filter((r) => r.id === both.id || r.id === keyRankingId([a]));
    assert.deepEqual(
      mine(after)
        .map((r) => r.workers.length)
        .sort(),
      [1, 2],
    );
    assert.deepEqual(mine(after).find((r) => r.id === both.id)?.workers, sortMembers([a, b]));
    // The short-lived one lapses by itself; the other stays.
    await waitFor('the 2 s record lapsed', async () => mine(await other.listKeyRankings()).length === 1, {
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    assert.equal(mine(await coord.listKeyRankings())[0]?.id, both.id);
  });
}
