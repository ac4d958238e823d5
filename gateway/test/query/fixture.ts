/**
 * A deterministic log dataset, the same rows loaded on one fake worker and spread over three,
 * and helpers that run a query on both and insist on identical answers. Expected values in the
 * tests are computed from `LOGS` in TypeScript, independently of the engine's SQL.
 */
import assert from 'node:assert/strict';
import { isStrataError, type StrataError } from '@strata/common';
import { executePlan, MergeDatabase, planQuery, type QueryResult, warmQueryEngine } from '../../src/query/engine.js';
import type { KqlType, SchemaCatalog } from '../../src/query/types.js';
import { FakeWorkers, type TestTable } from './fake-workers.js';

export const NOW = new Date(Date.UTC(2024, 2, 10, 12, 0, 0));
const BASE = Date.UTC(2024, 2, 9, 0, 0, 0);

export interface LogRow {
  timestamp: Date;
  host: string | null;
  level: string;
  latencyMs: number | null;
  ratio: number | null;
  ok: boolean | null;
  message: string;
  duration: bigint | null; // ticks
  id: string;
  props: Record<string, unknown> | null;
}

const HOSTS = ['web-1', 'web-2', 'db-1', 'Web-1', null];
const LEVELS = ['Info', 'Warning', 'Error'];
const MESSAGES = [
  'GET /api/users 200 hello-world',
  'failed to connect: Timeout after 30s',
  'Helloworld from worker',
  'user logged in (session opened)',
  'Invalid user admin from 10.0.0.1',
  'cache HIT ratio=0.93',
  '',
];

/** A small deterministic generator (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function makeLogs(count: number): LogRow[] {
  const rnd = random(42);
  const rows: LogRow[] = [];
  for (let i = 0; i < count; i++) {
    const r = rnd();
    rows.push({
      timestamp: new Date(BASE + i * 433_000 + Math.floor(rnd() * 1000)),
      host: HOSTS[i % HOSTS.length] as string | null,
      level: LEVELS[Math.floor(rnd() * 3)] as string,
      latencyMs: i % 11 === 0 ? null : Math.floor(rnd() * 2000) - 100,
      ratio: i % 13 === 0 ? null : Math.round((rnd() * 10 - 2) * 1000) / 1000,
      ok: i % 7 === 0 ? null : r > 0.3,
      message: MESSAGES[i % MESSAGES.length] as string,
      duration: i % 9 === 0 ? null : BigInt(Math.floor(rnd() * 3_600_000)) * 10_000n,
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      props:
        i % 10 === 0
          ? null
          : { user: { id: i % 17, name: `u${i % 5}` }, tags: [`t${i % 3}`, `x${i % 4}`], code: 200 + (i % 4) * 100 },
    });
  }
  return rows;
}

export const LOGS = makeLogs(240);

export const LOG_COLUMNS: { name: keyof LogRow; type: KqlType }[] = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'host', type: 'string' },
  { name: 'level', type: 'string' },
  { name: 'latencyMs', type: 'long' },
  { name: 'ratio', type: 'real' },
  { name: 'ok', type: 'bool' },
  { name: 'message', type: 'string' },
  { name: 'duration', type: 'timespan' },
  { name: 'id', type: 'guid' },
  { name: 'props', type: 'dynamic' },
];

export const EVENTS_COLUMNS: { name: string; type: KqlType }[] = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'host', type: 'string' },
  { name: 'value', type: 'long' },
];

export const EVENTS: { timestamp: Date; host: string; value: number }[] = Array.from({ length: 30 }, (_, i) => ({
  timestamp: new Date(BASE + i * 3_600_000),
  host: ['web-1', 'db-9'][i % 2] as string,
  value: i,
}));

const tables: TestTable[] = [
  { name: 'Logs', columns: LOG_COLUMNS, rows: LOGS.map((r) => LOG_COLUMNS.map((c) => r[c.name] as never)) },
  { name: 'logship.agent.events', columns: EVENTS_COLUMNS, rows: EVENTS.map((e) => [e.timestamp, e.host, e.value]) },
];

export interface Cluster {
  one: FakeWorkers;
  three: FakeWorkers;
  merge: MergeDatabase;
}

let cluster: Promise<Cluster> | undefined;

export function getCluster(): Promise<Cluster> {
  cluster ??= (async () => {
    await warmQueryEngine();
    return { one: await FakeWorkers.create(tables, 1), three: await FakeWorkers.create(tables, 3), merge: new MergeDatabase() };
  })();
  return cluster;
}

export async function closeCluster(): Promise<void> {
  if (!cluster) return;
  const c = await cluster;
  cluster = undefined;
  c.one.close();
  c.three.close();
  await c.merge.close();
}

export interface RunOptions {
  maxRows?: number;
  /** Results must be in the same order on one and three workers (the query sorts). */
  ordered?: boolean;
  /** The query picks arbitrary rows (take without sort): only the row counts must agree. */
  anyRows?: boolean;
  /** Lists in values (make_list) have no defined order. */
  unorderedLists?: boolean;
  /** Only the result columns must agree (rows picked by take/top may differ). */
  columnsOnly?: boolean;
  /** Values of `declare query_parameters(…)` (the request's variables). */
  parameters?: ReadonlyMap<string, unknown>;
}

/**
 * Rows in a comparable form: reals to 12 significant digits (sums over differently split data
 * differ in the last bits), and lists sorted when their order is not defined.
 */
function normalize(value: unknown, lists: boolean): unknown {
  if (typeof value === 'number' && !Number.isInteger(value)) return Number(value.toPrecision(12));
  if (Array.isArray(value)) {
    const items = value.map((v) => normalize(v, lists));
    return lists ? items.map((v) => JSON.stringify(v)).sort() : items;
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, lists)]));
  }
  return value;
}

const canonical = (rows: Record<string, unknown>[], lists: boolean) =>
  rows.map((r) => JSON.stringify(normalize(r, lists))).sort();

/**
 * Runs on one worker and on three; the answers must be the same. The first one-worker run writes
 * every condition into the statements; the other runs leave exact time conjuncts to the scans
 * (storageTime, as the query service plans: on one worker as one whole-query statement, on three
 * as fragments and a merge), so every query here also checks that all of them agree.
 */
export async function run(query: string, options: RunOptions = {}): Promise<QueryResult> {
  const c = await getCluster();
  const planOptions = {
    now: NOW,
    maxRows: options.maxRows ?? 10_000,
    ...(options.parameters ? { parameters: options.parameters } : {}),
  };
  const exec = (workers: FakeWorkers, storageTime: boolean) =>
    executePlan(planQuery(query, workers.catalog, { ...planOptions, storageTime }), workers.runner, { mergeDatabase: c.merge });
  const a = await exec(c.one, false);
  const scanned = await exec(c.one, true);
  const b = await exec(c.three, true);
  for (const [other, what] of [
    [b, 'three workers'],
    [scanned, 'one worker with storage-applied time bounds'],
  ] as const) {
    assert.deepEqual(other.columns, a.columns, `columns differ between one worker and ${what}`);
    if (options.columnsOnly) continue;
    if (options.anyRows) assert.equal(other.results.length, a.results.length, `row counts differ between one worker and ${what}`);
    else if (options.ordered) {
      assert.deepEqual(
        normalize(other.results, !!options.unorderedLists),
        normalize(a.results, !!options.unorderedLists),
        `rows differ between one worker and ${what}`,
      );
    } else {
      const lists = !!options.unorderedLists;
      assert.deepEqual(
        canonical(other.results, lists),
        canonical(a.results, lists),
        `rows differ between one worker and ${what}`,
      );
    }
  }
  return b;
}

/** The single column of a one-row result. */
export async function scalar(query: string): Promise<unknown> {
  const r = await run(query);
  assert.equal(r.results.length, 1, `expected one row from ${query}`);
  const row = r.results[0] as Record<string, unknown>;
  return row[r.header[0] as string];
}

/** Kusto's DateTime rendering of a JS date (ms precision): 7 fractional digits, UTC. */
export function kustoDate(d: Date | number): string {
  return new Date(d).toISOString().replace(/\.(\d{3})Z$/, '.$10000Z');
}

export function sortedJson(values: unknown[]): string[] {
  return values.map((v) => JSON.stringify(v)).sort();
}

export function approx(actual: unknown, expected: number, tolerance = 1e-9): void {
  assert.equal(typeof actual, 'number', `expected a number, got ${JSON.stringify(actual)}`);
  const a = actual as number;
  assert.ok(Math.abs(a - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${a} is not ≈ ${expected}`);
}

/** The 400-kind StrataError planning `query` against `catalog` fails with (fails the test if it plans). */
export function planRefusal(query: string, catalog: SchemaCatalog): StrataError {
  try {
    planQuery(query, catalog);
  } catch (err) {
    assert.ok(isStrataError(err), `not a StrataError: ${String(err)}`);
    assert.equal(err.kind, 'invalid');
    return err;
  }
  assert.fail(`accepted: ${query}`);
}
