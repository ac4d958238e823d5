import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { type TermHint, termKeys } from '@strata/common';
import fc from 'fast-check';
import type { ScanRange } from '../src/storage/scan.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import { segmentsWithTerms } from '../src/storage/term-index.js';
import {
  ACCOUNT,
  input,
  openEngine,
  part,
  purgeToEnd,
  seqParityPurge,
  type TestEntry,
  tempDir,
} from './helpers/storage-fixtures.js';
import { sqlString, termRegex } from './helpers/term-regex.js';

/**
 * The term index (decision 0026) may only ever leave out segments without a match: whatever the
 * texts and terms, a scan given the hints of `has`, `has_cs`, `has_any` or `has_all` must count
 * exactly the matches of a plain scan. Checked on random texts with the characters that make the
 * rules hard (both cases, the Kelvin sign and long s that RE2's (?i) folds to k and s, U+0345 that
 * (?i) takes out of the boundary class, non-ASCII letters and digits, punctuation, nulls), after
 * seal, compaction, a purge rewrite and on segments adopted from another worker.
 */

const WORDS = [
  'timeout',
  'Timeout',
  'TIMEOUT',
  'db',
  '3',
  'kelvin',
  '\u212Aelvin',
  'status',
  '\u017Ftatus',
  'Status',
  'id',
  '\u0130d',
  '\u03B9ota',
  '\u0345x',
  'caf\u00E9',
  'na\u00EFve',
  '\u0663',
  'x2',
  'ok',
  'OK',
  'a',
  'b',
];
const SEPARATORS = [' ', '-', '.', '/', ':', '', '\u00E9', '_', '\u0345', '  '];

const textArb = fc
  .array(fc.tuple(fc.constantFrom(...WORDS), fc.constantFrom(...SEPARATORS)), { minLength: 0, maxLength: 6 })
  .map((parts) => parts.map(([w, s]) => w + s).join(''));

/** Needles: words, pieces of texts, odd strings (punctuation only, empty, non-ASCII). */
const needleArb = fc.oneof(
  fc.constantFrom(...WORDS, 'db-3', 'time', 'out', '-', '', ' ', 'K', 'k', 's', 'S', 'x2 ok', '.id', 'a-b', 'caf'),
  fc
    .tuple(textArb, fc.nat(), fc.nat())
    .map(([t, i, j]) => t.slice(Math.min(i, j) % (t.length + 1), Math.max(i, j) % (t.length + 1))),
);

/**
 * Ids of the segments a scan relation reads: Parquet files by name, DuckDB segment files by the
 * name they are attached under (`seg_<id without dashes>`, decision 0025).
 */
function segmentIdsRead(relation: string): string[] {
  const parquet = [...relation.matchAll(/([0-9a-f-]{36})\.parquet/g)].map((m) => m[1]!);
  const duck = [...relation.matchAll(/"seg_([0-9a-f]{32})"/g)].map((m) =>
    m[1]!.replace(/^(.{8})(.{4})(.{4})(.{4})(.{12})$/, '$1-$2-$3-$4-$5'),
  );
  return [...parquet, ...duck];
}

describe('term index of segments', function () {
  this.timeout(600_000);
  let dirs: ReturnType<typeof tempDir>[] = [];
  let engines: StorageEngine[] = [];

  afterEach(async () => {
    for (const e of engines) await e.close();
    for (const d of dirs) d.cleanup();
    engines = [];
    dirs = [];
  });

  async function engine(): Promise<StorageEngine> {
    const d = tempDir();
    dirs.push(d);
    const e = await openEngine(d.dir);
    engines.push(e);
    return e;
  }

  /** Segments of random texts (message; host; some rows without message), one per group, and hot rows. */
  async function load(e: StorageEngine, groups: string[][], hot: string[]) {
    let ts = Date.UTC(2024, 0, 1);
    const rows = (texts: string[]): TestEntry[] =>
      texts.map((m, i) => ({ ts: ts++, data: { message: i % 7 === 3 ? null : m, host: `web-${i % 3}`, seq: i } }));
    for (const g of groups) {
      await e.append(input([part('T', rows(g))]));
      await e.sealAll();
    }
    if (hot.length > 0) await e.append(input([part('T', rows(hot))]));
  }

  async function count(e: StorageEngine, where: string, range: ScanRange = {}, view?: Parameters<StorageEngine['openScan']>[3]) {
    const scan = await e.openScan(ACCOUNT, 'T', range, view);
    if (!scan) return 0;
    try {
      const rows = (
        await scan.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${scan.relation} WHERE ${where}`)
      ).getRowObjectsJS();
      return (rows[0] as { n: number }).n;
    } finally {
      await scan.release();
    }
  }

  type Case = { where: string; terms: TermHint[] };

  /** The SQL and hints of one term condition, as the gateway would send them. */
  function caseOf(kind: 'has' | 'has_cs' | 'has_any' | 'has_all', needles: string[], column = 'message'): Case {
    if (kind === 'has' || kind === 'has_cs') {
      const n = needles[0] as string;
      const keys = termKeys(n);
      const where = n === '' ? 'true' : `regexp_matches("${column}", ${sqlString(termRegex(n, kind === 'has_cs'))})`;
      return { where, terms: keys ? [{ column, anyOf: [keys] }] : [] };
    }
    const parts = needles.map((n) => (n === '' ? 'true' : `regexp_matches("${column}", ${sqlString(termRegex(n, false))})`));
    const keyed = needles.map(termKeys);
    if (kind === 'has_all')
      return {
        where: parts.length === 0 ? 'true' : parts.join(' AND '),
        terms: keyed.flatMap((k) => (k ? [{ column, anyOf: [k] }] : [])),
      };
    return {
      where: parts.length === 0 ? 'false' : parts.join(' OR '),
      terms: keyed.length > 0 && keyed.every((k) => k !== undefined) ? [{ column, anyOf: keyed as string[][] }] : [],
    };
  }

  const caseArb = fc.oneof(
    fc.tuple(fc.constantFrom('has' as const, 'has_cs' as const), needleArb).map(([k, n]) => caseOf(k, [n])),
    fc
      .tuple(fc.constantFrom('has_any' as const, 'has_all' as const), fc.array(needleArb, { minLength: 1, maxLength: 3 }))
      .map(([k, ns]) => caseOf(k, ns)),
  );

  async function assertNeverMisses(e: StorageEngine, label: string, view?: Parameters<StorageEngine['openScan']>[3]) {
    await fc.assert(
      fc.asyncProperty(caseArb, async (c) => {
        const plain = await count(e, c.where, {}, view);
        const hinted = await count(e, c.where, { terms: c.terms }, view);
        assert.equal(hinted, plain, `${label}: ${c.where} with ${JSON.stringify(c.terms)}`);
      }),
      { numRuns: 150, seed: 18026 },
    );
  }

  const groupsArb = fc.array(fc.array(textArb, { minLength: 1, maxLength: 12 }), { minLength: 4, maxLength: 4 });

  it('never leaves out a segment with a match: seal, compaction, purge', async () => {
    const [groups] = fc.sample(groupsArb, { numRuns: 1, seed: 42 });
    const e = await engine();
    await load(e, groups as string[][], ['hot timeout row', 'db-3']);
    await assertNeverMisses(e, 'sealed');

    const segments = await e.listSegments(ACCOUNT);
    assert.equal(segments.length, 4);
    await e.compact({ accountId: ACCOUNT, schema: 'T', segmentIds: segments.slice(0, 2).map((s) => s.segmentId) });
    await assertNeverMisses(e, 'compacted');

    await purgeToEnd(e, 'T', seqParityPurge(1));
    await assertNeverMisses(e, 'purged');
  });

  it('never leaves out a segment with a match on segments adopted from another worker', async () => {
    const [groups] = fc.sample(groupsArb, { numRuns: 1, seed: 7 });
    const giver = await engine();
    const taker = await engine();
    await load(giver, groups as string[][], []);
    const owned = new Set<string>();
    for (const s of await giver.listSegments(ACCOUNT)) {
      const c = await giver.segmentForCopy(ACCOUNT, s.segmentId);
      assert.ok(
        await taker.adoptSegment(
          { ...c.segment, sha256: c.sha256 },
          '00000000-0000-4000-8000-00000000000a',
          createReadStream(c.file),
        ),
      );
      owned.add(s.segmentId);
    }
    const view = { owned, elsewhere: new Set<string>(), revision: 1 };
    await assertNeverMisses(taker, 'adopted', view);
    // The adopted segments have filters of their own: a term no segment holds leaves none to read.
    assert.equal(await count(taker, 'true', { terms: [{ column: 'message', anyOf: [['zzzabsent']] }] }, view), 0);
  });

  it('reads only the segments that may hold the term, and every segment without a filter', async () => {
    const e = await engine();
    await load(
      e,
      [['upstream timeout calling db-3'], ['slow response'], ['GET /api/users 200'], ['\u212Aelvin \u017Ftatus']],
      ['hot row'],
    );
    const hinted = async (column: string, keys: string[]) => {
      const scan = await e.openScan(ACCOUNT, 'T', { terms: [{ column, anyOf: [keys] }] });
      assert.ok(scan);
      try {
        return segmentIdsRead(scan.relation).length;
      } finally {
        await scan.release();
      }
    };
    assert.equal(await hinted('message', ['timeout']), 1);
    assert.equal(await hinted('message', ['db', '3']), 1);
    assert.equal(await hinted('message', ['kelvin']), 1, 'the Kelvin sign is folded to k');
    assert.equal(await hinted('message', ['status']), 1, 'the long s is folded to s');
    assert.equal(await hinted('message', ['absent']), 0);
    assert.equal(await hinted('host', ['web']), 4);
    assert.equal(await hinted('host', ['timeout']), 0);
    assert.equal(await hinted('seq', ['timeout']), 4, 'a column without a filter (not a String) is read');
    assert.equal(await hinted('nosuchcolumn', ['x']), 4);
    // The hot rows are always read.
    assert.equal(await count(e, 'true', { terms: [{ column: 'message', anyOf: [['absent']] }] }), 1);

    // A segment listed without filter rows (written before the index existed) is read.
    const scan = await e.openScan(ACCOUNT, 'T');
    assert.ok(scan);
    try {
      const [listed] = await e.listSegments(ACCOUNT);
      const older = { ...listed!, segmentId: '00000000-0000-4000-8000-0000000000ff' };
      const kept = await segmentsWithTerms(scan.connection, [older, listed!], [{ column: 'message', anyOf: [['absent']] }]);
      assert.deepEqual(
        kept.map((s) => s.segmentId),
        [older.segmentId],
      );
      // A column without a filter is remembered as such: the next query asks the catalog nothing
      // for it (a column with more keys than a filter takes has none) and still reads the segment.
      let catalogReads = 0;
      const counting = new Proxy(scan.connection, {
        get(target, name) {
          const v = Reflect.get(target, name, target);
          if (name === 'runAndReadAll') catalogReads++;
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
      const noFilter = [{ column: 'unfiltered', anyOf: [['x']] }];
      assert.deepEqual((await segmentsWithTerms(counting, [listed!], noFilter)).length, 1);
      assert.equal(catalogReads, 1);
      assert.deepEqual((await segmentsWithTerms(counting, [listed!], noFilter)).length, 1);
      assert.equal(catalogReads, 1, 'the missing filter was not asked for again');
    } finally {
      await scan.release();
    }
  });

  it('reads segments of a data directory written before the index existed, and answers alike', async () => {
    const [groups] = fc.sample(groupsArb, { numRuns: 1, seed: 99 });
    const d = tempDir();
    dirs.push(d);
    let e = await openEngine(d.dir);
    await load(e, groups as string[][], []);
    const [older] = await e.listSegments(ACCOUNT);
    await e.close();
    // As a worker of the previous version left it: one segment listed without filter rows.
    const db = await DuckDBInstance.create(path.join(d.dir, 'accounts', ACCOUNT, 'hot.duckdb'));
    const conn = await db.connect();
    await conn.run('DELETE FROM strata_term_index WHERE segment_id = $1', [older!.segmentId]);
    conn.closeSync();
    db.closeSync();
    e = await openEngine(d.dir);
    engines.push(e);
    const scan = await e.openScan(ACCOUNT, 'T', { terms: [{ column: 'message', anyOf: [['zzzabsent']] }] });
    assert.ok(scan);
    try {
      assert.deepEqual(segmentIdsRead(scan.relation), [older!.segmentId], 'only the unindexed segment is read');
    } finally {
      await scan.release();
    }
    await assertNeverMisses(e, 'older segment');
  });

  it('agrees with RE2: (?i) folds ASCII letters only with the Kelvin sign and long s, and only narrows the boundary class', async () => {
    // The soundness argument of term-hints.ts rests on these two facts of DuckDB's RE2.
    const e = await engine();
    await load(e, [['x']], []);
    const scan = await e.openScan(ACCOUNT, 'T');
    assert.ok(scan);
    try {
      const cps = `(SELECT i FROM range(1, 1114112) t(i) WHERE i < 55296 OR i > 57343)`;
      const folded = (
        await scan.connection.runAndReadAll(
          `SELECT list(i ORDER BY i) AS l FROM ${cps} WHERE i >= 128 AND regexp_matches(chr(i::INTEGER), '(?i)^[a-z0-9]$')`,
        )
      ).getRowObjectsJS()[0] as { l: bigint[] };
      assert.deepEqual(folded.l.map(Number), [0x17f, 0x212a]);
      const widened = (
        await scan.connection.runAndReadAll(
          `SELECT count(*)::INTEGER AS n FROM ${cps} WHERE regexp_matches(chr(i::INTEGER), '(?i)^[^\\p{L}\\p{N}]$') AND NOT regexp_matches(chr(i::INTEGER), '^[^\\p{L}\\p{N}]$')`,
        )
      ).getRowObjectsJS()[0] as { n: number };
      assert.equal(widened.n, 0);
      const lowered = (
        await scan.connection.runAndReadAll(`SELECT lower(chr(8490)) AS k, replace(lower(chr(383)), chr(383), 's') AS s`)
      ).getRowObjectsJS()[0];
      assert.deepEqual(lowered, { k: 'k', s: 's' });
    } finally {
      await scan.release();
    }
  });
});
