/**
 * The has family on stored term folds (decision 0045), end to end: real workers whose segments
 * store the fold of the long-text column (sealed and compacted segments, plus hot rows, where the
 * fold is computed), queried through the planner — one worker, three workers, and the gateway's
 * merge path — must answer what the term regex answers on the texts themselves (kql_term_match's
 * JS twin, termMatches), and what the same filter answers when it cannot read the fold (after an
 * extend, the column itself is checked). Texts hold every case form of the needles' letters with
 * the characters the fold changes or must keep apart: U+0130/U+0131 (İ/ı), the Kelvin sign, the
 * long s, ß, and NULLs.
 */
import assert from 'node:assert/strict';
import { ChannelPool, TERM_MATCH_AFTER, TERM_MATCH_BEFORE, TERM_MATCH_CASELESS, termMatches } from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import {
  distributedRunner,
  executePlan,
  type FragmentRunner,
  MergeDatabase,
  planQuery,
  SchemaCatalogSource,
  warmQueryEngine,
} from '@strata/gateway';
import type { ExecuteFragmentRequest } from '@strata/proto/query/v1/query';
import type { AppendPart } from '@strata/worker';
import { coordinatorOf, type QueryWorker, startSealedWorker, stopWorker } from './query-workers.js';

const ACCOUNT = '00000000-0000-0000-0000-0000000000f5';
const SCHEMA = 'app.folded';
const BASE = Date.UTC(2024, 4, 1);
const NOW = new Date(BASE + 10 * 86_400_000);

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

const NEEDLES = ['id', 'timeout', 'disk', 'ks', 'sk', 'a-b', 'x.y', '2179ms', 'i', 'k'];

/** Every single-code-point case form of c that RE2 or lower() relates to it. */
function forms(c: string): string[] {
  const out = new Set([c, c.toLowerCase(), c.toUpperCase()]);
  if (c.toLowerCase() === 'i') out.add('\u0130').add('\u0131');
  if (c.toLowerCase() === 'k') out.add('\u212A');
  if (c.toLowerCase() === 's') out.add('\u017F');
  return [...out].filter((v) => [...v].length === 1);
}

const PIECES = [' ', '-', '.', ':', '_', 'x', 'é', 'É', 'ß', '日', '\u00A0', '\u0130', '\u0131', '0', '9', 'ms'];
const rnd = random(45);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
/** A text: pieces and needles in some case form, after a long prefix (the column is long text). */
function text(): string | null {
  if (rnd() < 0.05) return null;
  const parts: string[] = [];
  for (let n = Math.floor(rnd() * 8); n > 0; n--) {
    if (rnd() < 0.5) parts.push(pick(PIECES));
    else parts.push([...pick(NEEDLES)].map((c) => pick(forms(c))).join(''));
  }
  return `request served by the backend pool ${Math.floor(rnd() * 100)}${pick([' ', '|', ''])}${parts.join('')}`;
}

interface Row {
  ts: number;
  seq: number;
  message: string | null;
}

const ROWS: Row[] = Array.from({ length: 1800 }, (_, seq) => ({
  ts: BASE + Math.floor(rnd() * 8 * 86_400_000),
  seq,
  message: text(),
}));

function appendPart(rows: Row[]): AppendPart {
  const lines = rows.map((r) =>
    JSON.stringify({ '@ts': r.ts * 1000, seq: r.seq, ...(r.message !== null ? { message: r.message } : {}) }),
  );
  return {
    schema: SCHEMA,
    columns: [
      { name: 'seq', type: 'Int64' },
      { name: 'message', type: 'String' },
    ],
    rows: Buffer.from(lines.join('\n')),
    rowCount: rows.length,
  };
}

/** A worker with `sealed` batches each sealed into a segment, then `hot` rows left unsealed. */
function startWorker(sealed: Row[][], hot: Row[], requests: ExecuteFragmentRequest[]): Promise<QueryWorker> {
  return startSealedWorker('strata-fold-', ACCOUNT, appendPart, sealed, hot, (req) => requests.push(req));
}

const alnum = (c: string | undefined) => c !== undefined && /^[A-Za-z0-9]$/.test(c);

/** The term regex's answer on the text itself (kql_term_match's JS twin): has, hasprefix, hassuffix. */
function matches(t: string | null, op: 'has' | 'hasprefix' | 'hassuffix', needle: string): boolean {
  const before = op !== 'hassuffix' && alnum(needle[0]);
  const after = op !== 'hasprefix' && alnum(needle[needle.length - 1]);
  const flags = TERM_MATCH_CASELESS | (before ? TERM_MATCH_BEFORE : 0) | (after ? TERM_MATCH_AFTER : 0);
  return termMatches(t ?? '', needle, flags);
}

describe('has family on stored term folds (decision 0045)', function () {
  this.timeout(180_000);
  const channels = new ChannelPool(testIdentity(['gateway']));
  const merge = new MergeDatabase();
  const requests: ExecuteFragmentRequest[] = [];
  let one: QueryWorker[] = [];
  let three: QueryWorker[] = [];

  before(async () => {
    await warmQueryEngine();
    const byTime = [...ROWS].sort((a, b) => a.ts - b.ts);
    const hot = byTime.filter((_, i) => i % 9 === 0);
    const rest = byTime.filter((_, i) => i % 9 !== 0);
    const q = Math.ceil(rest.length / 3);
    one = [
      await startWorker(
        [0, 1, 2].map((i) => rest.slice(i * q, (i + 1) * q)),
        hot,
        requests,
      ),
    ];
    const listed = await one[0]!.storage.listSegments(ACCOUNT);
    await one[0]!.storage.compact({
      accountId: ACCOUNT,
      schema: SCHEMA,
      segmentIds: [listed[0]!.segmentId, listed[1]!.segmentId],
    });
    three = await Promise.all(
      [0, 1, 2].map((w) =>
        startWorker(
          [ROWS.filter((r) => r.seq % 3 === w && r.seq % 2 === 0)],
          ROWS.filter((r) => r.seq % 3 === w && r.seq % 2 === 1),
          requests,
        ),
      ),
    );
  });

  after(async () => {
    channels.close();
    await merge.close();
    for (const w of [...one, ...three]) await stopWorker(w);
  });

  async function count(workers: QueryWorker[], kql: string, mergePath = false): Promise<number> {
    const coordinator = await coordinatorOf(ACCOUNT, workers);
    const catalog = await new SchemaCatalogSource(coordinator, channels).get(ACCOUNT);
    const plan = planQuery(kql, catalog, { now: NOW, storageTime: true });
    const runner = distributedRunner({ coordinator, channels, accountId: ACCOUNT, timeoutMs: 30_000 });
    // Without `single`, the fragment goes through the gateway's merge database.
    const chosen: FragmentRunner = mergePath ? (fragment, signal) => runner(fragment, signal) : runner;
    const r = await executePlan(plan, chosen, { mergeDatabase: merge });
    return Number(r.results[0]!.n);
  }

  it('stores the fold in sealed and compacted segments and reads it for case-insensitive ASCII needles', async () => {
    requests.length = 0;
    await count(one, `${SCHEMA} | where message has "timeout" | summarize n = count()`);
    assert.ok(
      requests.every((r) => r.sourceColumns.some((c) => c.name === '#fold:message')),
      'the fragment reads the fold',
    );
    const scan = await one[0]!.storage.openScan(ACCOUNT, SCHEMA, { folds: ['message'] });
    try {
      // Two segments (a compacted one and a sealed one) read their stored fold; the hot rows compute it.
      const stored = scan!.branches.filter((b) => /, "#fold:message" FROM/.test(b));
      assert.equal(stored.length, 2);
      assert.equal(scan!.branches.length, 3);
    } finally {
      await scan!.release();
    }
  });

  it('answers every has-family operator as the term regex on the texts, on one worker, three, and through the merge', async () => {
    let checked = 0;
    for (const needle of NEEDLES) {
      for (const op of ['has', 'hasprefix', 'hassuffix'] as const) {
        const want = ROWS.filter((r) => matches(r.message, op, needle)).length;
        const wantNot = ROWS.length - want;
        for (const [name, workers, mergePath] of [
          ['one worker', one, false],
          ['three workers', three, false],
          ['merge', one, true],
        ] as const) {
          const got = await count(workers, `${SCHEMA} | where message ${op} "${needle}" | summarize n = count()`, mergePath);
          assert.equal(got, want, `${name}: ${op} "${needle}"`);
          const not = await count(workers, `${SCHEMA} | where message !${op} "${needle}" | summarize n = count()`, mergePath);
          assert.equal(not, wantNot, `${name}: !${op} "${needle}"`);
          checked++;
        }
        // The same filter where it cannot read the fold (after an extend): the column itself.
        const unfolded = await count(one, `${SCHEMA} | extend m = message | where m ${op} "${needle}" | summarize n = count()`);
        assert.equal(unfolded, want, `unfolded: ${op} "${needle}"`);
      }
      if (op0(needle))
        assert.ok(
          ROWS.some((r) => matches(r.message, 'has', needle)),
          `some row holds ${needle}`,
        );
    }
    assert.equal(checked, NEEDLES.length * 3 * 3);
  });

  it('answers has_all and has_any on the fold as each term checked on the texts', async () => {
    for (const terms of [
      ['timeout', 'id'],
      ['disk', 'a-b', 'k'],
      ['x.y', '2179ms'],
    ]) {
      const list = terms.map((t) => `"${t}"`).join(', ');
      const all = ROWS.filter((r) => terms.every((t) => matches(r.message, 'has', t))).length;
      const any = ROWS.filter((r) => terms.some((t) => matches(r.message, 'has', t))).length;
      for (const [name, workers, mergePath] of [
        ['one worker', one, false],
        ['three workers', three, false],
        ['merge', one, true],
      ] as const) {
        assert.equal(
          await count(workers, `${SCHEMA} | where message has_all (${list}) | summarize n = count()`, mergePath),
          all,
          `${name}: has_all ${list}`,
        );
        assert.equal(
          await count(workers, `${SCHEMA} | where message has_any (${list}) | summarize n = count()`, mergePath),
          any,
          `${name}: has_any ${list}`,
        );
      }
    }
  });
});

/** Needles common enough in the generated texts that a count of 0 would mean a broken generator. */
function op0(needle: string): boolean {
  return needle === 'id' || needle === 'timeout' || needle === 'k';
}
