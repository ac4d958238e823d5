// What one account's DuckDB instance costs a worker (decision 0015): the first write of N new
// accounts (each opens its directory and instance: create the file, load extensions, register the
// JS functions, confine), the process's resident memory and threads after them, and the start-up
// of a worker holding N accounts (every instance opened again). Active accounts have the worker's
// DuckDB threads; idle ones go back to one (no background thread), which it shows too.
//
//   npm run build && node bench/storage/account-instances.mjs [--accounts 50] [--cores 2]
//
// Data goes to .bench-data/accounts-<time>/ and is removed at the end.
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger } from '@strata/common';
import { FreeSpaceGuard } from '../../worker/dist/src/storage/free-space-guard.js';
import { StorageEngine } from '../../worker/dist/src/storage/storage-engine.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: args } = parseArgs({
  options: { accounts: { type: 'string', default: '50' }, cores: { type: 'string', default: '2' } },
});
const N = Number(args.accounts);
const cores = Number(args.cores);
const dataPath = path.join(root, '.bench-data', `accounts-${Date.now()}`);
const log = createLogger('bench', { level: 'warn' });

function status() {
  const text = readFileSync('/proc/self/status', 'utf8');
  const field = (name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)[1]);
  return { rssMB: field('VmRSS') / 1024, threads: field('Threads') };
}
const accountId = (i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const row = (i) => Buffer.from(JSON.stringify({ '@ts': Date.now() * 1000, '@id': randomUUID(), n: i, msg: `row ${i}` }));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const guard = new FreeSpaceGuard({ path: '/', minimumFreeBytes: 0, statFreeBytes: async () => 1e12, log });
await guard.check();
const open = () =>
  StorageEngine.open({ dataPath, log, guard, cores, tuning: { maintenanceIntervalMs: 200, idleThreadsMs: 2_000 } });
try {
  let engine = await open();
  const before = status();
  const firstWrite = [];
  const nextWrite = [];
  for (let i = 0; i < N; i++) {
    const input = (k) => ({
      accountId: accountId(i),
      parts: [
        {
          schema: 'app.logs',
          columns: [
            { name: 'n', type: 'Int64' },
            { name: 'msg', type: 'String' },
          ],
          rows: row(k),
          rowCount: 1,
        },
      ],
      inflowTimestampUs: Date.now() * 1000,
      inflowHost: 'bench',
      sourceAddress: '127.0.0.1',
      agent: null,
    });
    let t = performance.now();
    await engine.append(input(i));
    firstWrite.push(performance.now() - t);
    t = performance.now();
    await engine.append(input(i + 1));
    nextWrite.push(performance.now() - t);
  }
  const after = status();
  console.log(`cores ${cores} (DuckDB threads per instance ${Math.max(1, cores - 1)}), ${N} accounts`);
  console.log(`first write of a new account (opens its instance): median ${median(firstWrite).toFixed(1)} ms`);
  console.log(`next write of the same account: median ${median(nextWrite).toFixed(2)} ms`);
  console.log(
    `process: ${before.rssMB.toFixed(0)} MB, ${before.threads} threads before; ${after.rssMB.toFixed(0)} MB, ${after.threads} threads with ${N} instances ` +
      `(${((after.rssMB - before.rssMB) / N).toFixed(1)} MB and ${((after.threads - before.threads) / N).toFixed(1)} threads per instance)`,
  );
  // Idle accounts go back to one DuckDB thread (no background threads).
  const deadline = Date.now() + 60_000;
  for (let i = 0; i < N; i++)
    while (engine.accountThreads(accountId(i)) !== 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  const idle = status();
  console.log(`idle (every account back to one DuckDB thread): ${idle.rssMB.toFixed(0)} MB, ${idle.threads} threads`);
  let t = performance.now();
  await engine.close();
  console.log(`close of ${N} instances (checkpoint each): ${(performance.now() - t).toFixed(0)} ms`);
  t = performance.now();
  engine = await open();
  console.log(`start-up with ${N} accounts (every instance opened): ${(performance.now() - t).toFixed(0)} ms`);
  await engine.close();
} finally {
  rmSync(dataPath, { recursive: true, force: true });
}
