import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelPool } from '@strata/common';
import { testIdentity } from '@strata/common/testing';
import { ColumnType, IngestServiceService } from '@strata/proto/ingest/v1/ingest';
import { ACCOUNT, openEngine, scanRows, tempDir } from './helpers/storage-fixtures.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'durability-child.js');
const ROWS_PER_BATCH = 500;

function startChild(dataPath: string): Promise<{ child: ChildProcess; endpoint: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, dataPath], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('worker child did not start'));
    }, 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /READY (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, endpoint: m[1]! });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker child exited early with ${code}`));
    });
  });
}

function batch(b: number) {
  const lines = Array.from({ length: ROWS_PER_BATCH }, (_, i) =>
    JSON.stringify({
      '@ts': (Date.UTC(2024, 0, 1) + b * 1000 + i) * 1000,
      '@id': randomUUID(),
      b,
      i,
      text: `batch ${b} row ${i}`,
    }),
  );
  return {
    accountId: ACCOUNT,
    parts: [
      {
        schema: 'Durable',
        columns: [
          { name: 'b', type: ColumnType.COLUMN_TYPE_INT64 },
          { name: 'i', type: ColumnType.COLUMN_TYPE_INT64 },
          { name: 'text', type: ColumnType.COLUMN_TYPE_STRING },
        ],
        rows: Buffer.from(lines.join('\n')),
        rowCount: ROWS_PER_BATCH,
      },
    ],
    inflowTimestampUs: Date.now() * 1000,
    inflowHost: 'gw',
    sourceAddress: '127.0.0.1',
    agent: '',
    idempotencyKey: `batch-${b}`,
    contentHash: '',
    keyViewRevision: 0,
  };
}

describe('durability', function () {
  this.timeout(120_000);

  it('a worker killed with SIGKILL during a stream of acknowledged batches loses none of them after restart', async () => {
    const tmp = tempDir();
    const channels = new ChannelPool(testIdentity(['gateway']));
    const acked = new Set<number>();
    const sent = new Set<number>();
    let next = 0;
    try {
      for (let round = 0; round < 3; round++) {
        const { child, endpoint } = await startChild(tmp.dir);
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        const client = channels.client(IngestServiceService, endpoint);
        const killAfter = 15 + round * 10; // acknowledged batches this round before the kill
        const ackedAtStart = acked.size;
        let stop = false;
        const sender = async () => {
          while (!stop) {
            const b = next++;
            sent.add(b);
            try {
              const r = await client.append(batch(b), { timeoutMs: 10_000 });
              assert.equal(r.rowsStored, ROWS_PER_BATCH);
              acked.add(b);
              if (acked.size - ackedAtStart >= killAfter && !stop) {
                stop = true;
                child.kill('SIGKILL'); // other senders' batches are in flight now
              }
            } catch {
              stop = true; // the kill: unacknowledged batches may or may not be stored
            }
          }
        };
        await Promise.all([sender(), sender(), sender(), sender()]);
        await exited;
        channels.drop(endpoint);
      }
      assert.ok(acked.size >= 45);

      // The restarted storage has every acknowledged batch, whole; others whole or not at all.
      const engine = await openEngine(tmp.dir);
      try {
        const counts = await scanRows(
          engine,
          'Durable',
          (r) => `SELECT b::INTEGER AS b, count(*)::INTEGER AS n, count(DISTINCT i)::INTEGER AS d FROM ${r} GROUP BY b`,
        );
        const byBatch = new Map(counts.map((c) => [c.b as number, c]));
        for (const b of acked) {
          assert.deepEqual(byBatch.get(b), { b, n: ROWS_PER_BATCH, d: ROWS_PER_BATCH }, `acknowledged batch ${b}`);
        }
        for (const [b, c] of byBatch) {
          assert.ok(sent.has(b));
          assert.equal(c.n, ROWS_PER_BATCH, `batch ${b} is whole`);
        }
        assert.ok((await engine.listSegments(ACCOUNT)).length > 0, 'seals happened during the stream');
      } finally {
        await engine.close();
      }
    } finally {
      channels.close();
      tmp.cleanup();
    }
  });
});
