import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger, type DataType, type Logger } from '@strata/common';
import type { AppendInput, AppendPart } from '../../src/index.js';
import type { SegmentInfo } from '../../src/storage/catalog.js';
import { FreeSpaceGuard } from '../../src/storage/free-space-guard.js';
import { segmentSources } from '../../src/storage/segment-format.js';
import { StorageEngine, type StorageTuning } from '../../src/storage/storage-engine.js';

export const ACCOUNT = '00000000-0000-0000-0000-0000000000a1';

export function testLog(): Logger {
  return createLogger('test', { level: process.env.STRATA_TEST_LOG ?? 'silent' });
}

export function tempDir(prefix = 'strata-worker-'): { dir: string; cleanup(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The mocha hooks every storage test shares: a fresh data directory per test (`t.dir`), and the
 * engine the test opened (`t.engine`) closed after it, before the directory is removed.
 */
export function storageTestContext(): { dir: string; engine: StorageEngine | undefined } {
  const t: { dir: string; engine: StorageEngine | undefined } = { dir: '', engine: undefined };
  let tmp: ReturnType<typeof tempDir> | undefined;
  beforeEach(() => {
    tmp = tempDir();
    t.dir = tmp.dir;
  });
  afterEach(async () => {
    await t.engine?.close();
    t.engine = undefined;
    tmp?.cleanup();
  });
  return t;
}

/** A guard reading a settable number instead of the file system. */
export function fakeGuard(minimumFreeBytes = 0, free = { bytes: 1e12 }): FreeSpaceGuard {
  return new FreeSpaceGuard({ path: '/', minimumFreeBytes, statFreeBytes: async () => free.bytes, log: testLog() });
}

export async function openEngine(dataPath: string, tuning: Partial<StorageTuning> = {}, guard = fakeGuard()) {
  await guard.check();
  // Maintenance effectively off unless a test asks: seals happen when the test calls sealAll().
  return StorageEngine.open({
    dataPath,
    log: testLog(),
    guard,
    tuning: { maintenanceIntervalMs: 3_600_000, sealAgeMs: 3_600_000, ...tuning },
  });
}

export interface TestEntry {
  /** Entry time in ms since the epoch. */
  ts: number;
  data: Record<string, unknown>;
}

function typeOf(v: unknown, dateFields: ReadonlySet<string>, key: string): DataType | undefined {
  if (v === null || v === undefined) return undefined;
  if (typeof v === 'boolean') return 'Boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? 'Int64' : 'Float64';
  if (typeof v === 'string') return dateFields.has(key) ? 'DateTime' : 'String';
  return 'Dynamic';
}

function widenTest(a: DataType, b: DataType): DataType {
  if (a === b) return a;
  if ((a === 'Int64' && b === 'Float64') || (a === 'Float64' && b === 'Int64')) return 'Float64';
  return 'String';
}

/**
 * Encodes entries the way the gateway does (types per batch, widened; DateTime as µs; String
 * columns hold text), so storage tests do not depend on the gateway.
 */
export function part(schema: string, entries: TestEntry[], dateFields: string[] = []): AppendPart {
  const dates = new Set(dateFields);
  const types = new Map<string, DataType>();
  for (const e of entries)
    for (const [k, v] of Object.entries(e.data)) {
      const t = typeOf(v, dates, k);
      if (!t) continue;
      const prev = types.get(k);
      types.set(k, prev ? widenTest(prev, t) : t);
    }
  const lines = entries.map((e) => {
    const obj: Record<string, unknown> = { '@ts': e.ts * 1000, '@id': randomUUID() };
    for (const [k, v] of Object.entries(e.data)) {
      if (v === null || v === undefined) continue;
      const t = types.get(k)!;
      if (t === 'DateTime') obj[k] = Date.parse(v as string) * 1000;
      else if (t === 'String') obj[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
      else obj[k] = v;
    }
    return JSON.stringify(obj);
  });
  return {
    schema,
    columns: [...types].map(([name, type]) => ({ name, type })),
    rows: Buffer.from(lines.join('\n')),
    rowCount: entries.length,
  };
}

export function input(parts: AppendPart[], extra: Partial<AppendInput> = {}): AppendInput {
  return {
    accountId: ACCOUNT,
    parts,
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: 'gateway-test',
    sourceAddress: '127.0.0.1',
    agent: null,
    ...extra,
  };
}

/** Runs SQL on a scan of one schema and returns JSON-safe rows. */
export async function scanRows(
  engine: StorageEngine,
  schema: string,
  sqlOf: (relation: string) => string = (r) => `SELECT * FROM ${r} ORDER BY "timestamp"`,
  range: { fromMs?: number; toMs?: number; fromUs?: number; toUs?: number; folds?: string[] } = {},
  accountId = ACCOUNT,
): Promise<Record<string, unknown>[]> {
  const scan = await engine.openScan(accountId, schema, range);
  if (!scan) return [];
  try {
    return (await scan.connection.runAndReadAll(sqlOf(scan.relation))).getRowObjectsJson() as Record<string, unknown>[];
  } finally {
    await scan.release();
  }
}

/** Entries with ts base + i seconds and a few typed fields. */
export function entries(n: number, base = Date.UTC(2024, 0, 1), offset = 0): TestEntry[] {
  return Array.from({ length: n }, (_, i) => ({
    ts: base + (offset + i) * 1000,
    data: { seq: offset + i, host: `web-${(offset + i) % 3}`, latency: offset + i + 0.25, ok: (offset + i) % 2 === 0 },
  }));
}

/** Whether a scan's relation (or a part of it) reads segment `s`: its attached file or its Parquet path. */
export function readsSegmentFile(engine: StorageEngine, sql: string, s: SegmentInfo): boolean {
  const file = engine.segmentPath(s);
  return sql.includes(s.format === 'parquet' ? file : segmentSources([file], s.format)[0]!);
}

/**
 * Waits (bounded) until the engine has deleted every segment file it retired: deletion runs in the
 * background once no scan can read a file, and a DuckDB segment file is detached first.
 */
export async function filesReclaimed(engine: StorageEngine, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (engine.pendingFileDeletions > 0) {
    if (Date.now() > deadline) throw new Error(`${engine.pendingFileDeletions} retired segment files not deleted`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A purge fragment matching entries whose `seq` modulo 2 is `remainder`, outputting their ids, as
 * a gateway plans `T | where seq % 2 == remainder`.
 */
export function seqParityPurge(remainder: 0 | 1) {
  return {
    sql: `WITH "s0" AS (SELECT "__INFLOW_ID" AS "c1", "seq" AS "c2" FROM "__strata_source__") SELECT CAST("c1" AS VARCHAR) AS "c1" FROM "s0" WHERE ("c2" % $1) = ${remainder}`,
    params: [{ type: 'BIGINT' as const, value: 2n }],
    sourceColumns: [
      { name: '__INFLOW_ID', type: 'guid' as const },
      { name: 'seq', type: 'long' as const },
    ],
    columns: [{ id: 'c1', type: 'VARCHAR' as const }],
  };
}

/** Runs a purge of `schema` step by step (at most 10 steps of `rowsPerStep`) and checks it finished. */
export async function purgeToEnd(
  engine: StorageEngine,
  schema: string,
  fragment: ReturnType<typeof seqParityPurge>,
  rowsPerStep = 4,
): Promise<void> {
  let finished = false;
  for (let i = 0; i < 10 && !finished; i++)
    finished = (await engine.purgeStep('job', ACCOUNT, schema, fragment, rowsPerStep)).finished;
  if (!finished) throw new Error(`the purge of ${schema} did not finish in 10 steps`);
}

/**
 * Four sealed segments of 10 rows of schema T (segment s: seq s·10 + i at base + s hours + i
 * seconds, as `entries` shifts by its offset) and 5 hot rows after them: the layout the
 * scan-time-bounds and catalog-count tests put bounds across.
 */
export async function loadHourSegments(
  t: { dir: string; engine: StorageEngine | undefined },
  base: number,
): Promise<StorageEngine> {
  const HOUR = 3_600_000;
  const engine = await openEngine(t.dir);
  t.engine = engine;
  for (let s = 0; s < 4; s++) {
    await engine.append(input([part('T', entries(10, base + s * HOUR - s * 10_000, s * 10))]));
    await engine.sealAll();
  }
  await engine.append(input([part('T', entries(5, base + 4 * HOUR - 40_000, 40))]));
  return engine;
}
