/**
 * Data lifecycle over HTTP on a whole node (docs/api.md, "Data lifecycle"): retention set per
 * account (setting) and per schema (override), changed live and honoured by queries at once, then
 * physically deleted; a schema dropped; usage figures checked against what was written; and who
 * may do what.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { startTestNode, type TestNode } from '@strata/deploy/testing';
import type { WorkerHandle } from '@strata/worker';

const ACCOUNT = '00000000-0000-0000-0000-00000000e1e1';
const PW = 'lifecycle-password-1';
const DAY = 86_400_000;

/** Polls `check` (bounded) until it returns true. */
async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('data lifecycle over HTTP: retention, schema drop, usage', function () {
  this.timeout(120_000);
  let node: TestNode;
  let admin: string;
  let querier: string;

  const entriesAgo = (schema: string, agesMs: number[]) =>
    agesMs.map((age, i) => ({ schema, timestamp: new Date(Date.now() - age).toISOString(), data: { n: i, age } }));
  const push = async (body: unknown[]) => {
    const res = await node.request('PUT', `/inflow/${ACCOUNT}`, { token: admin, body });
    assert.equal(res.status, 200, await res.text());
  };
  const count = async (schema: string): Promise<number> => {
    const res = await node.request('POST', `/search/${ACCOUNT}/kusto`, { token: querier, body: { query: `${schema} | count` } });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    return Number((JSON.parse(text) as { results: { Count: number }[] }).results[0]?.Count ?? 0);
  };
  const worker = () => node.process.roles.find((r) => r.name === 'backend') as WorkerHandle;

  before(async () => {
    node = await startTestNode({
      accounts: { [ACCOUNT]: 'life' },
      users: [
        {
          userId: '00000000-0000-0000-0000-0000000000e1',
          username: 'lifeadmin',
          password: PW,
          accounts: { life: ['Service.Account.Admin'] },
        },
        {
          userId: '00000000-0000-0000-0000-0000000000e2',
          username: 'lifequery',
          password: PW,
          accounts: { life: ['Service.Account.Query'] },
        },
      ],
    });
    admin = await node.signIn('lifeadmin', PW);
    querier = await node.signIn('lifequery', PW);
  });
  after(async () => node?.stop());

  it('applies an account retention and a schema override live: queries stop seeing old rows at once, then the files go', async () => {
    // Two segments: one wholly 10 days old, one from 3 days to a minute ago.
    await push([...entriesAgo('app.logs', [10 * DAY, 10 * DAY + 1]), ...entriesAgo('app.audit', [10 * DAY, 60_000])]);
    await worker().storage.sealAll();
    const oldFiles = (await worker().storage.listSegments(ACCOUNT))
      .filter((s) => s.schema === 'app.logs')
      .map((s) => worker().storage.segmentPath(s));
    assert.equal(oldFiles.length, 1);
    await push(entriesAgo('app.logs', [3 * DAY, 60_000]));
    await worker().storage.sealAll();
    await eventually('app.logs is queryable', async () => (await count('app.logs').catch(() => -1)) === 4);

    // The account keeps 7 days; audit overrides it with "forever".
    const set = await node.request('PUT', `/accounts/${ACCOUNT}/settings/Service.Storage.Retention`, {
      token: admin,
      body: { value: '7d' },
    });
    assert.equal(set.status, 200, await set.text());
    const override = await node.request('PUT', `/accounts/${ACCOUNT}/schemas/app.audit/retention`, {
      token: admin,
      body: { retention: 'forever' },
    });
    const overrideText = await override.text();
    assert.equal(override.status, 200, overrideText);
    assert.equal((JSON.parse(overrideText) as { retention: string }).retention, 'forever');
    await eventually('app.logs loses its 10-day-old rows', async () => (await count('app.logs')) === 2);
    assert.equal(await count('app.audit'), 2);

    // Shorter for one schema: 1 day.
    await node.request('PUT', `/accounts/${ACCOUNT}/schemas/app.logs/retention`, {
      token: admin,
      body: { retention: '1.00:00:00' },
    });
    await eventually('app.logs keeps only its last day', async () => (await count('app.logs')) === 1);
    // The wholly expired segment is deleted from disk by the retention pass (the other straddles
    // the cut: it stays until compaction or until it is wholly past it, hidden from queries).
    await eventually('the expired segment file is deleted', async () => oldFiles.every((f) => !existsSync(f)));
    const usage = (await (await node.request('GET', `/accounts/${ACCOUNT}/usage`, { token: querier })).json()) as {
      schemas: { schema: string; segments: number }[];
    };
    assert.equal(usage.schemas.find((s) => s.schema === 'app.logs')?.segments, 1);

    // Removing the override brings back the account's 7 days for what is still stored (no resurrection).
    const removed = await node.request('PUT', `/accounts/${ACCOUNT}/schemas/app.logs/retention`, {
      token: admin,
      body: { retention: null },
    });
    assert.deepEqual(((await removed.json()) as { retention: unknown }).retention, null);
    const read = await node.request('GET', `/accounts/${ACCOUNT}/schemas/app.logs/retention`, { token: querier });
    assert.equal(read.status, 200);
  });

  it('refuses bad retention values and callers without the permission', async () => {
    for (const retention of ['7 weeks', '0d', '-1d', '30s', 'soon']) {
      const res = await node.request('PUT', `/accounts/${ACCOUNT}/schemas/x/retention`, { token: admin, body: { retention } });
      assert.equal(res.status, 400, `${retention}: ${res.status}`);
      assert.match(((await res.json()) as { message: string }).message, /retention/i);
    }
    const bad = await node.request('PUT', `/accounts/${ACCOUNT}/settings/Service.Storage.Retention`, {
      token: admin,
      body: { value: 'tomorrow' },
    });
    assert.equal(bad.status, 400);
    const forbidden = await node.request('PUT', `/accounts/${ACCOUNT}/schemas/x/retention`, {
      token: querier,
      body: { retention: '1d' },
    });
    assert.equal(forbidden.status, 403);
    const drop = await node.request('DELETE', `/accounts/${ACCOUNT}/schemas/app.audit`, { token: querier });
    assert.equal(drop.status, 403);
  });

  it('reports usage per schema matching what was written', async () => {
    await push(entriesAgo('usage.check', [3_000, 2_000, 1_000]));
    await worker().storage.sealAll();
    await push(entriesAgo('usage.check', [500]));
    const res = await node.request('GET', `/accounts/${ACCOUNT}/usage`, { token: querier });
    assert.equal(res.status, 200);
    const body = (await res.json()) as {
      complete: boolean;
      schemas: {
        schema: string;
        rows: number;
        hotRows: number;
        segments: number;
        bytes: number;
        oldest: string;
        newest: string;
      }[];
      workers: { worker: string; schemas: { schema: string }[] }[];
    };
    assert.equal(body.complete, true);
    const u = body.schemas.find((s) => s.schema === 'usage.check')!;
    assert.equal(u.rows, 4);
    assert.equal(u.hotRows, 1);
    assert.equal(u.segments, 1);
    const seg = (await worker().storage.listSegments(ACCOUNT)).find((s) => s.schema === 'usage.check')!;
    assert.equal(u.bytes, seg.byteSize);
    assert.ok(Date.parse(u.oldest) < Date.parse(u.newest));
    assert.equal(body.workers.length, 1);
    // The same figures through the schema listing and the built-in query table.
    const listing = (await (await node.request('GET', `/search/${ACCOUNT}/schemas?usage=true`, { token: querier })).json()) as {
      name: string;
      usage: { rows: number; bytes: number };
    }[];
    const listed = listing.find((t) => t.name === 'usage.check')!.usage;
    assert.deepEqual({ rows: listed.rows, bytes: listed.bytes }, { rows: 4, bytes: seg.byteSize });
    const table = await node.request('POST', `/search/${ACCOUNT}/kusto`, {
      token: querier,
      body: { query: "schema.usage | where TableName == 'usage.check' | project Rows, HotRows, Segments, Bytes, Oldest" },
    });
    const tableText = await table.text();
    assert.equal(table.status, 200, tableText);
    const [row] = (
      JSON.parse(tableText) as { results: { Rows: number; HotRows: number; Segments: number; Bytes: number; Oldest: string }[] }
    ).results;
    assert.deepEqual(
      { rows: row!.Rows, hot: row!.HotRows, segments: row!.Segments, bytes: row!.Bytes },
      { rows: 4, hot: 1, segments: 1, bytes: seg.byteSize },
    );
    assert.equal(Date.parse(row!.Oldest), Date.parse(u.oldest));
  });

  it('drops a schema everywhere; writing it again starts afresh', async () => {
    await push(entriesAgo('drop.me', [5_000, 4_000]));
    await worker().storage.sealAll();
    await push(entriesAgo('drop.me', [1_000]));
    await eventually('drop.me is queryable', async () => (await count('drop.me').catch(() => -1)) === 3);
    const res = await node.request('DELETE', `/accounts/${ACCOUNT}/schemas/drop.me`, { token: admin });
    const body = (await res.json()) as { rowsDeleted: number; pendingWorkers: string[] };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(
      { rowsDeleted: body.rowsDeleted, pendingWorkers: body.pendingWorkers },
      { rowsDeleted: 3, pendingWorkers: [] },
    );
    assert.equal(
      worker()
        .storage.listSchemas(ACCOUNT)
        .some((s) => s.schema === 'drop.me'),
      false,
    );
    // The policy poll must not apply the same drop again to new rows.
    await push(entriesAgo('drop.me', [100]));
    await worker().storagePolicy.pollNow();
    assert.equal(
      worker()
        .storage.listSchemas(ACCOUNT)
        .some((s) => s.schema === 'drop.me'),
      true,
    );
    // (A gateway's cached catalog may lack the re-created schema for a moment: a 400 is retried.)
    await eventually('the new row is queryable', async () => (await count('drop.me').catch(() => -1)) === 1);
  });

  it('purges the entries matching a KQL predicate on every segment and hot row, and reports progress and outcome', async () => {
    const rows = Array.from({ length: 12 }, (_, i) => ({
      schema: 'purge.me',
      timestamp: new Date(Date.now() - (20 - i) * 60_000).toISOString(),
      data: { n: i, user: i % 3 === 0 ? 'alice' : 'bob' },
    }));
    await push(rows.slice(0, 4));
    await worker().storage.sealAll();
    await push(rows.slice(4, 8));
    await worker().storage.sealAll();
    await push(rows.slice(8));
    await eventually('purge.me is queryable', async () => (await count('purge.me').catch(() => -1)) === 12);

    const refused = await node.request('POST', `/accounts/${ACCOUNT}/purge`, {
      token: admin,
      body: { schema: 'purge.me', predicate: 'user == "alice" | take 1' },
    });
    assert.equal(refused.status, 400);
    const noSuch = await node.request('POST', `/accounts/${ACCOUNT}/purge`, {
      token: admin,
      body: { schema: 'nope', predicate: 'true' },
    });
    assert.equal(noSuch.status, 404);
    const forbidden = await node.request('POST', `/accounts/${ACCOUNT}/purge`, {
      token: querier,
      body: { schema: 'purge.me', predicate: 'user == "alice"' },
    });
    assert.equal(forbidden.status, 403);

    const started = await node.request('POST', `/accounts/${ACCOUNT}/purge`, {
      token: admin,
      body: { schema: 'purge.me', predicate: 'user == "alice"' },
    });
    const startedText = await started.text();
    assert.equal(started.status, 202, startedText);
    const job = JSON.parse(startedText) as { jobId: string; state: string; requestedBy: string };
    assert.equal(job.requestedBy, '00000000-0000-0000-0000-0000000000e1');
    let status: { state: string; rowsRemoved: number; segmentsDone: number; segmentsTotal: number } | undefined;
    await eventually('the purge job finishes', async () => {
      const res = await node.request('GET', `/accounts/${ACCOUNT}/purge/${job.jobId}`, { token: admin });
      status = (await res.json()) as typeof status;
      return status!.state !== 'running';
    });
    assert.deepEqual(
      { state: status!.state, removed: status!.rowsRemoved, done: status!.segmentsDone, total: status!.segmentsTotal },
      { state: 'succeeded', removed: 4, done: 2, total: 2 },
    );
    assert.equal(await count('purge.me'), 8);
    const alice = await node.request('POST', `/search/${ACCOUNT}/kusto`, {
      token: querier,
      body: { query: "['purge.me'] | where user == 'alice' | count" },
    });
    assert.deepEqual(((await alice.json()) as { results: unknown[] }).results, [{ Count: 0 }]);
    const list = (await (await node.request('GET', `/accounts/${ACCOUNT}/purge`, { token: admin })).json()) as {
      jobId: string;
    }[];
    assert.equal(list[0]?.jobId, job.jobId);
  });
});
