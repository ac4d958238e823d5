/**
 * A top-N on one worker runs as one whole-query statement per scan part (decision 0035): the same
 * rows as the merge path (the fragment through the gateway's merge database), as two workers, and
 * as the rows sorted here in TypeScript. Random rows with nulls and many ties at the cut, held as
 * hot rows, sealed segments and a compacted segment on the one worker, with time bounds that cut
 * segments. Ties make which rows a top-N returns open, so rows are compared exactly when the keys
 * are unique (a sequence number is the last key) and by their key values otherwise.
 */
import assert from 'node:assert/strict';
import { ChannelPool, type Coordinator, createLogger } from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import {
  distributedRunner,
  executePlan,
  type FragmentRunner,
  MergeDatabase,
  planQuery,
  type QueryResult,
  SchemaCatalogSource,
  warmQueryEngine,
} from '@strata/gateway';
import type { ExecuteFragmentRequest } from '@strata/proto/query/v1/query';
import type { AppendPart } from '@strata/worker';
import { coordinatorOf as coordinatorFor, type QueryWorker, startSealedWorker, stopWorker } from './query-workers.js';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c7';
const SCHEMA = 'app.ranked';
const _log = createLogger('test', { level: 'silent' });
const BASE = Date.UTC(2024, 4, 1);
const NOW = new Date(BASE + 10 * 86_400_000);

interface Row {
  ts: number;
  seq: number;
  host: string;
  latencyMs: number | null;
  ratio: number | null;
}

/** Deterministic random numbers (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const rnd = random(35);
// Latencies from a small range: many rows share the value at every cut. Times out of order.
const ROWS: Row[] = Array.from({ length: 2400 }, (_, seq) => ({
  ts: BASE + Math.floor(rnd() * 8 * 86_400_000),
  seq,
  host: ['web-1', 'web-2', 'db-1', 'db-2', ''][Math.floor(rnd() * 5)] as string,
  latencyMs: rnd() < 0.1 ? null : Math.floor(rnd() * 40),
  ratio: rnd() < 0.15 ? null : Math.round(rnd() * 1000) / 8,
}));

function appendPart(rows: Row[]): AppendPart {
  const lines = rows.map((r) =>
    JSON.stringify({
      '@ts': r.ts * 1000,
      seq: r.seq,
      host: r.host,
      ...(r.latencyMs !== null ? { latencyMs: r.latencyMs } : {}),
      ...(r.ratio !== null ? { ratio: r.ratio } : {}),
    }),
  );
  return {
    schema: SCHEMA,
    columns: [
      { name: 'seq', type: 'Int64' },
      { name: 'host', type: 'String' },
      { name: 'latencyMs', type: 'Int64' },
      { name: 'ratio', type: 'Float64' },
    ],
    rows: Buffer.from(lines.join('\n')),
    rowCount: rows.length,
  };
}

type TestWorker = QueryWorker;

/** A worker with `sealed` batches each sealed into a segment, then `hot` rows left unsealed. */
function startWorker(sealed: Row[][], hot: Row[], requests: ExecuteFragmentRequest[]): Promise<TestWorker> {
  return startSealedWorker('strata-topn-', ACCOUNT, appendPart, sealed, hot, (req) => requests.push(req));
}

const coordinatorOf = (workers: TestWorker[]): Promise<Coordinator> => coordinatorFor(ACCOUNT, workers);

type Key = { field: 'latencyMs' | 'ratio' | 'host' | 'seq'; desc: boolean; nullsFirst: boolean };

/** Kusto's order of one key: nulls where asked, strings by code unit (all ASCII here). */
function compareBy(keys: Key[]) {
  return (a: Row, b: Row): number => {
    for (const k of keys) {
      const x = a[k.field];
      const y = b[k.field];
      if (x === y) continue;
      if (x === null) return k.nullsFirst ? -1 : 1;
      if (y === null) return k.nullsFirst ? 1 : -1;
      const c = x < y ? -1 : 1;
      return k.desc ? -c : c;
    }
    return 0;
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

describe('top-N on one worker: one statement per scan part (decision 0035)', function () {
  this.timeout(120_000);
  const channels = new ChannelPool(testIdentity(['gateway']));
  const merge = new MergeDatabase();
  const requests: ExecuteFragmentRequest[] = [];
  let one: TestWorker[] = [];
  let two: TestWorker[] = [];

  before(async () => {
    await warmQueryEngine();
    // Sealed in time order like a live worker's seals (segments with distinct time ranges), the
    // last rows left hot, some of them older than sealed ones.
    const byTime = [...ROWS].sort((a, b) => a.ts - b.ts);
    const hot = byTime.filter((_, i) => i % 7 === 0);
    const rest = byTime.filter((_, i) => i % 7 !== 0);
    const q = Math.ceil(rest.length / 4);
    one = [
      await startWorker(
        [0, 1, 2, 3].map((i) => rest.slice(i * q, (i + 1) * q)),
        hot,
        requests,
      ),
    ];
    // Two of its four segments merged into one (a compacted segment beside sealed ones).
    const listed = await one[0]!.storage.listSegments(ACCOUNT);
    assert.equal(listed.length, 4);
    await one[0]!.storage.compact({
      accountId: ACCOUNT,
      schema: SCHEMA,
      segmentIds: [listed[1]!.segmentId, listed[2]!.segmentId],
    });
    assert.equal((await one[0]!.storage.listSegments(ACCOUNT)).length, 3);
    two = [
      await startWorker([ROWS.filter((r) => r.seq % 2 === 0)], [], requests),
      await startWorker(
        [],
        ROWS.filter((r) => r.seq % 2 === 1),
        requests,
      ),
    ];
  });

  after(async () => {
    channels.close();
    await merge.close();
    for (const w of [...one, ...two]) await stopWorker(w);
  });

  async function run(workers: TestWorker[], text: string, mergePath = false): Promise<QueryResult> {
    const coordinator = await coordinatorOf(workers);
    const catalog = await new SchemaCatalogSource(coordinator, channels).get(ACCOUNT);
    // As the query service plans: time conjuncts left to the scans.
    const plan = planQuery(text, catalog, { now: NOW, storageTime: true });
    const runner = distributedRunner({ coordinator, channels, accountId: ACCOUNT, timeoutMs: 30_000 });
    // Without `single`, the fragment goes through the merge database as before this change.
    const chosen: FragmentRunner = mergePath ? (fragment, signal) => runner(fragment, signal) : runner;
    return executePlan(plan, chosen, { mergeDatabase: merge });
  }

  const K = (field: Key['field'], desc: boolean, nullsFirst: boolean): Key => ({ field, desc, nullsFirst });
  const cases: { where?: (r: Row) => boolean; whereKql?: string; keys: Key[]; n: number }[] = [];
  const at = [...ROWS].sort((a, b) => a.ts - b.ts)[1000]!.ts;
  for (const n of [1, 7, 40, 3000])
    cases.push(
      { keys: [K('latencyMs', true, false)], n },
      { keys: [K('latencyMs', false, true), K('seq', true, false)], n },
      { keys: [K('ratio', true, true), K('host', false, false)], n },
      { keys: [K('host', true, false), K('latencyMs', false, false), K('seq', false, false)], n },
      { where: (r) => r.ts > at, whereKql: `timestamp > datetime(${iso(at)})`, keys: [K('latencyMs', true, false)], n },
      {
        where: (r) => r.ts <= at && r.host !== '',
        whereKql: `timestamp <= datetime(${iso(at)}) and host != ""`,
        keys: [K('ratio', false, false), K('seq', false, false)],
        n,
      },
    );

  it('answers as the merge path, as two workers and as the rows sorted here, with nulls and ties at the cut', async () => {
    let exact = 0;
    for (const c of cases) {
      const order = c.keys.map((k) => `${k.field} ${k.desc ? 'desc' : 'asc'} nulls ${k.nullsFirst ? 'first' : 'last'}`);
      const text = `${SCHEMA} ${c.whereKql ? `| where ${c.whereKql} ` : ''}| sort by ${order.join(', ')} | take ${c.n}`;
      const expected = ROWS.filter(c.where ?? (() => true))
        .sort(compareBy(c.keys))
        .slice(0, c.n);
      requests.length = 0;
      const single = await run(one, text);
      // One request, the whole query, marked per scan part, with the keys after the result columns.
      assert.equal(requests.length, 1, text);
      assert.equal(requests[0]?.branchTopN?.limit, c.n, text);
      assert.deepEqual(
        requests[0]?.branchTopN?.keys.map((k) => k.column),
        c.keys.map((_, i) => single.columns.length + i),
        text,
      );
      const merged = await run(one, text, true);
      const spread = await run(two, text);
      assert.deepEqual(single.columns, merged.columns, text);
      const keyValues = (rows: Record<string, unknown>[]) => rows.map((r) => c.keys.map((k) => r[k.field] ?? null));
      const want = keyValues(expected as unknown as Record<string, unknown>[]);
      for (const [name, r] of [
        ['single', single],
        ['merged', merged],
        ['two workers', spread],
      ] as const) {
        assert.equal(r.results.length, expected.length, `${name}: ${text}`);
        assert.deepEqual(keyValues(r.results), want, `${name}: ${text}`);
      }
      if (c.keys.some((k) => k.field === 'seq')) {
        // Unique keys: exactly these rows.
        const rows = (r: QueryResult) => r.results.map((x) => [x.seq, x.host, x.latencyMs ?? null, x.ratio ?? null]);
        const wantRows = expected.map((x) => [x.seq, x.host, x.latencyMs, x.ratio]);
        assert.deepEqual(rows(single), wantRows, text);
        assert.deepEqual(rows(merged), wantRows, text);
        assert.deepEqual(rows(spread), wantRows, text);
        exact++;
      }
    }
    assert.equal(exact, 12);
  });

  it('a top key the result does not show, a top mapped row by row, and a top with a filter after it', async () => {
    const byLatency = compareBy([K('latencyMs', true, false), K('seq', true, false)]);
    const expected = [...ROWS].sort(byLatency).slice(0, 9);
    requests.length = 0;
    const r = await run(one, `${SCHEMA} | sort by latencyMs desc, seq desc | take 9 | project host`);
    // Mapped row by row after the top: still one whole statement, its two keys after `host`.
    assert.equal(requests.length, 1);
    assert.deepEqual(
      requests[0]?.branchTopN?.keys.map((k) => k.column),
      [1, 2],
    );
    assert.deepEqual(
      r.results.map((x) => x.host),
      expected.map((x) => x.host),
    );
    // Mapped, then cut again: the smaller limit; the same through the merge database.
    const mappedText = `${SCHEMA} | sort by latencyMs desc, seq desc | take 9 | extend twice = latencyMs * 2 | project seq, twice | take 4`;
    const mapped = await run(one, mappedText);
    assert.equal(requests.at(-1)?.branchTopN?.limit, 4);
    assert.deepEqual(
      mapped.results.map((x) => [x.seq, x.twice ?? null]),
      expected.slice(0, 4).map((x) => [x.seq, x.latencyMs === null ? null : x.latencyMs * 2]),
    );
    assert.deepEqual(mapped, await run(one, mappedText, true));
    // A filter after the top counts among the top rows only: the merge path, as before (which
    // plans take it: planner.test.ts).
    const filtered = await run(one, `${SCHEMA} | sort by latencyMs desc, seq desc | take 9 | where host == "web-1"`);
    assert.deepEqual(
      filtered.results.map((x) => x.seq),
      expected.filter((x) => x.host === 'web-1').map((x) => x.seq),
    );
    const whole = await run(one, `${SCHEMA} | sort by latencyMs desc, seq desc | take 9`);
    assert.deepEqual(
      whole.results.map((x) => x.seq),
      expected.map((x) => x.seq),
    );
    // Kusto's `top` (one key) is the same top-N.
    const top = await run(one, `${SCHEMA} | top 5 by ratio`);
    assert.deepEqual(
      top.results.map((x) => x.ratio ?? null),
      [...ROWS]
        .sort(compareBy([K('ratio', true, false)]))
        .slice(0, 5)
        .map((x) => x.ratio),
    );
    // The keys after the result columns are not part of the answer.
    assert.deepEqual(
      whole.columns.map((c) => c.name),
      [
        'timestamp',
        '__INFLOW_ID',
        '__INFLOW_TIMESTAMP',
        '__INFLOW_HOST',
        '__INFLOW_SOURCE_ADDRESS',
        '__INFLOW_AGENT',
        'seq',
        'host',
        'latencyMs',
        'ratio',
      ],
    );
  });
});
