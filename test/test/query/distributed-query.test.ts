/**
 * Distributed queries over real worker storage and real gRPC: rows spread over two workers (one
 * with sealed Parquet segments, one with a column the other never saw) give the same answers as
 * the same rows on one worker, and the answers computed here in TypeScript. Cancellation and the
 * executor limits reach the workers.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  ChannelPool,
  type Coordinator,
  createLogger,
  EmbeddedCoordinator,
  type ExecutorLimits,
  StrataError,
} from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import {
  distributedRunner,
  evaluateRule,
  executePlan,
  MergeDatabase,
  planQuery,
  QueryCoverage,
  type QueryResult,
  QueryService,
  SchemaCatalogSource,
  warmQueryEngine,
} from '@strata/gateway';
import type { AlertRuleDefinition } from '@strata/proto/alerting/v1/alert_rules';
import { type ExecuteFragmentRequest, QueryServiceService, ValueType, WireType } from '@strata/proto/query/v1/query';
import type { AppendPart } from '@strata/worker';
import {
  coordinatorOf as coordinatorFor,
  DEFAULT_LIMITS,
  openStorage,
  type QueryWorker,
  serveQueries,
  stopWorker,
} from './query-workers.js';

const ACCOUNT = '00000000-0000-0000-0000-0000000000c1';
const log = createLogger('test', { level: 'silent' });
const BASE = Date.UTC(2024, 4, 1);
const NOW = new Date(BASE + 2 * 86_400_000);

interface Row {
  ts: number;
  host: string;
  level: string;
  latencyMs: number;
  ratio: number;
  extra?: string;
}

const ROWS: Row[] = Array.from({ length: 3000 }, (_, i) => ({
  ts: BASE + i * 47_000,
  host: ['web-1', 'web-2', 'db-1'][i % 3] as string,
  level: ['Info', 'Error'][i % 5 === 0 ? 1 : 0] as string,
  latencyMs: (i * 37) % 1500,
  ratio: ((i * 13) % 100) / 7,
  ...(i % 2 === 1 && i > 2000 ? { extra: `x${i % 4}` } : {}),
}));

function appendPart(rows: Row[]): AppendPart {
  const withExtra = rows.some((r) => r.extra !== undefined);
  const lines = rows.map((r) =>
    JSON.stringify({
      '@ts': r.ts * 1000,
      '@id': randomUUID(),
      host: r.host,
      level: r.level,
      latencyMs: r.latencyMs,
      ratio: r.ratio,
      ...(r.extra !== undefined ? { extra: r.extra } : {}),
    }),
  );
  return {
    schema: 'app.logs',
    columns: [
      { name: 'host', type: 'String' },
      { name: 'level', type: 'String' },
      { name: 'latencyMs', type: 'Int64' },
      { name: 'ratio', type: 'Float64' },
      ...(withExtra ? [{ name: 'extra', type: 'String' as const }] : []),
    ],
    rows: Buffer.from(lines.join('\n')),
    rowCount: rows.length,
  };
}

type TestWorker = QueryWorker;

async function startWorker(
  rows: Row[][],
  seal = false,
  limits: ExecutorLimits = DEFAULT_LIMITS,
  onFragment?: (req: ExecuteFragmentRequest) => void,
): Promise<TestWorker> {
  const opened = await openStorage('strata-query-');
  for (const batch of rows) {
    if (batch.length === 0) continue;
    await opened.storage.append({
      accountId: ACCOUNT,
      parts: [appendPart(batch)],
      inflowTimestampUs: Date.now() * 1000,
      inflowHost: 'test',
      sourceAddress: '127.0.0.1',
      agent: null,
    });
    if (seal) await opened.storage.sealAll();
  }
  return serveQueries(opened, limits, onFragment);
}

const coordinatorOf = (workers: TestWorker[]): Promise<Coordinator> => coordinatorFor(ACCOUNT, workers);

/** Rows in comparable form; with `unorderedLists`, list values (make_set has no order) are sorted. */
const canonical = (r: QueryResult, unorderedLists = false) =>
  r.results
    .map((x) =>
      JSON.stringify(x, (_k, v) => {
        if (typeof v === 'number' && !Number.isInteger(v)) return Number(v.toPrecision(12));
        if (unorderedLists && Array.isArray(v)) return [...v].map((e) => JSON.stringify(e)).sort();
        return v;
      }),
    )
    .sort();

describe('distributed queries over worker storage and gRPC', function () {
  this.timeout(120_000);
  const channels = new ChannelPool(testIdentity(['gateway']));
  const merge = new MergeDatabase();
  let two: TestWorker[] = [];
  let one: TestWorker[] = [];

  before(async () => {
    await warmQueryEngine();
    const first = ROWS.filter((_, i) => i % 2 === 0);
    const second = ROWS.filter((_, i) => i % 2 === 1);
    // Worker A: its rows in three appends, each sealed into a Parquet segment; worker B: hot rows only.
    two = [
      await startWorker([first.slice(0, 500), first.slice(500, 1000), first.slice(1000)], true),
      await startWorker([second]),
    ];
    one = [await startWorker([ROWS])];
  });

  after(async () => {
    channels.close();
    await merge.close();
    for (const w of [...two, ...one]) await stopWorker(w);
  });

  async function query(workers: TestWorker[], text: string, timeoutMs = 30_000): Promise<QueryResult> {
    const coordinator = await coordinatorOf(workers);
    const catalog = await new SchemaCatalogSource(coordinator, channels).get(ACCOUNT);
    const plan = planQuery(text, catalog, { now: NOW });
    return executePlan(plan, distributedRunner({ coordinator, channels, accountId: ACCOUNT, timeoutMs }), {
      mergeDatabase: merge,
      timeoutMs,
    });
  }

  async function both(text: string, unorderedLists = false): Promise<QueryResult> {
    const a = await query(two, text);
    const b = await query(one, text);
    assert.deepEqual(a.columns, b.columns, text);
    assert.deepEqual(canonical(a, unorderedLists), canonical(b, unorderedLists), text);
    return a;
  }

  it('lists the union of the workers’ schemas, with a column only one worker has', async () => {
    const catalog = await new SchemaCatalogSource(await coordinatorOf(two), channels).get(ACCOUNT);
    const table = catalog.tables.find((t) => t.name === 'app.logs');
    assert.ok(table);
    assert.ok(table.columns.some((c) => c.name === 'extra' && c.type === 'string'));
    assert.ok(table.columns.some((c) => c.name === 'timestamp' && c.type === 'datetime'));
    assert.ok(table.columns.some((c) => c.name === '__INFLOW_ID' && c.type === 'guid'));
  });

  it('counts, filters and aggregates like one worker and like the rows say', async () => {
    const r = await both(
      'app.logs | where level == "Error" | summarize n = count(), s = sum(latencyMs), a = avg(ratio), p = percentile(latencyMs, 90) by host',
    );
    for (const host of ['web-1', 'web-2', 'db-1']) {
      const rows = ROWS.filter((x) => x.level === 'Error' && x.host === host);
      const row = r.results.find((x) => x.host === host) as Record<string, unknown>;
      assert.equal(row.n, rows.length);
      assert.equal(
        row.s,
        rows.reduce((s, x) => s + x.latencyMs, 0),
      );
      assert.ok(Math.abs((row.a as number) - rows.reduce((s, x) => s + x.ratio, 0) / rows.length) < 1e-9);
      const sorted = rows.map((x) => x.latencyMs).sort((a, b) => a - b);
      assert.equal(row.p, sorted[Math.ceil(0.9 * sorted.length) - 1]);
    }
  });

  it('toscalar, phases (pivot, partition), top-nested and mv-apply over real workers (issue 16, part 2)', async () => {
    const errors = ROWS.filter((x) => x.level === 'Error');
    const maxLatency = Math.max(...errors.map((x) => x.latencyMs));
    const top = await both(
      'app.logs | where latencyMs == toscalar(app.logs | where level == "Error" | summarize max(latencyMs)) | count',
    );
    assert.deepEqual(top.results, [{ Count: ROWS.filter((x) => x.latencyMs === maxLatency).length }]);
    const pivot = await both('app.logs | project host, level | evaluate pivot(level)');
    assert.deepEqual(pivot.header, ['host', 'Error', 'Info']);
    for (const row of pivot.results) {
      assert.equal(row.Error, errors.filter((x) => x.host === row.host).length);
    }
    const parts = await both('app.logs | partition by host (summarize n = count(), m = max(latencyMs))');
    assert.deepEqual(
      parts.results.map((x) => x.n).sort(),
      ['web-1', 'web-2', 'db-1'].map((h) => ROWS.filter((x) => x.host === h).length).sort(),
    );
    const nested = await both('app.logs | top-nested 1 of host by count(), top-nested 1 of level by count()');
    assert.equal(nested.results.length, 1);
    const applied = await both(
      'app.logs | where latencyMs < 20 | extend l = pack_array(latencyMs, latencyMs + 1) | mv-apply e = l to typeof(long) on (summarize s = sum(e)) | summarize total = sum(s)',
    );
    const low = ROWS.filter((x) => x.latencyMs < 20);
    assert.deepEqual(applied.results, [{ total: low.reduce((t, x) => t + 2 * x.latencyMs + 1, 0) }]);
  });

  it('time filters prune and answer correctly', async () => {
    const r = await both('app.logs | where timestamp between (datetime(2024-05-01 06:00) .. datetime(2024-05-01 12:00)) | count');
    const from = Date.UTC(2024, 4, 1, 6);
    const to = Date.UTC(2024, 4, 1, 12);
    assert.deepEqual(r.results, [{ Count: ROWS.filter((x) => x.ts >= from && x.ts <= to).length }]);
    const recent = await both('app.logs | where timestamp > ago(1d) | summarize count() by bin(timestamp, 1h) | count');
    const hours = new Set(ROWS.filter((x) => x.ts > NOW.getTime() - 86_400_000).map((x) => Math.floor(x.ts / 3_600_000)));
    assert.deepEqual(recent.results, [{ Count: hours.size }]);
  });

  it('top and sort | take take the global top rows', async () => {
    const r = await query(two, 'app.logs | sort by latencyMs desc, timestamp asc | take 5 | project latencyMs');
    const t = await query(two, 'app.logs | top 3 by latencyMs | project latencyMs');
    assert.deepEqual(
      t.results.map((x) => x.latencyMs),
      ROWS.map((x) => x.latencyMs)
        .sort((a, b) => b - a)
        .slice(0, 3),
    );
    const expected = [...ROWS]
      .sort((a, b) => b.latencyMs - a.latencyMs || a.ts - b.ts)
      .slice(0, 5)
      .map((x) => x.latencyMs);
    assert.deepEqual(
      r.results.map((x) => x.latencyMs),
      expected,
    );
  });

  it('time conjuncts applied by the workers’ scans and top-N per scan part answer as the rows say', async () => {
    // As the query service plans: time conjuncts leave the statements (exact scan bounds, segments
    // wholly inside read unfiltered) and top-N fragments run per scan part (decision 0018).
    const scanned = async (workers: TestWorker[], text: string) => {
      const coordinator = await coordinatorOf(workers);
      const catalog = await new SchemaCatalogSource(coordinator, channels).get(ACCOUNT);
      const plan = planQuery(text, catalog, { now: NOW, storageTime: true });
      return executePlan(plan, distributedRunner({ coordinator, channels, accountId: ACCOUNT, timeoutMs: 30_000 }), {
        mergeDatabase: merge,
      });
    };
    const iso = (ms: number) => new Date(ms).toISOString();
    const tests: [string, (ts: number, at: number) => boolean][] = [
      ['>', (ts, at) => ts > at],
      ['>=', (ts, at) => ts >= at],
      ['<', (ts, at) => ts < at],
      ['<=', (ts, at) => ts <= at],
      ['==', (ts, at) => ts === at],
    ];
    let checked = 0;
    // Row times at worker A's segment edges (its segments hold rows 0–998, 1000–1998, 2000–2998).
    for (const i of [0, 998, 1000, 1500, 2001, 2998, 2999])
      for (const [op, keep] of tests) {
        const at = (ROWS[i] as Row).ts;
        const expected = ROWS.filter((x) => keep(x.ts, at) && x.level === 'Error');
        for (const workers of [two, one]) {
          const r = await scanned(workers, `app.logs | where timestamp ${op} datetime(${iso(at)}) and level == "Error" | count`);
          assert.deepEqual(r.results, [{ Count: expected.length }], `${op} row ${i}`);
          const top = await scanned(
            workers,
            `app.logs | where timestamp ${op} datetime(${iso(at)}) | top 4 by latencyMs desc | project latencyMs`,
          );
          assert.deepEqual(
            top.results.map((x) => x.latencyMs),
            ROWS.filter((x) => keep(x.ts, at))
              .map((x) => x.latencyMs)
              .sort((a, b) => b - a)
              .slice(0, 4),
            `top 4 ${op} row ${i}`,
          );
          checked++;
        }
      }
    assert.equal(checked, 70);
  });

  it('the query service leaves time conjuncts to the scans only when every worker asked applies them', async () => {
    const requests: ExecuteFragmentRequest[] = [];
    const w = await startWorker([ROWS], true, undefined, (req) => requests.push(req));
    try {
      const text = `app.logs | where timestamp > datetime(${new Date((ROWS[1500] as Row).ts).toISOString()}) | count`;
      const expected = [{ Count: ROWS.length - 1501 }];
      for (const scanTimeBounds of [true, false]) {
        const coordinator = new EmbeddedCoordinator(log);
        await coordinator.registerWorker({
          endpoint: w.endpoint,
          workerId: w.endpoint,
          freeBytes: 1e12,
          writable: true,
          scanTimeBounds,
        });
        await coordinator.recordPlacement({ accountId: ACCOUNT, workerId: w.endpoint, endpoint: w.endpoint });
        const catalogs = new SchemaCatalogSource(coordinator, channels);
        const service = new QueryService(coordinator, channels, catalogs);
        try {
          requests.length = 0;
          const coverage = await QueryCoverage.resolve(coordinator, ACCOUNT, false);
          const r = await service.run(text, (fresh) => catalogs.get(ACCOUNT, { fresh }), {
            accountId: ACCOUNT,
            timeoutMs: 30_000,
            coverage,
          });
          assert.deepEqual(
            r.columns.map((c) => c.name),
            ['Count'],
          );
          assert.equal(r.rowCount, 1);
          assert.deepEqual([{ Count: Number(r.values[0]?.[0]) }], expected);
          const [req] = requests;
          assert.equal(requests.length, 1);
          if (scanTimeBounds) {
            assert.equal(req?.fromUs, (ROWS[1500] as Row).ts * 1000 + 1, 'the exact bound travels');
            assert.doesNotMatch(req?.sql ?? '', /TIMESTAMP|timestamp/, 'and the statement has no time condition');
          } else {
            assert.equal(req?.fromUs, undefined, 'a worker that does not say it applies bounds gets full statements');
            assert.match(req?.sql ?? '', /"timestamp"/);
          }
        } finally {
          await service.close();
          await coordinator.close();
        }
      }
    } finally {
      await stopWorker(w);
    }
  });

  it('an alert evaluation takes the HTTP path: one coordinator read, time conjuncts left to the scans', async () => {
    const requests: ExecuteFragmentRequest[] = [];
    const w = await startWorker([ROWS], true, undefined, (req) => requests.push(req));
    try {
      const cut = (ROWS[1500] as Row).ts;
      const def: AlertRuleDefinition = {
        name: 'many rows',
        query: `app.logs | where timestamp > datetime(${new Date(cut).toISOString()}) | count`,
        intervalSeconds: 60,
        lookbackSeconds: 3 * 86_400,
        condition: { kind: 'threshold', column: 'Count', operator: '>', threshold: 1000 },
        dimensions: [],
        severity: 'High',
        ownerType: '',
        ownerId: '',
        assigneeUserId: '',
        title: '',
        description: '',
        enabled: true,
        mutedUntil: '',
        resolveAfter: 0,
        timeoutSeconds: 30,
      };
      for (const scanTimeBounds of [true, false]) {
        const coordinator = new EmbeddedCoordinator(log);
        await coordinator.registerWorker({
          endpoint: w.endpoint,
          workerId: w.endpoint,
          freeBytes: 1e12,
          writable: true,
          scanTimeBounds,
        });
        await coordinator.recordPlacement({ accountId: ACCOUNT, workerId: w.endpoint, endpoint: w.endpoint });
        let views = 0;
        const read = coordinator.readAccountView.bind(coordinator);
        coordinator.readAccountView = (accountId: string) => {
          views++;
          return read(accountId);
        };
        const service = new QueryService(coordinator, channels, new SchemaCatalogSource(coordinator, channels));
        try {
          requests.length = 0;
          const result = await evaluateRule(service, ACCOUNT, def, NOW);
          assert.equal(result.rows, 1);
          assert.equal(result.firing.length, 1, `${ROWS.length - 1501} rows fire the threshold`);
          assert.equal(views, 1, 'the workers are resolved once, for the catalog and the run');
          assert.equal(requests.length, 1);
          const [req] = requests;
          if (scanTimeBounds) {
            assert.equal(req?.fromUs, cut * 1000 + 1, 'the exact bound travels');
            assert.doesNotMatch(req?.sql ?? '', new RegExp(String(cut * 1000 + 1)), 'and the condition left the statement');
          } else {
            assert.equal(req?.fromUs, undefined, 'a worker that does not say it applies bounds gets full statements');
          }
          // The same rule with the threshold just above the count does not fire: the count is exact.
          const above = await evaluateRule(
            service,
            ACCOUNT,
            { ...def, condition: { ...def.condition!, threshold: ROWS.length - 1501 } },
            NOW,
          );
          assert.equal(above.firing.length, 0);
          const at = await evaluateRule(
            service,
            ACCOUNT,
            { ...def, condition: { ...def.condition!, operator: '==', threshold: ROWS.length - 1501 } },
            NOW,
          );
          assert.equal(at.firing.length, 1);
          // The window's edges are exact whether the scan or the statement applies them: a row at
          // the window's start counts, a row at its end (the evaluation time) does not.
          requests.length = 0;
          const edge = new Date((ROWS[2000] as Row).ts);
          const windowed = await evaluateRule(
            service,
            ACCOUNT,
            {
              ...def,
              query: 'app.logs | count',
              lookbackSeconds: 47 * 500,
              condition: { ...def.condition!, operator: '==', threshold: 500 },
            },
            edge,
          );
          assert.equal(windowed.firing.length, 1, 'rows 1500..1999: 500');
          if (scanTimeBounds) {
            assert.equal(requests[0]?.fromUs, (ROWS[1500] as Row).ts * 1000, 'the window travels as exact bounds');
            assert.equal(requests[0]?.toUs, edge.getTime() * 1000 - 1);
            assert.doesNotMatch(requests[0]?.sql ?? '', /"timestamp"/, 'and leaves the statement');
          } else {
            assert.match(requests[0]?.sql ?? '', /"timestamp"/);
          }
        } finally {
          await service.close();
          await coordinator.close();
        }
      }
    } finally {
      await stopWorker(w);
    }
  });

  it('a query started on the last view answers as the current view does: new holders, lost holders, handed-off segments', async () => {
    // Decision 0027: each query reads the current view while it already runs on the last one, and
    // answers from that run only when both ask the same workers the same way.
    const fragments = new Map<string, number>();
    const seen = (name: string) => () => fragments.set(name, (fragments.get(name) ?? 0) + 1);
    const a = await startWorker([ROWS.slice(0, 750), ROWS.slice(750, 1500)], true, undefined, seen('a'));
    const b = await startWorker([ROWS.slice(1500)], true, undefined, seen('b'));
    const coordinator = new EmbeddedCoordinator(log);
    const service = new QueryService(coordinator, channels, new SchemaCatalogSource(coordinator, channels));
    const register = (w: TestWorker) =>
      coordinator.registerWorker({
        endpoint: w.endpoint,
        workerId: w.endpoint,
        freeBytes: 1e12,
        writable: true,
        scanTimeBounds: true,
      });
    const count = async (allowPartial = false) => {
      fragments.clear();
      const { result, coverage } = await service.runCovered(
        'app.logs | count',
        (c, fresh) => service.catalog(ACCOUNT, { fresh, coverage: c }),
        {
          accountId: ACCOUNT,
          allowPartial,
          timeoutMs: 30_000,
        },
      );
      return {
        count: Number(result.values[0]?.[0]),
        missing: coverage.missing.map((m) => m.workerId),
        a: fragments.get('a') ?? 0,
      };
    };
    try {
      await register(a);
      await coordinator.recordPlacement({ accountId: ACCOUNT, workerId: a.endpoint, endpoint: a.endpoint });
      assert.deepEqual(await count(), { count: 1500, missing: [], a: 1 }, 'first query: no last view, one run');
      assert.deepEqual(await count(), { count: 1500, missing: [], a: 1 }, 'same view: the early run answers');

      // A new holder registers and records its placement: the last view does not know it.
      const leaseB = await register(b);
      await coordinator.recordPlacement({ accountId: ACCOUNT, workerId: b.endpoint, endpoint: b.endpoint });
      assert.deepEqual(
        await count(),
        { count: 3000, missing: [], a: 2 },
        'the early run (1,500 rows) was discarded and run again',
      );
      assert.deepEqual(await count(), { count: 3000, missing: [], a: 1 });

      // The holder is lost (its registration gone; its process still answers the early run).
      await leaseB.revoke();
      await assert.rejects(
        count(),
        (err: StrataError) => err.kind === 'unavailable' && err.message.includes(b.endpoint),
        'the current view misses a holder: 503, not the early run’s complete-looking answer',
      );
      assert.deepEqual(await count(true), { count: 1500, missing: [b.endpoint], a: 1 }, 'a partial answer names it');

      // A segment of A is handed to B: the current view reads it only at B (which does not hold it
      // in this test, so the count shows whose view answered).
      await register(b);
      assert.equal((await count()).count, 3000);
      const [segment] = await a.storage.listSegments(ACCOUNT);
      assert.ok(segment);
      await coordinator.recordHandoff({
        accountId: ACCOUNT,
        segmentId: segment.segmentId,
        fromWorkerId: a.endpoint,
        toWorkerId: b.endpoint,
      });
      assert.equal((await count()).count, 3000 - Number(segment.rowCount), 'A no longer reads the handed-off segment');
      await coordinator.removeHandoff(ACCOUNT, segment.segmentId);
      assert.equal((await count()).count, 3000);
    } finally {
      await service.close();
      await coordinator.close();
      await stopWorker(a);
      await stopWorker(b);
    }
  });

  it('has, has_cs, has_any and has_all over term-indexed segments on one worker and three (decision 0026)', async () => {
    // Four sealed segments whose hosts differ, so the term hints leave segments out.
    const HOSTS = ['alpha-1', 'Beta-2', 'gamma-3', 'delta-4'];
    const batches = HOSTS.map((host, b) =>
      Array.from(
        { length: 200 },
        (_, i): Row => ({
          ts: BASE + (b * 200 + i) * 60_000,
          host: i % 10 === 0 ? `${host} timeout` : host,
          level: i % 4 === 0 ? 'Error' : 'Info',
          latencyMs: i,
          ratio: 1,
        }),
      ),
    );
    const all = batches.flat();
    const requests: ExecuteFragmentRequest[] = [];
    const single = [await startWorker(batches, true, undefined, (req) => requests.push(req))];
    const three = [
      await startWorker([batches[0] as Row[], batches[1] as Row[]], true),
      await startWorker([batches[2] as Row[]], true),
      await startWorker([batches[3] as Row[]]),
    ];
    try {
      const cases: [string, (r: Row) => boolean][] = [
        ['host has "beta"', (r) => /(^|[^a-z0-9])beta([^a-z0-9]|$)/i.test(r.host)],
        ['host has_cs "Beta"', (r) => r.host.includes('Beta')],
        ['host has_cs "beta"', () => false],
        ['host has "BETA-2"', (r) => r.host.startsWith('Beta-2')],
        ['host has "timeout" and level == "Error"', (r) => r.host.endsWith('timeout') && r.level === 'Error'],
        ['host has_any ("gamma", "delta-4")', (r) => r.host.startsWith('gamma') || r.host.startsWith('delta')],
        ['host has_all ("alpha", "1")', (r) => r.host.startsWith('alpha')],
        ['host has "zzz"', () => false],
        ['host has "zzz" or level == "Error"', (r) => r.level === 'Error'],
        ['not(host has "alpha")', (r) => !r.host.startsWith('alpha')],
      ];
      for (const [condition, keep] of cases)
        for (const workers of [single, three]) {
          const r = await query(workers, `app.logs | where ${condition} | count`);
          assert.deepEqual(r.results, [{ Count: all.filter(keep).length }], `${condition} on ${workers.length}`);
        }
      requests.length = 0;
      await query(single, 'app.logs | where host has "beta" | count');
      assert.deepEqual(requests[0]?.termHints, [{ column: 'host', anyOf: [{ keys: ['beta'] }] }], 'the hint travels');
    } finally {
      for (const w of [...single, ...three]) await stopWorker(w);
    }
  });

  it('datetimes with 100 ns ticks: endof… keys, min/max, tick boundaries and the wire, as on one worker (decision 0036)', async () => {
    const r = await both(
      'app.logs | summarize n = count(), lo = min(endofday(timestamp)), span = max(endofday(timestamp) - timestamp) by e = endofday(timestamp) | sort by e asc',
    );
    const days = [...new Set(ROWS.map((x) => Math.floor(x.ts / 86_400_000)))].sort((a, b) => a - b);
    const lastTick = (day: number) => new Date((day + 1) * 86_400_000 - 1).toISOString().replace(/\.999Z$/, '.9999999Z');
    assert.deepEqual(
      r.columns.map((c) => c.type),
      ['DateTime', 'Int64', 'DateTime', 'TimeSpan'],
    );
    assert.deepEqual(
      r.results.map((x) => [x.e, x.n, x.lo]),
      days.map((d) => [lastTick(d), ROWS.filter((x) => Math.floor(x.ts / 86_400_000) === d).length, lastTick(d)]),
    );
    // The second row is at BASE + 47 s: one tick past it includes it, one tick before excludes it.
    const past = await both('app.logs | where timestamp < datetime(2024-05-01 00:00:47.0000001) | count');
    const before = await both('app.logs | where timestamp <= datetime(2024-05-01 00:00:46.9999999) | count');
    assert.deepEqual([past.results, before.results], [[{ Count: 2 }], [{ Count: 1 }]]);
  });

  it('a datetime plus a per-row timespan keeps its ticks across workers: keys, filters, percentiles, lists (decision 0036)', async () => {
    // latencyMs * 1tick: 0 … 1499 ticks, mostly not whole microseconds; ticks since the Unix epoch in BigInt.
    const ticksOf = (x: Row) => BigInt(x.ts) * 10_000n + BigInt(x.latencyMs);
    const iso = (t: bigint) => {
      const ms = t / 10_000n;
      return new Date(Number(ms)).toISOString().replace(/\.\d{3}Z$/, `.${String(t % 10_000_000n).padStart(7, '0')}Z`);
    };
    const top = await both('app.logs | summarize n = count() by e = timestamp + latencyMs * 1tick | sort by e desc | take 3');
    const sums = ROWS.map(ticksOf).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    assert.deepEqual(
      top.results.map((x) => x.e),
      sums.slice(0, 3).map(iso),
    );
    const rows = await both('app.logs | where timestamp + latencyMs * 1tick > datetime(2024-05-01 00:00:47.0000036) | count');
    const bound = BigInt(Date.UTC(2024, 4, 1, 0, 0, 47)) * 10_000n + 36n;
    assert.deepEqual(rows.results, [{ Count: ROWS.filter((x) => ticksOf(x) > bound).length }]);
    const agg = await both(
      'app.logs | summarize d = dcount(timestamp + latencyMs * 1tick), p = percentile(timestamp + latencyMs * 1tick, 50), l = make_list(timestamp + latencyMs * 1tick)',
      true,
    );
    const sorted = [...sums].reverse();
    const row = agg.results[0] as Record<string, unknown>;
    assert.equal(row.d, new Set(sums).size);
    assert.equal(row.p, iso(sorted[Math.ceil(sorted.length / 2) - 1] as bigint));
    assert.deepEqual([...(row.l as string[])].sort(), sorted.map(iso).sort());
    // Passed through from the workers (project + take, no merge work): the wire's ticks become text.
    const passed = await both('app.logs | where latencyMs == 37 | project e = timestamp + latencyMs * 1tick');
    assert.deepEqual(
      passed.results.map((x) => x.e),
      ROWS.filter((x) => x.latencyMs === 37).map((x) => iso(ticksOf(x))),
    );
  });

  it('typed datetime columns made from text keep the 7th digit across workers: parse, mv-expand, bag_unpack (decision 0048)', async () => {
    // The text of timestamp + latencyMs ticks, parsed back by three operators that make typed columns.
    const ticksOf = (x: Row) => BigInt(x.ts) * 10_000n + BigInt(x.latencyMs);
    const iso = (t: bigint) => {
      const ms = t / 10_000n;
      return new Date(Number(ms)).toISOString().replace(/\.\d{3}Z$/, `.${String(t % 10_000_000n).padStart(7, '0')}Z`);
    };
    const text = 'app.logs | extend s = tostring(timestamp + latencyMs * 1tick)';
    const sums = ROWS.map(ticksOf).sort((a, b) => (a > b ? -1 : a < b ? 1 : 0));
    const forms = [
      `${text} | parse s with t:datetime`,
      `${text} | extend a = pack_array(s) | mv-expand t = a to typeof(datetime)`,
      `${text} | extend b = bag_pack('t', s) | evaluate bag_unpack(b) : (s: string, t: datetime)`,
    ];
    const bound = BigInt(Date.UTC(2024, 4, 1, 0, 0, 47)) * 10_000n + 36n;
    for (const form of forms) {
      const top = await both(`${form} | summarize n = count() by t | sort by t desc | take 3`);
      assert.deepEqual(
        top.results.map((x) => x.t),
        sums.slice(0, 3).map(iso),
        form,
      );
      const rows = await both(`${form} | where t > datetime(2024-05-01 00:00:47.0000036) | count`);
      assert.deepEqual(rows.results, [{ Count: ROWS.filter((x) => ticksOf(x) > bound).length }], form);
    }
    // Passed through from the workers: the wire's ticks become text.
    const passed = await both(`${forms[0]} | where latencyMs == 37 | project t`);
    assert.deepEqual(
      passed.results.map((x) => x.t),
      ROWS.filter((x) => x.latencyMs === 37).map((x) => iso(ticksOf(x))),
    );
  });

  it('a column missing on one worker reads as empty there', async () => {
    const r = await both('app.logs | summarize n = count() by extra');
    const counts = new Map<string, number>();
    for (const x of ROWS) counts.set(x.extra ?? '', (counts.get(x.extra ?? '') ?? 0) + 1);
    assert.deepEqual(canonical(r), [...counts].map(([extra, n]) => JSON.stringify({ extra, n })).sort());
  });

  it('dcount, make_set and arg_max merge across workers', async () => {
    // make_set has no defined order: the workers' partial sets may merge in either order.
    const r = await both('app.logs | summarize d = dcount(latencyMs), hosts = make_set(host), arg_max(timestamp, host)', true);
    const row = r.results[0] as Record<string, unknown>;
    assert.equal(row.d, new Set(ROWS.map((x) => x.latencyMs)).size);
    assert.deepEqual([...(row.hosts as string[])].sort(), ['db-1', 'web-1', 'web-2']);
    const last = ROWS[ROWS.length - 1] as Row;
    assert.equal(row.host, last.host);
  });

  it('sketches and weighted percentiles merge across workers; JS functions run on the workers', async () => {
    const r = await both(
      'app.logs | summarize t = tdigest(latencyMs), h = hll(host), p = percentilew(latencyMs, 2, 50), q = percentile(latencyMs, 50), d = dcount(host) | project c = percentile_tdigest(t, 50, typeof(long)), e = dcount_hll(h), p, q, d',
    );
    const sorted = ROWS.map((x) => x.latencyMs).sort((a, b) => a - b);
    const median = sorted[Math.max(1, Math.ceil(sorted.length / 2)) - 1];
    assert.deepEqual(r.results, [{ c: median, e: 3, p: median, q: median, d: 3 }]);
    // The filter runs in each worker's fragment, through the JS functions registered there.
    const f = await both(
      'app.logs | where array_length(array_rotate_left(pack_array(host, level), 1)) == 2 and parse_url(strcat("http://", host, "/x")).Host == host | count',
    );
    assert.deepEqual(f.results, [{ Count: ROWS.length }]);
  });

  it('make-series and the series functions answer alike on real workers (one worker runs them itself)', async () => {
    // Two workers: partial aggregates per (host, bin) on each, arrays and series functions in the
    // gateway's merge; one worker: the whole query, JS series functions included, on the worker.
    const r = await both(
      `app.logs | make-series n = count(), mx = max(latencyMs) on timestamp from datetime(2024-05-01) to datetime(2024-05-02) step 2h by host
         | extend total = series_sum(n), gap = series_subtract(mx, n), st = series_stats_dynamic(n)`,
    );
    const step = 2 * 3_600_000;
    for (const host of ['web-1', 'web-2', 'db-1']) {
      const n: number[] = [];
      const mx: number[] = [];
      for (let k = 0; k < 12; k++) {
        const rows = ROWS.filter((x) => x.host === host && x.ts >= BASE + k * step && x.ts < BASE + (k + 1) * step);
        n.push(rows.length);
        mx.push(rows.length === 0 ? 0 : Math.max(...rows.map((x) => x.latencyMs)));
      }
      const row = r.results.find((x) => x.host === host) as Record<string, unknown>;
      assert.deepEqual(row.n, n);
      assert.deepEqual(row.mx, mx);
      assert.equal(
        row.total,
        n.reduce((a, b) => a + b, 0),
      );
      assert.deepEqual(
        row.gap,
        mx.map((v, i) => v - (n[i] as number)),
      );
      assert.equal((row.st as { max: number }).max, Math.max(...n));
    }
  });

  it('a query error from a worker (bad regex) is a 400-kind error', async () => {
    await assert.rejects(
      query(two, 'app.logs | where host matches regex "(" | count'),
      (e: unknown) => e instanceof StrataError && e.kind === 'invalid',
    );
  });

  it('an unknown schema reads as no table; an account without data has none', async () => {
    await assert.rejects(query(two, 'nope | count'), (e: unknown) => e instanceof StrataError && e.kind === 'invalid');
    const catalog = await new SchemaCatalogSource(await coordinatorOf(two), channels).get('00000000-0000-0000-0000-0000000000ff');
    assert.deepEqual(catalog.tables, []);
  });

  it('a cancelled call leaves the worker’s queue; excess waiting is refused', async () => {
    const w = await startWorker([ROWS.slice(0, 10)], false, {
      queryMaxConcurrent: 1,
      fileMaxConcurrentRead: 10,
      rowgroupMaxConcurrentRead: 100,
    });
    try {
      // Hold the only query slot, as a long-running fragment would.
      const hold = await w.service.limiter.admit(new AbortController().signal);
      const client = channels.client(QueryServiceService, w.endpoint);
      const request = {
        accountId: ACCOUNT,
        schema: 'app.logs',
        sql: 'WITH "s0" AS (SELECT CAST(1 AS BIGINT) AS "c0" FROM "__strata_source__") SELECT "c0" FROM "s0"',
        params: [],
        sourceColumns: [{ name: 'host', type: ValueType.VALUE_TYPE_STRING }],
        columns: [{ id: 'c0', type: WireType.WIRE_TYPE_BIGINT }],
        viewRevision: 0,
        segmentOwners: [],
        termHints: [],
      };
      const controller = new AbortController();
      const consume = (async () => {
        for await (const _ of client.executeFragment(request, { signal: controller.signal, timeoutMs: 30_000 })) {
          // waiting in the queue: nothing arrives
        }
      })();
      for (let i = 0; i < 100 && w.service.limiter.queries.waiting === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(w.service.limiter.queries.waiting, 1, 'the call waits in the queue');
      controller.abort();
      await assert.rejects(consume);
      for (let i = 0; i < 100 && w.service.limiter.queries.waiting > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(w.service.limiter.queries.waiting, 0, 'the cancelled call left the queue');

      // The queue holds at most max(16, 4 × limit) waiters; beyond that RESOURCE_EXHAUSTED.
      const calls = Array.from({ length: 17 }, () => {
        const c = new AbortController();
        const p = (async () => {
          for await (const _ of client.executeFragment(request, { signal: c.signal, timeoutMs: 30_000 })) {
            // drained after release
          }
        })();
        return { c, p };
      });
      const outcomes = await Promise.race([
        Promise.any(
          calls.map((x) =>
            x.p
              .then(
                () => 'ok',
                (e: unknown) => (e instanceof StrataError ? e.kind : 'other'),
              )
              .then((k) => (k === 'resource_exhausted' ? k : new Promise(() => undefined))),
          ),
        ),
        new Promise((r) => setTimeout(() => r('none'), 10_000)),
      ]);
      assert.equal(outcomes, 'resource_exhausted');
      hold();
      const settled = await Promise.allSettled(calls.map((x) => x.p));
      const failures = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error).message)] : []));
      assert.equal(failures.filter((f) => !/waiting/.test(f)).length, 0, failures.join('; '));
      assert.equal(settled.filter((s) => s.status === 'fulfilled').length, 16, 'the queued calls ran once the slot was free');
    } finally {
      await stopWorker(w);
    }
  });

  it('a query deadline cancels the fragments on the workers', async () => {
    const w = await startWorker([ROWS.slice(0, 10)], false, {
      queryMaxConcurrent: 1,
      fileMaxConcurrentRead: 10,
      rowgroupMaxConcurrentRead: 100,
    });
    try {
      const hold = await w.service.limiter.admit(new AbortController().signal);
      await assert.rejects(
        query([w], 'app.logs | count', 300),
        (e: unknown) => e instanceof StrataError && (e.kind === 'timeout' || e.kind === 'cancelled'),
      );
      for (let i = 0; i < 100 && w.service.limiter.queries.waiting > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(w.service.limiter.queries.waiting, 0);
      hold();
    } finally {
      await stopWorker(w);
    }
  });
});
