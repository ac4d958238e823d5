import assert from 'node:assert/strict';
import { waitFor } from '@strata/common/testing';
import { ACCOUNT, type ClusterProcess, call, signIn, TestCluster } from './cluster-harness.js';

const INFLOW = `/inflow/${ACCOUNT}`;
const KUSTO = `/search/${ACCOUNT}/kusto`;
const SCHEMA = 'failover.entries';

/**
 * An unkeyed inflow batch is encoded once by the gateway and the same bytes are offered to each
 * writable worker in turn (gateway/src/inflow/outgoing-append.ts, worker-router.ts): a worker
 * killed (kill -9) while still registered refuses as unreachable, and the next one stores the very
 * rows that were sent, whole.
 */
describe('cluster: an unkeyed batch goes to the next worker when one cannot be reached', function () {
  this.timeout(180_000);
  let cluster: TestCluster;
  let gateway: ClusterProcess;

  before(async () => {
    cluster = await TestCluster.start();
    gateway = await cluster.add('gateway', { database: true, gateway: true });
  });

  after(async function () {
    if (this.currentTest?.state === 'failed' || this.test?.parent?.tests.some((t) => t.state === 'failed'))
      console.log(cluster.dump());
    await cluster?.stop();
  });

  it('stores every batch once, as sent, on the worker that answers', async () => {
    // A long lease: the killed worker stays registered (and writable) for the whole test, so the
    // round-robin keeps offering it batches first.
    const config = { etcd: { leaseTtlSeconds: 60 } };
    const gone = await cluster.add('w1', { backend: true }, { config });
    await cluster.add('w2', { backend: true }, { config });
    const token = await signIn(gateway.baseUrl);
    await waitFor(
      'two workers registered',
      async () => (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length === 2,
    );
    await gone.kill('SIGKILL');

    const batches = 6;
    const perBatch = 250;
    let expectedSum = 0;
    for (let b = 0; b < batches; b++) {
      const entries = Array.from({ length: perBatch }, (_, i) => {
        const n = b * perBatch + i;
        expectedSum += n;
        return {
          schema: SCHEMA,
          timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, n)).toISOString(),
          data: { n, text: `entry ${n} ünïcødé "quoted"`, ok: n % 2 === 0 },
        };
      });
      const r = await call(gateway.baseUrl, token, 'PUT', INFLOW, entries);
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    assert.equal(
      (await cluster.raw.getAll().prefix(`${cluster.prefix}/workers/`).keys()).length,
      2,
      'the killed worker was still registered throughout',
    );
    assert.ok(
      gateway.tail.some((l) => l.includes('worker refused an inflow batch; trying the next one')),
      'some batches were offered to the killed worker first',
    );

    const r = await call(gateway.baseUrl, token, 'POST', KUSTO, {
      query: `${SCHEMA} | summarize c = count(), s = sum(n), evens = countif(ok), texts = countif(text == strcat('entry ', tostring(n), ' ünïcødé "quoted"'))`,
    });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const row = r.body.results[0];
    assert.deepEqual(
      { c: Number(row.c), s: Number(row.s), evens: Number(row.evens), texts: Number(row.texts) },
      { c: batches * perBatch, s: expectedSum, evens: (batches * perBatch) / 2, texts: batches * perBatch },
    );
  });
});
