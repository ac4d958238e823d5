/**
 * Hostile fragments sent straight to a worker's QueryService over gRPC, as a caller that got past
 * the network would: each is refused by the fragment check, and — with the check switched off
 * (the test-only option) — the worker's confined DuckDB still refuses every file outside its own
 * directories and every configuration change.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Server } from '@grpc/grpc-js';
import {
  ChannelPool,
  DEFAULT_EXECUTOR_LIMITS,
  FRAGMENT_SOURCE,
  StrataError,
  startGrpcServer,
  stopGrpcServer,
} from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import { type ExecuteFragmentRequest, QueryServiceService, ValueType, WireType } from '@strata/proto/query/v1/query';
import { after, before, describe, it } from 'mocha';
import { queryService } from '../../src/query/query-service.js';
import type { StorageEngine } from '../../src/storage/storage-engine.js';
import { ACCOUNT, entries, input, openEngine, part, tempDir, testLog } from '../helpers/storage-fixtures.js';

const OTHER = '00000000-0000-0000-0000-0000000000b2';
const SCHEMA = 'app.logs';
const SRC = `"${FRAGMENT_SOURCE}"`;

const limits = { current: () => DEFAULT_EXECUTOR_LIMITS, onChange: () => undefined };

interface Outcome {
  rows: number;
  error?: StrataError;
}

describe('hostile query fragments sent to a worker directly', function () {
  this.timeout(30_000);
  let data: ReturnType<typeof tempDir>;
  let outside: string;
  let engine: StorageEngine;
  let otherSegment: string;
  let otherHotTable: string;
  const servers: Server[] = [];
  const channels = new ChannelPool(testIdentity(['gateway']));
  let checked: string;
  let unchecked: string;
  /** A service whose own budget is short, to see it stop a fragment the caller set no limit on. */
  let budgeted: string;

  before(async () => {
    data = tempDir();
    outside = mkdtempSync(path.join(os.tmpdir(), 'strata-outside-'));
    engine = await openEngine(data.dir);
    await engine.append(input([part(SCHEMA, entries(5))]));
    await engine.append(
      input(
        [
          part(
            SCHEMA,
            entries(5).map((e) => ({ ...e, data: { msg: 'secret-of-b' } })),
          ),
        ],
        { accountId: OTHER },
      ),
    );
    await engine.sealAll();
    // More hot rows of the other account, so both its segment and its hot table exist.
    await engine.append(
      input(
        [
          part(
            SCHEMA,
            entries(3).map((e) => ({ ...e, data: { msg: 'secret-of-b' } })),
          ),
        ],
        { accountId: OTHER },
      ),
    );
    const [segment] = await engine.listSegments(OTHER);
    assert.ok(segment, 'the other account has a segment');
    otherSegment = path.join(engine.paths.segments, segment.fileName);
    otherHotTable = `hot_${segment.tableId}`;
    for (const [skip, set] of [
      [false, (e: string) => (checked = e)],
      [true, (e: string) => (unchecked = e)],
    ] as const) {
      const svc = queryService(engine, limits, testLog(), { unsafeSkipFragmentCheckForTests: skip });
      const { server, port } = await startGrpcServer('127.0.0.1:0', [svc], testIdentity(['backend']));
      servers.push(server);
      set(`127.0.0.1:${port}`);
    }
    const short = queryService(engine, limits, testLog(), { maxFragmentMs: 1000 });
    const started = await startGrpcServer('127.0.0.1:0', [short], testIdentity(['backend']));
    servers.push(started.server);
    budgeted = `127.0.0.1:${started.port}`;
  });

  after(async () => {
    channels.close();
    for (const s of servers) await stopGrpcServer(s, 1000);
    await engine?.close();
    data?.cleanup();
    if (outside) rmSync(outside, { recursive: true, force: true });
  });

  function request(sql: string, accountId = ACCOUNT, columns = [WireType.WIRE_TYPE_BIGINT]): ExecuteFragmentRequest {
    return {
      accountId,
      schema: SCHEMA,
      sql,
      params: [],
      sourceColumns: [{ name: 'msg', type: ValueType.VALUE_TYPE_STRING }],
      columns: columns.map((type, i) => ({ id: `c${i}`, type })),
      viewRevision: 0,
      segmentOwners: [],
      maxRows: 10,
    };
  }

  async function run(endpoint: string, req: ExecuteFragmentRequest, timeoutMs = 10_000): Promise<Outcome> {
    let rows = 0;
    try {
      for await (const m of channels.client(QueryServiceService, endpoint).executeFragment(req, { timeoutMs }))
        rows += m.rowCount;
      return { rows };
    } catch (err) {
      assert.ok(err instanceof StrataError, `a StrataError, got ${String(err)}`);
      return { rows, error: err };
    }
  }

  /** Refused by the check: a 400-kind error naming why, nothing run. */
  async function refusedByCheck(sql: string, reason: RegExp) {
    const out = await run(checked, request(sql));
    assert.equal(out.error?.kind, 'invalid', `${sql}: ${out.error?.message}`);
    assert.match(out.error?.message ?? '', /not a permitted statement/);
    assert.match(out.error?.message ?? '', reason);
  }

  it('runs the planner-shaped fragment it is meant to run', async () => {
    const out = await run(checked, request(`WITH a AS (SELECT count(*) AS c0 FROM ${SRC}) SELECT c0 FROM a`));
    assert.equal(out.error, undefined);
    assert.equal(out.rows, 1);
  });

  it("stops a fragment at the worker's own budget, whatever deadline the caller set", async () => {
    const endless = `WITH a AS (SELECT count(*) AS c0 FROM generate_series(1, 1000000000000) AS t(i) WHERE i % 7 = 3) SELECT c0 FROM a`;
    const out = await run(budgeted, request(endless), 120_000);
    assert.equal(out.error?.kind, 'timeout', out.error?.message);
    assert.equal(out.error?.message, 'The query did not finish within 1 seconds.');
  });

  describe('the check refuses', () => {
    it('a second statement after the fragment', async () => {
      await refusedByCheck(
        `WITH a AS (SELECT 1 AS c0) SELECT c0 FROM a; COPY (SELECT 1) TO '${outside}/x.csv'`,
        /not a single SELECT DuckDB can read/,
      );
      await refusedByCheck(`WITH a AS (SELECT 1 AS c0) SELECT c0 FROM a; SELECT 2`, /exactly one statement/);
    });
    it('COPY, ATTACH, SET, PRAGMA, INSTALL, LOAD, CALL, EXPORT', async () => {
      for (const sql of [
        `COPY (SELECT 1) TO '${outside}/y.csv'`,
        `ATTACH '${outside}/z.db' AS z`,
        'SET enable_external_access = true',
        'PRAGMA enable_profiling',
        'INSTALL spatial',
        'LOAD spatial',
        'CALL pragma_version()',
        `EXPORT DATABASE '${outside}/e'`,
      ])
        await refusedByCheck(sql, /not a single SELECT DuckDB can read/);
    });
    it("read_text('/etc/hostname') and the other file-reading table functions", async () => {
      for (const fn of ["read_text('/etc/hostname')", "read_csv('/etc/passwd')", "glob('/etc/*')", "read_json('/etc/x.json')"])
        await refusedByCheck(`WITH a AS (SELECT 1 AS c0 FROM ${fn}) SELECT c0 FROM a`, /table function/);
      await refusedByCheck(`WITH a AS (SELECT 1 AS c0 FROM '/etc/hostname') SELECT c0 FROM a`, /not the fragment's source/);
    });
    it("read_parquet of another account's segment", () =>
      refusedByCheck(`WITH a AS (SELECT count(*) AS c0 FROM read_parquet('${otherSegment}')) SELECT c0 FROM a`, /read_parquet/));
    it("another account's hot table, also qualified or hidden behind a CTE of an inner scope", async () => {
      await refusedByCheck(
        `WITH a AS (SELECT count(*) AS c0 FROM ${otherHotTable}) SELECT c0 FROM a`,
        /not the fragment's source/,
      );
      await refusedByCheck(`WITH a AS (SELECT count(*) AS c0 FROM main.${otherHotTable}) SELECT c0 FROM a`, /qualified/);
      await refusedByCheck(
        `WITH a AS (WITH ${otherHotTable} AS (SELECT 1) SELECT 1 AS c0), b AS (SELECT count(*) AS c0 FROM ${otherHotTable}) SELECT c0 FROM b`,
        /not the fragment's source/,
      );
      await refusedByCheck(
        `WITH a AS (SELECT (SELECT count(*) FROM ${otherHotTable}) AS c0 FROM ${SRC}) SELECT c0 FROM a`,
        /not the fragment's source/,
      );
      await refusedByCheck(
        `WITH a AS (SELECT count(*) AS c0 FROM query_table('${otherHotTable}')) SELECT c0 FROM a`,
        /query_table/,
      );
    });
    it("another account's hot table in every position a table can hide", async () => {
      const t = otherHotTable;
      for (const body of [
        `SELECT count(*) AS c0 FROM ${SRC} UNION ALL SELECT count(*) FROM ${t}`,
        `SELECT list_transform([1], y -> (SELECT count(*) FROM ${t}))[1] AS c0`,
        `SELECT count(*) AS c0 FROM ${SRC}, LATERAL (SELECT * FROM ${t})`,
        `SELECT count(*) AS c0 FROM ${SRC} POSITIONAL JOIN ${t}`,
        `FROM (FROM ${t}) SELECT count(*) AS c0`,
        `SELECT count(*) AS c0 FROM (VALUES ((SELECT 1 FROM ${t})))`,
        `SELECT count(*) AS c0 FROM ${SRC} WHERE msg IN (SELECT msg FROM ${t})`,
        `SELECT count(*) AS c0 FROM ${SRC} ORDER BY (SELECT 1 FROM ${t})`,
      ])
        await refusedByCheck(`WITH a AS (${body}) SELECT c0 FROM a`, /not the fragment's source/);
      await refusedByCheck(`WITH a AS (SELECT count(*) AS c0 FROM (SUMMARIZE ${t})) SELECT c0 FROM a`, /SHOW_REF/);
      await refusedByCheck(
        `WITH a AS (SELECT count(*) AS c0 FROM json_execute_serialized_sql('{}')) SELECT c0 FROM a`,
        /json_execute_serialized_sql/,
      );
    });
    it('listing tables (information_schema, duckdb_tables) and reading settings', async () => {
      await refusedByCheck(`WITH a AS (SELECT count(*) AS c0 FROM information_schema.tables) SELECT c0 FROM a`, /qualified/);
      await refusedByCheck(`WITH a AS (SELECT count(*) AS c0 FROM duckdb_tables()) SELECT c0 FROM a`, /duckdb_tables/);
      await refusedByCheck(
        `WITH a AS (SELECT count(*) AS c0 FROM strata_segments) SELECT c0 FROM a`,
        /not the fragment's source/,
      );
      await refusedByCheck(
        `WITH a AS (SELECT length(current_setting('temp_directory')) AS c0) SELECT c0 FROM a`,
        /current_setting/,
      );
    });
    it('quoting the parameter inliner would read differently from DuckDB', async () => {
      await refusedByCheck(`WITH a AS (SELECT length(E'\\'$1') AS c0) SELECT c0 FROM a`, /prefixed/);
      await refusedByCheck('WITH a AS (SELECT length($$ $1 $$) AS c0) SELECT c0 FROM a', /dollar/);
      await refusedByCheck('WITH a AS (SELECT 1 AS c0) SELECT c0 FROM a -- $1', /comments/);
    });
  });

  describe('with the check switched off, the confined DuckDB alone refuses', () => {
    // DuckDB runs every statement of the text and answers the first one's rows: this one, with
    // the expected column, so only a refusal of the statement after it fails the call.
    const base = 'WITH a AS (SELECT CAST(1 AS BIGINT) AS c0) SELECT c0 FROM a';
    async function refusedByDuckDB(hostile: string) {
      const out = await run(unchecked, request(`${base}; ${hostile}`));
      assert.ok(out.error, `${hostile} must fail`);
      assert.equal(out.rows, 0);
    }
    it('(control) the switch is off: later statements run, and fail the call when they fail', async () => {
      const ok = await run(
        unchecked,
        request(`${base}; CREATE TEMP TABLE t1 AS SELECT 1 AS x; SELECT current_setting('threads')`),
      );
      assert.equal(ok.error, undefined);
      assert.equal(ok.rows, 1);
      await refusedByDuckDB('SELECT * FROM no_such_table');
    });
    it('reading /etc and files outside its directories', async () => {
      await refusedByDuckDB(`SELECT * FROM read_text('/etc/hostname')`);
      await refusedByDuckDB(`SELECT * FROM glob('/etc/*')`);
      await refusedByDuckDB(`SELECT * FROM read_csv('/etc/passwd')`);
      await refusedByDuckDB(`SELECT * FROM read_blob('${outside}/../')`);
    });
    it('writing a file outside its directories (COPY, EXPORT)', async () => {
      const target = path.join(outside, 'written.csv');
      await refusedByDuckDB(`COPY (SELECT 1) TO '${target}'`);
      await refusedByDuckDB(`EXPORT DATABASE '${outside}/export'`);
      assert.equal(existsSync(target), false);
      assert.equal(existsSync(path.join(outside, 'export')), false);
    });
    it('attaching a file, loading an extension, and changing the configuration', async () => {
      await refusedByDuckDB(`ATTACH '${outside}/z.db' AS z`);
      await refusedByDuckDB('LOAD spatial');
      await refusedByDuckDB('INSTALL spatial');
      await refusedByDuckDB('SET enable_external_access = true');
      await refusedByDuckDB("SET allowed_directories = ['/']");
      await refusedByDuckDB('SET lock_configuration = false');
      await refusedByDuckDB("SET memory_limit = '100TB'");
      assert.equal(existsSync(path.join(outside, 'z.db')), false);
      // The refusals changed nothing: /etc stays out of reach.
      await refusedByDuckDB(`SELECT * FROM read_text('/etc/hostname')`);
    });
  });
});
