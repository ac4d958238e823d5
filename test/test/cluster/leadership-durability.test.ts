import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync, readlinkSync } from 'node:fs';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, ADMIN, type ClusterProcess, call, signIn, TestCluster } from './cluster-harness.js';

const INCIDENTS = `/accounts/${ACCOUNT}/incidents`;

/** The files a process holds open that belong to the relational store (`strata.duckdb*`). */
function storeFiles(pid: number): string[] {
  const out: string[] = [];
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      if (target.includes('strata.duckdb')) out.push(target);
    } catch {
      // closed in between
    }
  }
  return out;
}

/** The term in a database readiness detail `leader (term N)`. */
function leaderTerm(detail: string | undefined): number | undefined {
  const m = /^leader \(term (\d+)\)$/.exec(detail ?? '');
  return m ? Number(m[1]) : undefined;
}

/**
 * The way the lost-writes bug was found (issue 13): a database leader demoted and re-elected in the
 * same process (its etcd lease revoked) while writes and reads keep going, several times, then
 * killed and restarted. Every incident acknowledged with 201 at any point must still be there, and
 * the process never holds the store file twice nor a deleted write-ahead log.
 */
describe('cluster: nothing acknowledged is lost across leadership changes', function () {
  this.timeout(240_000);
  let cluster: TestCluster;

  beforeEach(async () => {
    cluster = await TestCluster.start();
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(cluster.dump());
    await cluster.stop();
  });

  /** Creates incidents one after another until `stop()`; returns the ids acknowledged with 201. */
  function writer(baseUrl: string, token: string) {
    const acknowledged: string[] = [];
    let stopped = false;
    let failures = 0;
    let lastFailure = '';
    const done = (async () => {
      for (let i = 0; i < 10_000 && !stopped; i++) {
        const id = randomUUID();
        try {
          const res = await call(baseUrl, token, 'PUT', `${INCIDENTS}/${id}`, {
            title: `incident ${i} ${'x'.repeat(200)}`,
            ownerType: 'USER',
            ownerId: ADMIN.userId,
          });
          if (res.status === 201) acknowledged.push(id);
          else {
            failures++;
            lastFailure = `${res.status} ${JSON.stringify(res.body)}`;
          }
        } catch (err) {
          failures++;
          lastFailure = String(err);
        }
        // Memory churn in the master: list reads allocate and drop whole result sets.
        if (i % 3 === 0) await call(baseUrl, token, 'GET', `${INCIDENTS}?limit=1000`).catch(() => undefined);
      }
    })();
    return {
      acknowledged,
      failures: () => failures,
      lastFailure: () => lastFailure,
      async stop() {
        stopped = true;
        await done;
      },
    };
  }

  async function waitForLeader(proc: ClusterProcess, above: number): Promise<number> {
    return waitFor(
      `${proc.name} leading with a term above ${above}`,
      async () => {
        const term = leaderTerm(await proc.roleDetail('database'));
        return term !== undefined && term > above ? term : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 50 },
    );
  }

  async function assertAllPresent(baseUrl: string, token: string, ids: string[]): Promise<void> {
    const listed = new Set<string>();
    for (let offset = 0; offset < 100_000; offset += 1000) {
      const page = await call(baseUrl, token, 'GET', `${INCIDENTS}?limit=1000&offset=${offset}`);
      assert.equal(page.status, 200, JSON.stringify(page.body));
      for (const incident of page.body as { incidentId: string }[]) listed.add(incident.incidentId);
      if ((page.body as unknown[]).length < 1000) break;
    }
    const missing = ids.filter((id) => !listed.has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${ids.length} acknowledged incidents are missing`);
  }

  it('a leader demoted and re-elected in one process (lease revoked, 4 s pause) keeps every acknowledged write, also after kill -9 and restart', async () => {
    const node = await cluster.add('node', { database: true, gateway: true });
    let term = await waitForLeader(node, 0);
    const token = await signIn(node.baseUrl);
    const acknowledged: string[] = [];
    for (let cycle = 0; cycle < 5; cycle++) {
      const w = writer(node.baseUrl, token);
      await waitFor(
        'some writes acknowledged',
        () => w.acknowledged.length >= 10 || (w.failures() > 100 && assert.fail(w.lastFailure())),
        {
          timeoutMs: 30_000,
        },
      );
      let previous: number;
      if (cycle % 2 === 0) {
        // The documented way to force a failover: revoke the leader's lease.
        previous = await cluster.revokeLeaderLease();
      } else {
        // A 4 s pause (GC, an overloaded host): the lease expires while the process sleeps.
        previous = (await cluster.leaderKey())!.term;
        await node.kill('SIGSTOP');
        await new Promise((r) => setTimeout(r, 4_000));
        await node.kill('SIGCONT');
      }
      assert.ok(previous >= term);
      term = await waitForLeader(node, previous);
      await waitFor('writes acknowledged after the re-election', () => w.acknowledged.length >= 25, { timeoutMs: 30_000 });
      await w.stop();
      acknowledged.push(...w.acknowledged);
      // Exactly one instance of the store is open and its write-ahead log is the live file.
      const files = storeFiles(node.pid);
      assert.equal(files.filter((f) => f.endsWith('strata.duckdb')).length, 1, `open store files: ${files.join(', ')}`);
      assert.deepEqual(
        files.filter((f) => f.includes('(deleted)')),
        [],
        'a deleted store file is still open',
      );
    }
    await assertAllPresent(node.baseUrl, token, acknowledged);

    await node.kill('SIGKILL');
    await node.start();
    await waitForLeader(node, term);
    const again = await signIn(node.baseUrl);
    await assertAllPresent(node.baseUrl, again, acknowledged);
    console.log(
      `      ${acknowledged.length} incidents acknowledged over 5 demotions (3 revoked leases, 2 pauses); all present after kill -9 and restart`,
    );
  });

  it('a standby that cannot open the store (still held by a paused leader) campaigns again and takes over once it is free', async () => {
    // Two database instances on one shared data directory, like the chart's shared volume.
    const shared = `${cluster.root}/shared`;
    const a = await cluster.add('a', { database: true, gateway: true }, { dataDir: shared });
    await waitForLeader(a, 0);
    const b = await cluster.add('b', { database: true, gateway: true }, { dataDir: shared });
    await waitFor('b reports standby', async () => (await b.roleDetail('database')) === 'standby');
    const token = await signIn(a.baseUrl);
    const w = writer(a.baseUrl, token);
    await waitFor('writes acknowledged', () => w.acknowledged.length >= 20, { timeoutMs: 30_000 });
    await w.stop();

    // A pauses with the store open: its lease expires, B is elected but cannot open the locked file.
    await a.kill('SIGSTOP');
    await waitFor(
      'b failing to take over and campaigning again',
      async () => (await b.roleDetail('database'))?.startsWith('standby (campaigning again after a failed takeover'),
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    // A wakes up, notices it lost the election, closes the store; one of the two leads again.
    await a.kill('SIGCONT');
    const leaderOf = async () => {
      for (const p of [a, b]) if (leaderTerm(await p.roleDetail('database')) !== undefined) return p;
      return undefined;
    };
    await waitFor('a leader serving again', leaderOf, { timeoutMs: 30_000, intervalMs: 100 });
    // Whoever leads now, kill it: the other one must still be campaigning and take over.
    const first = (await leaderOf())!;
    const other = first === a ? b : a;
    const w2 = writer(first.baseUrl, await signIn(first.baseUrl));
    await waitFor('writes acknowledged by the new leader', () => w2.acknowledged.length >= 10, { timeoutMs: 30_000 });
    await w2.stop();
    await first.kill('SIGKILL');
    await waitForLeader(other, 0);
    const token2 = await signIn(other.baseUrl);
    await assertAllPresent(other.baseUrl, token2, [...w.acknowledged, ...w2.acknowledged]);
  });
});
