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
  decodeBatch,
  FRAGMENT_SOURCE,
  StrataError,
  startGrpcServer,
  stopGrpcServer,
  type WireType as WireTypeName,
} from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import { type ExecuteFragmentRequest, QueryServiceService, ValueType, WireType } from '@strata/proto/query/v1/query';
import { after, before, describe, it } from 'mocha';
import { queryService } from '../../src/query/query-service.js';
import { segmentSources } from '../../src/storage/segment-format.js';
import type { StorageEngine } from '../../src/storage/storage-engine.js';
import { ACCOUNT, entries, input, openEngine, part, tempDir, testLog } from '../helpers/storage-fixtures.js';

const OTHER = '00000000-0000-0000-0000-0000000000b2';
const SCHEMA = 'app.logs';
const SRC = `"${FRAGMENT_SOURCE}"`;

const limits = { current: () => DEFAULT_EXECUTOR_LIMITS, onChange: () => undefined };

interface Outcome {
  rows: number;
  error?: StrataError;
  /** The first output column's values, as text. */
  values: string[];
}

describe('hostile query fragments sent to a worker directly', function () {
  this.timeout(30_000);
  let data: ReturnType<typeof tempDir>;
  let outside: string;
  let engine: StorageEngine;
  let otherSegment: string;
  let otherHotTable: string;
  let otherOnlyTable: string;
  let otherPaths: { dir: string; database: string; segments: string };
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
    await engine.append(
      input([
        part(
          SCHEMA,
          entries(5).map((e) => ({ ...e, data: { ...e.data, msg: 'own-row' } })),
        ),
      ]),
    );
    await engine.append(
      input(
        [
          part(
            SCHEMA,
            entries(5).map((e) => ({ ...e, data: { msg: 'secret-of-b' } })),
          ),
        ],
        { accountId: OTHER, idempotencyKey: 'key-of-b' },
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
    // A schema only the other account has: its hot table's name exists nowhere in this account.
    await engine.append(
      input([part('b.only', [{ ts: Date.UTC(2024, 0, 1), data: { msg: 'secret-of-b' } }])], { accountId: OTHER }),
    );
    const [segment] = await engine.listSegments(OTHER);
    assert.ok(segment, 'the other account has a segment');
    otherSegment = engine.segmentPath(segment);
    otherHotTable = `hot_${segment.tableId}`;
    otherOnlyTable = `hot_${Math.max(...(await engine.listSegments(OTHER)).map((s) => s.tableId)) + 1}`;
    otherPaths = engine.layout.account(OTHER);
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
      termHints: [],
      maxRows: 10,
    };
  }

  async function run(endpoint: string, req: ExecuteFragmentRequest, timeoutMs = 10_000): Promise<Outcome> {
    let rows = 0;
    const values: string[] = [];
    const types: WireTypeName[] = req.columns.map((c) => (c.type === WireType.WIRE_TYPE_VARCHAR ? 'VARCHAR' : 'BIGINT'));
    try {
      for await (const m of channels.client(QueryServiceService, endpoint).executeFragment(req, { timeoutMs })) {
        rows += m.rowCount;
        values.push(...decodeBatch(m, types).columns[0]!.map((v) => String(v)));
      }
      return { rows, values };
    } catch (err) {
      assert.ok(err instanceof StrataError, `a StrataError, got ${String(err)}`);
      return { rows, error: err, values };
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

  describe("with the check switched off, a fragment of one account finds nothing of another's", () => {
    /** One VARCHAR column out of a single hostile statement, run for ACCOUNT without the check. */
    const text = (body: string) =>
      run(unchecked, request(`WITH a AS (${body}) SELECT c0 FROM a`, ACCOUNT, [WireType.WIRE_TYPE_VARCHAR]));
    /** Fails, or answers without a trace of the other account (its id, its rows, its files). */
    async function seesNothingOfOther(body: string) {
      const out = await text(body);
      const seen = out.values.join('\n');
      const otherId = path.basename(otherSegment).replace(/\.(duckdb|parquet)$/, '');
      for (const trace of [OTHER, 'secret-of-b', 'key-of-b', otherId, otherId.replaceAll('-', '')])
        assert.ok(!seen.includes(trace), `${body} revealed ${trace}: ${seen.slice(0, 300)}`);
      return out;
    }

    it("(control) unchecked statements run and answer: the own account's rows and tables", async () => {
      const [ownSegment] = await engine.listSegments(ACCOUNT);
      // Segment files are attached to their account's instance (segment-format.ts).
      const own = await text(
        `SELECT string_agg(msg, ',') AS c0 FROM ${segmentSources([engine.segmentPath(ownSegment!)], ownSegment!.format)[0]}`,
      );
      assert.equal(own.error, undefined);
      assert.deepEqual(own.values, ['own-row,own-row,own-row,own-row,own-row']);
      const tables = await text(`SELECT string_agg(table_name, ',' ORDER BY table_name) AS c0 FROM duckdb_tables()`);
      assert.equal(tables.error, undefined);
      assert.ok(tables.values[0]?.includes('strata_tables'), tables.values[0]);
      // The same statements for the other account do show its traces: the assertions below can fail.
      const theirs = await run(
        unchecked,
        request(
          `WITH a AS (SELECT string_agg(account_id || ':' || idempotency_key, ',') AS c0 FROM strata_idempotency) SELECT c0 FROM a`,
          OTHER,
          [WireType.WIRE_TYPE_VARCHAR],
        ),
      );
      assert.deepEqual(theirs.values, [`${OTHER}:key-of-b`]);
    });
    it("the other account's hot tables by name: the name is the own table or none", async () => {
      const same = await seesNothingOfOther(`SELECT string_agg(msg, ',') AS c0 FROM ${otherHotTable}`);
      assert.equal(same.error, undefined);
      const only = await seesNothingOfOther(`SELECT string_agg(msg, ',') AS c0 FROM ${otherOnlyTable}`);
      assert.ok(only.error, 'no table of that name here');
      await seesNothingOfOther(`SELECT string_agg(msg, ',') AS c0 FROM query_table('${otherOnlyTable}')`);
    });
    it("the catalog and idempotency keys list the own account's only", async () => {
      for (const body of [
        `SELECT string_agg(account_id || '/' || schema_name, ',') AS c0 FROM strata_tables`,
        `SELECT string_agg(file_name, ',') AS c0 FROM strata_segments`,
        `SELECT string_agg(account_id, ',') AS c0 FROM strata_idempotency`,
      ]) {
        const out = await seesNothingOfOther(body);
        assert.equal(out.error, undefined, `${body}: ${out.error?.message}`);
      }
      const own = await text(`SELECT string_agg(account_id, ',') AS c0 FROM strata_tables`);
      assert.equal(own.values[0], ACCOUNT);
    });
    it("read_parquet, glob and replacement scans of the other account's segment paths", async () => {
      const all = path.join(path.dirname(otherPaths.dir), '*', 'segments', '*', '*.parquet');
      for (const body of [
        `SELECT string_agg(msg, ',') AS c0 FROM read_parquet('${otherSegment}')`,
        `SELECT string_agg(msg, ',') AS c0 FROM read_parquet('${path.join(otherPaths.segments, '*', '*.parquet')}')`,
        `SELECT string_agg(CAST(msg AS VARCHAR), ',') AS c0 FROM read_parquet('${all}')`,
        `SELECT string_agg(file, ',') AS c0 FROM glob('${all}')`,
        `SELECT string_agg(file, ',') AS c0 FROM glob('${otherPaths.segments}/**')`,
        `SELECT string_agg(msg, ',') AS c0 FROM '${otherSegment}'`,
        `SELECT CAST(content AS VARCHAR) AS c0 FROM read_blob('${otherPaths.database}')`,
        `SELECT content AS c0 FROM read_text('${otherSegment}')`,
      ]) {
        const out = await seesNothingOfOther(body);
        // What a glob over every account may find is the own account's files; the other's are refused.
        if (!body.includes(all)) assert.ok(out.error, `${body} must fail`);
      }
    });
    it("ATTACH of the other account's database file", async () => {
      const base = 'WITH a AS (SELECT CAST(1 AS BIGINT) AS c0) SELECT c0 FROM a';
      for (const attach of [`ATTACH '${otherPaths.database}' AS b`, `ATTACH '${otherPaths.database}' AS b (READ_ONLY)`]) {
        const out = await run(unchecked, request(`${base}; ${attach}; SELECT * FROM b.${otherHotTable}`));
        assert.ok(out.error, `${attach} must fail`);
      }
      // …and of its segment files, which are DuckDB files too (decision 0025).
      for (const attach of [`ATTACH '${otherSegment}' AS s`, `ATTACH '${otherSegment}' AS s (READ_ONLY)`]) {
        const out = await run(unchecked, request(`${base}; ${attach}; SELECT * FROM s."rows"`));
        assert.ok(out.error, `${attach} must fail`);
      }
      await seesNothingOfOther(
        `SELECT string_agg(database_name || ':' || coalesce(path, ''), ',') AS c0 FROM duckdb_databases()`,
      );
    });
    it("writing into the other account's directory (COPY, EXPORT, a new database file)", async () => {
      const base = 'WITH a AS (SELECT CAST(1 AS BIGINT) AS c0) SELECT c0 FROM a';
      const targets = [path.join(otherPaths.segments, 'planted.parquet'), path.join(otherPaths.dir, 'tmp', 'planted.csv')];
      for (const hostile of [
        `COPY (SELECT 'x' AS msg) TO '${targets[0]}' (FORMAT parquet)`,
        `COPY (SELECT 'x' AS msg) TO '${targets[1]}'`,
        `EXPORT DATABASE '${path.join(otherPaths.dir, 'export')}'`,
        `ATTACH '${path.join(otherPaths.dir, 'new.duckdb')}' AS n`,
      ]) {
        const out = await run(unchecked, request(`${base}; ${hostile}`));
        assert.ok(out.error, `${hostile} must fail`);
      }
      for (const file of [...targets, path.join(otherPaths.dir, 'export'), path.join(otherPaths.dir, 'new.duckdb')])
        assert.equal(existsSync(file), false, file);
    });
    it('duckdb_tables(), information_schema and duckdb_columns list the own account only', async () => {
      for (const body of [
        `SELECT string_agg(database_name || '.' || table_name, ',') AS c0 FROM duckdb_tables()`,
        `SELECT string_agg(table_catalog || '.' || table_name, ',') AS c0 FROM information_schema.tables`,
        `SELECT string_agg(table_name || '.' || column_name, ',') AS c0 FROM duckdb_columns()`,
        `SELECT string_agg(path, ',') AS c0 FROM duckdb_databases()`,
      ]) {
        const out = await seesNothingOfOther(body);
        assert.equal(out.error, undefined, `${body}: ${out.error?.message}`);
        assert.ok(!out.values.join(',').includes(`${otherOnlyTable}`), `${body} lists the other account's table`);
      }
    });
  });
});
