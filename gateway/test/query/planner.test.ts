/**
 * The distributed plan: what is pushed to workers (filters, projections, partial aggregates,
 * limits, time ranges) and what the gateway merges; cancellation and deadlines.
 */
import assert from 'node:assert/strict';
import { StrataError } from '@strata/common';
import { after, before, describe, it } from 'mocha';
import { executePlan, type FragmentSpec, planQuery } from '../../src/query/engine.js';
import type { ColumnBatch } from '../../src/query/exec/batches.js';
import { closeCluster, getCluster, kustoDate, LOGS, NOW, run } from './fixture.js';

const us = (d: Date | number) => BigInt(new Date(d).getTime()) * 1000n;

describe('query planning and distributed execution', () => {
  let catalog: Awaited<ReturnType<typeof getCluster>>['three']['catalog'];
  before(async function () {
    this.timeout(60_000);
    catalog = (await getCluster()).three.catalog;
  });
  after(closeCluster);

  it('extracts the time range from timestamp filters', () => {
    const p = planQuery('Logs | where timestamp > ago(1h) and timestamp <= datetime(2024-03-10 11:30) | count', catalog, {
      now: NOW,
    });
    assert.deepEqual(p.fragments[0]?.timeRange, {
      fromUs: us(NOW.getTime() - 3_600_000),
      toUs: us(Date.UTC(2024, 2, 10, 11, 30)),
    });
    const b = planQuery('Logs | where timestamp between (datetime(2024-03-09) .. 1d) | count', catalog, { now: NOW });
    assert.deepEqual(b.fragments[0]?.timeRange, { fromUs: us(Date.UTC(2024, 2, 9)), toUs: us(Date.UTC(2024, 2, 10)) });
    const renamed = planQuery('Logs | project t = timestamp | where t >= ago(2h)', catalog, { now: NOW });
    assert.deepEqual(renamed.fragments[0]?.timeRange, { fromUs: us(NOW.getTime() - 7_200_000) });
  });

  it('does not take a time range from filters it cannot trust', () => {
    for (const q of [
      'Logs | where timestamp > ago(1h) or latencyMs > 5 | count',
      'Logs | extend timestamp = now() | where timestamp > ago(1h) | count',
      'Logs | take 10 | where timestamp > ago(1h)',
      'Logs | where not(timestamp > ago(1h)) | count',
    ]) {
      assert.deepEqual(planQuery(q, catalog, { now: NOW }).fragments[0]?.timeRange, {}, q);
    }
  });

  it('leaves exact time conjuncts to the scans only when asked, and only those it can state exactly', () => {
    const q =
      'Logs | where timestamp > datetime(2024-03-10 10:00) and level == "Error" and datetime(2024-03-10 11:00) >= timestamp | count';
    const full = planQuery(q, catalog, { now: NOW });
    assert.equal(full.fragments[0]?.storageTime, undefined, 'not without the option (a purge plans this way)');
    const p = planQuery(q, catalog, { now: NOW, storageTime: true });
    const [f] = p.fragments;
    assert.deepEqual(f?.storageTime, { fromUs: us(Date.UTC(2024, 2, 10, 10)) + 1n, toUs: us(Date.UTC(2024, 2, 10, 11)) });
    assert.deepEqual(p.single?.storageTime, f?.storageTime);
    for (const statement of [f?.sql, p.single?.sql]) {
      assert.ok(statement && !/TIMESTAMP|make_timestamp|"timestamp"/i.test(statement), `no time condition left: ${statement}`);
      assert.ok(statement.includes('level') || statement.includes('$1'), 'the other conjunct stays');
    }
    assert.deepEqual(
      planQuery('Logs | where timestamp == datetime(2024-03-10 10:00)', catalog, { now: NOW, storageTime: true }).fragments[0]
        ?.storageTime,
      { fromUs: us(Date.UTC(2024, 2, 10, 10)), toUs: us(Date.UTC(2024, 2, 10, 10)) },
    );
    assert.deepEqual(
      planQuery('Logs | project t = timestamp | where t < ago(1h) | count', catalog, { now: NOW, storageTime: true }).fragments[0]
        ?.storageTime,
      { toUs: us(NOW.getTime() - 3_600_000) - 1n },
      'a renamed time column is still the stored one',
    );
    for (const kept of [
      'Logs | where timestamp > ago(1h) or latencyMs > 5 | count',
      'Logs | extend timestamp = now() | where timestamp > ago(1h) | count',
      'Logs | take 10 | where timestamp > ago(1h)',
      'Logs | where timestamp between (datetime(2024-03-09) .. 1d) | count',
      'Logs | where timestamp > datetime(2400-01-01) | count',
    ]) {
      assert.equal(planQuery(kept, catalog, { now: NOW, storageTime: true }).fragments[0]?.storageTime, undefined, kept);
    }
    // A filter above the fragment (after summarize) keeps its conditions in the merge / single statement.
    const above = planQuery('Logs | summarize by bin(timestamp, 1h) | where timestamp > ago(1d)', catalog, {
      now: NOW,
      storageTime: true,
    });
    assert.equal(above.fragments[0]?.storageTime, undefined);
  });

  it('answers the same with time conjuncts left to the scans, at row times exactly (run compares both)', async () => {
    const at = kustoDate(LOGS[100]!.timestamp);
    const later = kustoDate(LOGS[180]!.timestamp);
    let total = 0;
    for (const op of ['>', '>=', '<', '<=', '==']) {
      for (const q of [
        `Logs | where timestamp ${op} datetime(${at}) | count`,
        `Logs | where datetime(${at}) ${op} timestamp and level != "Debug" | summarize count() by level`,
        `Logs | where timestamp ${op} datetime(${at}) and timestamp < datetime(${later}) | top 3 by timestamp desc`,
        `Logs | project t = timestamp, host | where t ${op} datetime(${at}) | summarize max(t), count() by host`,
      ]) {
        const r = await run(q, q.includes('top 3') ? { ordered: true } : {});
        total += r.results.length;
      }
    }
    const [row] = (await run(`Logs | where timestamp == datetime(${at}) | count`)).results;
    assert.equal(Number(Object.values(row!)[0]), 1, 'the row at that exact time is found by ==');
    assert.ok(total > 10);
  });

  it('pushes filters, projections and partial aggregates to the workers', () => {
    const p = planQuery(
      'Logs | where level == "Error" | extend l = latencyMs * 2 | summarize avg(l) by host | where avg_l > 10',
      catalog,
      { now: NOW },
    );
    assert.equal(p.fragments.length, 1);
    const f = p.fragments[0] as FragmentSpec;
    assert.match(f.sql, /WHERE/);
    assert.match(f.sql, /GROUP BY ALL/);
    assert.match(p.merge.text, /FROM "f0"/);
    assert.match(p.merge.text, /GROUP BY ALL/);
    // The post-aggregate filter runs on the gateway.
    assert.doesNotMatch(f.sql, /"avg_l"/);
  });

  it('groups a datetime bin by its microseconds and makes the timestamp per group (decision 0043)', async () => {
    const q = 'Logs | summarize n = count() by bin(timestamp, 5m), host';
    const f = planQuery(q, catalog, { now: NOW }).fragments[0] as FragmentSpec;
    // The key is the floored BIGINT inside the GROUP BY; the timestamp is made in the next step.
    assert.match(
      f.sql,
      /SELECT \(CASE WHEN epoch_us\("c\d+"\) >= 0 THEN .* END\) AS "(c\d+)".* GROUP BY ALL\), "s\d+" AS \(SELECT make_timestamp\("\1"\) AS "\1"/,
    );
    // A bin inside another expression is grouped as written (one expression, one key).
    const shifted = planQuery('Logs | summarize n = count() by b = bin(timestamp, 5m) + 1h', catalog, { now: NOW });
    assert.doesNotMatch((shifted.fragments[0] as FragmentSpec).sql, /SELECT make_timestamp\("c\d+"\) AS/);
    // Same answers as the timestamp key (one worker, three, and by the hour shifted), with the
    // bins as datetimes.
    const r = await run(q);
    const sum = r.results.reduce((n, row) => n + Number(row.n), 0);
    assert.equal(sum, LOGS.length);
    for (const row of r.results) assert.match(String(row.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d[05]:00\.0000000Z$/);
    const byShift = await run('Logs | summarize n = count() by b = bin(timestamp, 5m) + 1h | summarize sum(n)');
    assert.equal(Number(byShift.results[0]?.sum_n), LOGS.length);
  });

  it('pushes limits for take, top and sort | take, and a row-cap limit for plain queries', () => {
    assert.equal(planQuery('Logs | take 5', catalog).fragments[0]?.limit, 5n);
    assert.equal(planQuery('Logs | top 5 by latencyMs', catalog).fragments[0]?.limit, 5n);
    const st = planQuery('Logs | sort by timestamp desc | take 7', catalog).fragments[0] as FragmentSpec;
    assert.equal(st.limit, 7n);
    assert.match(st.sql, /ORDER BY .* DESC NULLS LAST.* LIMIT/);
    assert.equal(planQuery('Logs | where latencyMs > 5', catalog, { maxRows: 100 }).fragments[0]?.limit, 101n);
    assert.equal(planQuery('Logs | sort by latencyMs', catalog, { maxRows: 100 }).fragments[0]?.limit, 101n);
    assert.equal(planQuery('Logs | summarize count() by host', catalog).fragments[0]?.limit, undefined);
  });

  it('marks a take without an order over filters and projections as any rows (branchLimit, decision 0033)', () => {
    for (const q of [
      'Logs | where message contains "db-3" | take 100',
      'Logs | where message has "timeout" | project host, message | take 100',
      'Logs | extend m = strcat(host, message) | where m contains "x" | take 100',
    ]) {
      const p = planQuery(q, catalog, { storageTime: true });
      assert.equal(p.fragments[0]?.branchLimit, 100n, q);
      assert.equal(p.single?.branchLimit, 100n, q);
    }
    // The row cap alone is a limit too: any rows of a filter are an answer.
    assert.equal(planQuery('Logs | where latencyMs > 5', catalog, { maxRows: 100 }).fragments[0]?.branchLimit, 101n);
    for (const q of [
      'Logs | sort by timestamp desc | take 7',
      'Logs | top 5 by latencyMs',
      'Logs | summarize count() by host | take 5',
      'Logs | serialize | extend rn = row_number() | take 5',
      'Logs | sort by timestamp asc | extend p = prev(latencyMs) | take 5',
    ]) {
      const p = planQuery(q, catalog);
      assert.equal(p.fragments.some((f) => f.branchLimit !== undefined) || p.single?.branchLimit !== undefined, false, q);
    }
  });

  it('plans one fragment per table read, with the merge over all of them', () => {
    const p = planQuery('Logs | union logship.agent.events | count', catalog);
    assert.deepEqual(
      p.fragments.map((f) => f.table),
      ['Logs', 'logship.agent.events'],
    );
    assert.match(p.merge.text, /"f0".*"f1"|"f1".*"f0"/s);
  });

  it('a query over one table also gets a whole-query statement for a single worker', () => {
    const p = planQuery('Logs | where level == "Error" | summarize n = count() by host | top 3 by n', catalog, { now: NOW });
    assert.ok(p.single);
    assert.match(p.single.sql, /FROM "__strata_source__"/);
    assert.doesNotMatch(p.single.sql, /"f0"/);
    assert.deepEqual(p.single.timeRange, p.fragments[0]?.timeRange);
    assert.deepEqual(
      p.single.columns.map((c) => c.type),
      ['VARCHAR', 'BIGINT'],
    );
    assert.equal(planQuery('Logs | union logship.agent.events | count', catalog).single, undefined);
    assert.equal(planQuery('print 1', catalog).single, undefined);
  });

  it('a top-N over one table runs whole on one worker, per scan part, with its keys after the result columns', () => {
    const p = planQuery('Logs | where level == "Error" | sort by latencyMs asc nulls first, host desc | take 3', catalog, {
      now: NOW,
    });
    const result = p.columns.length;
    assert.ok(p.single?.branchTopN, 'a whole-query top-N statement');
    assert.equal(p.single.branchTopN.limit, 3n);
    assert.deepEqual(p.single.branchTopN.keys, [
      { column: result, descending: false, nullsFirst: true },
      { column: result + 1, descending: true, nullsFirst: false },
    ]);
    assert.deepEqual(
      p.single.columns.slice(result).map((c) => c.type),
      ['BIGINT', 'VARCHAR'],
    );
    // sort | take is the same top-N; so is one mapped row by row afterwards, and cut again (the
    // smallest limit counts).
    assert.ok(planQuery('Logs | sort by latencyMs | take 4', catalog, { now: NOW }).single?.branchTopN);
    const mapped = planQuery('Logs | top 5 by latencyMs | extend x = latencyMs + 1 | project host, x | take 2', catalog, {
      now: NOW,
    });
    assert.equal(mapped.single?.branchTopN?.limit, 2n);
    assert.deepEqual(
      mapped.single?.columns.map((c) => c.id).slice(0, mapped.columns.length),
      mapped.columns.map((c) => c.id),
    );
    // A filter, a row function or an aggregate after the top changes which rows count: the top-N
    // fragment goes through the merge (and the whole query has no keys to ship).
    for (const q of [
      'Logs | top 3 by latencyMs | where host == "a"',
      'Logs | top 3 by latencyMs | extend n = row_number()',
      'Logs | top 3 by latencyMs | count',
    ]) {
      const p = planQuery(q, catalog, { now: NOW });
      assert.ok(p.fragments[0]?.branchTopN, q);
      assert.equal(p.single, undefined, q);
    }
    // A take below the row cap is no top-N: no keys, the single statement as before.
    const plain = planQuery('Logs | summarize n = count() by host | top 3 by n', catalog, { now: NOW });
    assert.equal(plain.single?.branchTopN, undefined);
  });

  it('a top-N names the scan column behind its first key when it is a stored long, real or datetime (decision 0038)', () => {
    const source = (q: string) => {
      const p = planQuery(q, catalog, { now: NOW });
      const fragment = p.fragments[0]?.branchTopN?.source;
      // The whole-query statement and the fragment name the same column.
      if (p.single?.branchTopN) assert.equal(p.single.branchTopN.source, fragment, q);
      return fragment;
    };
    assert.equal(source('Logs | top 10 by latencyMs'), 'latencyMs');
    assert.equal(source('Logs | sort by ratio asc | take 5'), 'ratio');
    assert.equal(source('Logs | top 100 by timestamp'), 'timestamp');
    assert.equal(source('Logs | where level == "Error" | top 3 by latencyMs desc nulls first'), 'latencyMs');
    assert.equal(source('Logs | project l = latencyMs, host | top 3 by l'), 'latencyMs', 'a rename keeps it');
    assert.equal(source('Logs | sort by latencyMs, host | take 3'), 'latencyMs', 'the first key only');
    assert.equal(source('Logs | top 3 by latencyMs | where host == "a"'), 'latencyMs', 'through the merge too');
    for (const q of [
      'Logs | sort by host, latencyMs | take 3', // a string first key
      'Logs | extend l = latencyMs + 1 | top 3 by l', // computed
      'Logs | extend latencyMs = latencyMs * -1 | top 3 by latencyMs', // same name, another value
      'Logs | top 3 by latencyMs * 2', // an expression
      'Logs | top 3 by duration', // a timespan
      'Logs | top 3 by toint(props.a)', // a dynamic member
    ])
      assert.equal(source(q), undefined, q);
  });

  it('filter-only queries skip the merge statement (first rows win)', () => {
    const p = planQuery('Logs | where latencyMs > 5 | project host, latencyMs', catalog, { maxRows: 100 });
    assert.deepEqual(p.passthrough, { fragment: 0, count: 101n, columnIndexes: [0, 1] });
    assert.equal(planQuery('Logs | take 5', catalog).passthrough?.count, 5n);
    assert.equal(planQuery('Logs | summarize count() by host', catalog).passthrough, undefined);
    assert.equal(planQuery('Logs | top 3 by latencyMs', catalog).passthrough, undefined);
  });

  it('the scan reads only the columns the query uses', () => {
    const p = planQuery('Logs | where level == "Error" | count', catalog, { now: NOW });
    assert.deepEqual(
      p.fragments[0]?.sourceColumns.map((c) => c.name),
      ['level'],
    );
    assert.deepEqual(planQuery('Logs | count', catalog).fragments[0]?.sourceColumns, []);
  });

  it('local sources (datatable, range, print, built-in tables) need no workers', () => {
    for (const q of ['print 1', 'range x from 1 to 3 step 1', 'datatable(a:long)[1]', 'schema.tables']) {
      assert.equal(planQuery(q, catalog).fragments.length, 0, q);
    }
  });

  it('a fragment reads only through its source relation and binds every value', () => {
    const p = planQuery('Logs | where host == "web-1" and latencyMs > 250', catalog, { now: NOW });
    const f = p.fragments[0] as FragmentSpec;
    assert.match(f.sql, /FROM "__strata_source__"/);
    assert.doesNotMatch(f.sql, /web-1|250/);
    assert.deepEqual(
      f.params.filter((x) => x.type === 'VARCHAR').map((x) => x.value),
      ['web-1'],
    );
  });

  it('answers do not depend on worker count, also with an empty worker', async () => {
    const c = await getCluster();
    const q = 'Logs | where level != "Info" | summarize n = count(), p = percentile(latencyMs, 50), d = dcount(host) by level';
    const plan = planQuery(q, c.three.catalog, { now: NOW });
    const emptyWorker: (f: FragmentSpec, s: AbortSignal) => AsyncIterable<ColumnBatch> = async function* () {};
    const withEmpty = (f: FragmentSpec, s: AbortSignal) =>
      (async function* () {
        yield* c.three.runner(f, s);
        yield* emptyWorker(f, s);
      })();
    const a = await executePlan(plan, c.one.runner, { mergeDatabase: c.merge });
    const b = await executePlan(plan, withEmpty, { mergeDatabase: c.merge });
    const sort = (r: typeof a) => r.results.map((x) => JSON.stringify(x)).sort();
    assert.deepEqual(sort(b), sort(a));
    assert.equal(
      a.results.reduce((s, r) => s + (r.n as number), 0),
      LOGS.filter((l) => l.level !== 'Info').length,
    );
  });

  it('a query with no workers answers from an empty table', async () => {
    const c = await getCluster();
    const none = async function* (): AsyncGenerator<ColumnBatch> {};
    const r = await executePlan(planQuery('Logs | summarize count(), max(latencyMs)', c.one.catalog), none, {
      mergeDatabase: c.merge,
    });
    assert.deepEqual(r.results, [{ count_: 0, max_latencyMs: null }]);
  });

  it('a deadline cancels the query and aborts the fragment runners', async () => {
    const c = await getCluster();
    let aborted = false;
    const slow = (_f: FragmentSpec, signal: AbortSignal) =>
      (async function* (): AsyncGenerator<ColumnBatch> {
        await new Promise<void>((resolve) => {
          signal.addEventListener(
            'abort',
            () => {
              aborted = true;
              resolve();
            },
            { once: true },
          );
        });
        signal.throwIfAborted();
      })();
    await assert.rejects(
      executePlan(planQuery('Logs | count', c.one.catalog), slow, { mergeDatabase: c.merge, timeoutMs: 100 }),
      (err: unknown) => err instanceof StrataError && err.kind === 'timeout',
    );
    assert.equal(aborted, true);
  });

  it('an abandoned query is cancelled, also while the merge statement runs', async () => {
    const c = await getCluster();
    const controller = new AbortController();
    const plan = planQuery('range x from 1 to 500000000 step 1 | summarize sum(x)', c.one.catalog);
    setTimeout(() => controller.abort(), 200);
    const started = Date.now();
    await assert.rejects(
      executePlan(plan, c.one.runner, { mergeDatabase: c.merge, signal: controller.signal }),
      (err: unknown) => err instanceof StrataError && err.kind === 'cancelled',
    );
    assert.ok(Date.now() - started < 10_000);
  });

  it('errors caused by the data are query errors (400), not server errors', async () => {
    const c = await getCluster();
    await assert.rejects(
      executePlan(planQuery('Logs | where message matches regex "(unclosed"', c.one.catalog), c.one.runner, {
        mergeDatabase: c.merge,
      }),
      (err: unknown) => err instanceof StrataError && err.kind === 'invalid',
    );
  });
});
