import assert from 'node:assert/strict';
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { StrataError } from '@strata/common';
import type { SegmentView } from '../src/storage/scan.js';
import type { StorageEngine } from '../src/storage/storage-engine.js';
import { ACCOUNT, entries, input, openEngine, part, tempDir } from './helpers/storage-fixtures.js';

const GIVER = '00000000-0000-4000-8000-00000000000a';
const TAKER = '00000000-0000-4000-8000-00000000000b';
/** An account the receiving worker holds too, which must see nothing of the handed-off segment. */
const NEIGHBOUR = '00000000-0000-0000-0000-0000000000c3';

/** count(*) of a schema on one engine with a query view (undefined: a caller with no view). */
async function count(engine: StorageEngine, schema: string, view?: SegmentView & { revision: number }): Promise<number> {
  const scan = await engine.openScan(ACCOUNT, schema, {}, view);
  if (!scan) return 0;
  try {
    const rows = (await scan.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${scan.relation}`)).getRowObjectsJS();
    return (rows[0] as { n: number }).n;
  } finally {
    await scan.release();
  }
}

/** A query's view as the worker `self` reads it: the handed-off segment is owned by `owner`. */
function viewOf(self: string, owner: string | undefined, segmentId: string, revision: number) {
  const owned = new Set<string>();
  const elsewhere = new Set<string>();
  if (owner !== undefined) (owner === self ? owned : elsewhere).add(segmentId);
  return { owned, elsewhere, revision };
}

async function copy(
  from: StorageEngine,
  to: StorageEngine,
  segmentId: string,
  sha?: string,
  as: 'incoming' | 'replica' = 'incoming',
) {
  const c = await from.segmentForCopy(ACCOUNT, segmentId);
  return to.adoptSegment({ ...c.segment, sha256: sha ?? c.sha256 }, GIVER, createReadStream(c.file), as);
}

describe('segment handoff between two workers (storage)', function () {
  this.timeout(60_000);
  let a: ReturnType<typeof tempDir>;
  let b: ReturnType<typeof tempDir>;
  let giver: StorageEngine | undefined;
  let taker: StorageEngine | undefined;

  beforeEach(() => {
    a = tempDir();
    b = tempDir();
  });
  afterEach(async () => {
    await giver?.close();
    await taker?.close();
    giver = undefined;
    taker = undefined;
    a.cleanup();
    b.cleanup();
  });

  it('every phase reads each row exactly once, for views from before and after the handoff', async () => {
    giver = await openEngine(a.dir);
    taker = await openEngine(b.dir);
    await giver.append(input([part('H', entries(300))]));
    await giver.sealAll();
    // The taker has rows of its own in the same schema, with a column the giver lacks.
    await taker.append(input([part('H', [{ ts: Date.UTC(2024, 1, 1), data: { other: 'x' } }])]));
    const [segment] = await giver.listSegments(ACCOUNT);
    const id = segment!.segmentId;
    const before = 7; // a query that read the view before the handoff record existed
    const after = 9; // the handoff record's revision; later views name the owner
    const total = async (v: number, owner: string | undefined) =>
      (await count(giver!, 'H', viewOf(GIVER, owner, id, v))) + (await count(taker!, 'H', viewOf(TAKER, owner, id, v)));

    await giver.markOutgoing(ACCOUNT, [id], TAKER);
    assert.equal(await copy(giver, taker, id), true, 'fetched');
    assert.equal(await copy(giver, taker, id), false, 'a repeated adoption changes nothing');
    // Listed hidden on the taker: views without the record read it from the giver only.
    assert.equal(await total(before, undefined), 301);
    assert.equal(await count(taker, 'H'), 1, 'a caller with no view does not read an incoming copy');
    // The record exists: views that saw it read it from the taker only.
    assert.equal(await total(after, TAKER), 301);

    // After the grace period: the giver unlists it and refuses views older than the handoff.
    const gone = await giver.releaseOutgoing([id], after);
    assert.deepEqual(
      gone.map((s) => s.segmentId),
      [id],
    );
    await assert.rejects(count(giver, 'H', viewOf(GIVER, undefined, id, before)), (err: unknown) => {
      assert.ok(err instanceof StrataError && err.kind === 'unavailable');
      return true;
    });
    assert.equal(await total(after, TAKER), 301);
    await taker.settleIncoming(ACCOUNT, id, after);
    await assert.rejects(count(taker, 'H', viewOf(TAKER, undefined, id, before)), /moved between workers/);
    // Record removed: later views name nothing, and the taker's copy is an ordinary segment.
    assert.equal(await total(after + 1, undefined), 301);
    const [stats] = (await (async () => {
      const scan = (await taker!.openScan(ACCOUNT, 'H'))!;
      try {
        return (
          await scan.connection.runAndReadAll(
            `SELECT count(DISTINCT __INFLOW_ID)::INTEGER AS ids, count(other)::INTEGER AS others FROM ${scan.relation}`,
          )
        ).getRowObjectsJS();
      } finally {
        await scan.release();
      }
    })()) as { ids: number; others: number }[];
    assert.deepEqual(stats, { ids: 301, others: 1 });
  });

  it('creates the schema on a worker that never had it, and refuses a damaged copy', async () => {
    giver = await openEngine(a.dir);
    taker = await openEngine(b.dir);
    await giver.append(input([part('N', entries(50))]));
    await giver.sealAll();
    const [segment] = await giver.listSegments(ACCOUNT);
    await assert.rejects(copy(giver, taker, segment!.segmentId, '0'.repeat(64)), /arrived damaged/);
    assert.deepEqual(await taker.listSegments(ACCOUNT), [], 'nothing listed after a failed copy');
    assert.equal(await copy(giver, taker, segment!.segmentId), true);
    assert.deepEqual(
      taker.listSchemas(ACCOUNT).map((s) => s.schema),
      ['N'],
    );
    const owned = viewOf(TAKER, TAKER, segment!.segmentId, 1);
    assert.equal(await count(taker, 'N', owned), 50);
  });

  it("a handed-off segment lands in its account's directory and catalog on the receiver, out of reach of other accounts", async () => {
    giver = await openEngine(a.dir);
    taker = await openEngine(b.dir);
    await giver.append(input([part('I', entries(20))]));
    await giver.sealAll();
    await taker.append(input([part('I', entries(5))], { accountId: NEIGHBOUR }));
    await taker.sealAll();
    const [segment] = await giver.listSegments(ACCOUNT);
    const id = segment!.segmentId;
    await giver.markOutgoing(ACCOUNT, [id], TAKER);
    assert.equal(await copy(giver, taker, id), true);

    const [landed] = await taker.listSegments(ACCOUNT);
    assert.equal(landed?.segmentId, id);
    assert.equal(landed?.handoff, 'incoming');
    const file = taker.segmentPath(landed!);
    assert.equal(path.dirname(path.dirname(file)), taker.layout.account(ACCOUNT).segments);
    assert.ok(existsSync(file), 'the file is in the account directory on the receiver');
    assert.ok(!(await taker.listSegments(NEIGHBOUR)).some((s) => s.segmentId === id), 'not in the other catalog');
    assert.deepEqual(await taker.dropReplicas([id]), [], 'an incoming copy is not a replica anyone may drop');

    // The neighbour's instance is confined to its own directory: the copy is out of its reach even
    // by path, and a view naming the segment changes nothing of what it reads.
    const scan = (await taker.openScan(NEIGHBOUR, 'I', {}, viewOf(TAKER, TAKER, id, 1)))!;
    try {
      const n = (await scan.connection.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM ${scan.relation}`)).getRowObjectsJS();
      assert.equal((n[0] as { n: number }).n, 5);
      await assert.rejects(scan.connection.runAndReadAll(`SELECT count(*) FROM read_parquet('${file}')`), /Permission/);
    } finally {
      await scan.release();
    }
    assert.equal(await count(taker, 'I', viewOf(TAKER, TAKER, id, 1)), 20);
    const usage = await taker.describe(ACCOUNT);
    assert.deepEqual(
      usage.map((u) => [u.schema, u.segmentRows]),
      [['I', 0]],
      'usage counts the incoming copy where it is read: on the giver until it settles',
    );
    await giver.releaseOutgoing([id], 1);
    await taker.settleIncoming(ACCOUNT, id, 1);
    assert.equal((await taker.describe(ACCOUNT))[0]?.segmentRows, 20);
    assert.equal((await giver.describe(ACCOUNT))[0]?.segments, 0, 'and no longer on the giver');
  });

  it('replicas are hidden; a replica handed to its holder becomes incoming and its old primary cannot drop it', async () => {
    giver = await openEngine(a.dir);
    taker = await openEngine(b.dir);
    await giver.append(input([part('R', entries(40))]));
    await giver.sealAll();
    const [segment] = await giver.listSegments(ACCOUNT);
    const id = segment!.segmentId;
    assert.equal(await copy(giver, taker, id, undefined, 'replica'), true);
    assert.equal(await count(taker, 'R'), 0, 'a replica is not read');
    assert.equal(await count(taker, 'R', viewOf(TAKER, TAKER, id, 1)), 40, 'unless a view names its holder');
    // The giver hands the segment to the worker holding its replica: nothing to fetch.
    await giver.markOutgoing(ACCOUNT, [id], TAKER);
    assert.equal(await copy(giver, taker, id), false);
    assert.deepEqual(await taker.dropReplicas([id], GIVER), [], 'no longer a replica of the giver');
    assert.equal(await count(taker, 'R', viewOf(TAKER, TAKER, id, 2)), 40);
    await giver.releaseOutgoing([id], 2);
    await taker.settleIncoming(ACCOUNT, id, 2);
    assert.equal(await count(taker, 'R', viewOf(TAKER, undefined, id, 3)), 40, 'an ordinary segment of the taker now');
  });

  it('a segment in a handoff is not compacted away; stopped writes are refused with 503', async () => {
    giver = await openEngine(a.dir);
    for (let i = 0; i < 2; i++) {
      await giver.append(input([part('K', entries(10, Date.UTC(2024, 0, 1), i * 10))]));
      await giver.sealAll();
    }
    const ids = (await giver.listSegments(ACCOUNT)).map((s) => s.segmentId);
    await giver.markOutgoing(ACCOUNT, [ids[0]!], TAKER);
    await assert.rejects(giver.compact({ accountId: ACCOUNT, schema: 'K', segmentIds: ids }), (err: unknown) => {
      assert.ok(err instanceof StrataError && err.kind === 'precondition_failed');
      return true;
    });
    // An append already accepted for an account whose store is still opening (its first write
    // here) has committed when stopWrites resolves, so the drain's seal after it misses nothing.
    const accepted = giver.append(input([part('S', entries(3))], { accountId: NEIGHBOUR }));
    await giver.stopWrites('draining');
    assert.equal(giver.hotRows(NEIGHBOUR, 'S'), 3, 'stopWrites waited for the accepted append');
    assert.equal((await accepted).rowsStored, 3);
    await assert.rejects(giver.append(input([part('K', entries(1))])), (err: unknown) => {
      assert.ok(err instanceof StrataError && err.kind === 'unavailable' && err.message === 'draining');
      return true;
    });
  });
});
