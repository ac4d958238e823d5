// Ingest benchmark: realistic entries (11 data fields, ~1 MB JSON batches) sent end to end over
// HTTP to a local Strata deployment, the same rows loaded directly into a DuckDB file, and the
// same batch bodies inserted into ClickHouse (chDB, bench/peers, installed on first use) with typed
// columns and with a JSON column, in one run. Prints rows/s and rows per CPU-second for each and
// the ratios, and the resident memory of the gateway and the worker.
//
//   npm run build && node bench/ingest/run.mjs [--rows 1000000] [--concurrency 4] [--no-peers]
//
// The deployment runs each role in its own process (`strata start --config …`), coordinated by a
// local etcd (/usr/bin/etcd, Debian's etcd-server), so CPU time and memory are measured per role
// from /proc. Data goes to .bench-data/ingest-<time>/ and is removed afterwards.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { BenchProcesses, freePort } from '../bench-processes.mjs';
import { entry } from './bench-entries.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    concurrency: { type: 'string', default: '4' },
    'batch-bytes': { type: 'string', default: String(1024 * 1024) },
    keep: { type: 'boolean', default: false },
    'no-peers': { type: 'boolean', default: false },
  },
});
const TOTAL_ROWS = Number(args.rows);
const CONCURRENCY = Number(args.concurrency);
const BATCH_BYTES = Number(args['batch-bytes']);
const NO_PEERS = args['no-peers'];
const ACCOUNT = '00000000-0000-0000-0000-000000000000';
const CLK_TCK = 100; // Linux USER_HZ

const work = path.join(root, '.bench-data', `ingest-${Date.now()}`);
mkdirSync(work, { recursive: true });

// ── data (bench-entries.mjs) ─────────────────────────────────────────────────────────────────────

/** JSON bodies of about BATCH_BYTES each, built before any timing starts. */
function buildBatches() {
  const t0 = Date.UTC(2026, 0, 1);
  const batches = [];
  let parts = [];
  let size = 2;
  let rows = 0;
  for (let i = 0; i < TOTAL_ROWS; i++) {
    const json = JSON.stringify(entry(i, t0));
    if (size + json.length + 1 > BATCH_BYTES && parts.length > 0) {
      batches.push({ body: Buffer.from(`[${parts.join(',')}]`), rows: parts.length });
      parts = [];
      size = 2;
    }
    parts.push(json);
    size += json.length + 1;
    rows++;
  }
  if (parts.length) batches.push({ body: Buffer.from(`[${parts.join(',')}]`), rows: parts.length });
  return { batches, rows };
}

// ── processes ───────────────────────────────────────────────────────────────────────────────────
function procStats(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLK_TCK; // utime + stime
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { cpuSeconds, rssMB: kb('VmRSS') / 1024, peakRssMB: kb('VmHWM') / 1024 };
}

/** CPU seconds per thread name (main JS thread, libuv pool, DuckDB workers, …) of a process. */
function threadCpu(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const name = tid === String(pid) ? 'JS main thread' : `other threads (${comm})`;
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / CLK_TCK;
    } catch {}
  }
  return out;
}

function threadDelta(a, b) {
  return Object.entries(b)
    .map(([k, v]) => [k, v - (a[k] ?? 0)])
    .filter(([, v]) => v >= 0.05)
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(', ');
}

const processes = new BenchProcesses();
// BENCH_PROFILE=<role> writes a V8 CPU profile of that role's process to .bench-data/profiles.
// BENCH_NODE_ARGS_<ROLE> (e.g. BENCH_NODE_ARGS_GATEWAY='--trace-gc') passes V8/Node flags that
// NODE_OPTIONS refuses to one role's command line.
function start(name, command, argv, env = {}) {
  const extra = process.env[`BENCH_NODE_ARGS_${name.toUpperCase()}`];
  if (extra) argv = [...extra.split(' ').filter(Boolean), ...argv];
  if (process.env.BENCH_PROFILE === name)
    argv = ['--cpu-prof', `--cpu-prof-dir=${path.join(root, '.bench-data', 'profiles')}`, ...argv];
  return processes.start(name, command, argv, { cwd: root, env });
}

const stopAll = () => processes.stopAll();

async function waitFor(what, probe, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await probe();
      if (v) return v;
    } catch {}
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main() {
  console.log(`building ${TOTAL_ROWS} entries in ~${(BATCH_BYTES / 1048576).toFixed(1)} MB batches…`);
  const { batches, rows } = buildBatches();
  const bytes = batches.reduce((n, b) => n + b.body.length, 0);
  console.log(
    `${batches.length} batches, ${rows} rows, ${(bytes / 1048576).toFixed(0)} MB of JSON, ${Math.round(bytes / rows)} bytes/row`,
  );

  // etcd + one process per role.
  const [etcdClient, etcdPeer, masterPort, workerPort, httpPort] = await Promise.all([1, 2, 3, 4, 5].map(freePort));
  start('etcd', '/usr/bin/etcd', [
    '--data-dir',
    path.join(work, 'etcd'),
    '--listen-client-urls',
    `http://127.0.0.1:${etcdClient}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${etcdClient}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${etcdPeer}`,
    '--initial-cluster',
    `default=http://127.0.0.1:${etcdPeer}`,
    '--log-level',
    'error',
  ]);
  const password = randomBytes(12).toString('hex');
  const common = {
    dataRoot: path.join(work, 'data'),
    log: { level: 'warn' },
    ops: { enable: false },
    etcd: { endpoints: [`http://127.0.0.1:${etcdClient}`], prefix: '/strata-bench' },
    auth: { jwt: { signingKey: randomBytes(32).toString('hex') } },
  };
  const configs = {
    database: {
      ...common,
      database: { enable: true, endpoint: `127.0.0.1:${masterPort}` },
      setupService: {
        enable: true,
        provision: true,
        accounts: [{ accountId: ACCOUNT, accountName: 'default' }],
        users: [
          {
            userId: '00000000-0000-0000-0000-00000000beef',
            username: 'bench',
            password,
            defaultAccounts: [{ accountName: 'default', userPermissions: ['Service.Account.Inflow'] }],
          },
        ],
      },
    },
    backend: { ...common, backend: { enable: true, endpoint: `127.0.0.1:${workerPort}`, minimumFreeSpaceBytes: 0 } },
    gateway: { ...common, gateway: { enable: true, host: '127.0.0.1', port: httpPort } },
  };
  const procs = {};
  for (const [role, config] of Object.entries(configs)) {
    const file = path.join(work, `${role}.json`);
    writeFileSync(file, JSON.stringify(config));
    // BENCH_NODE_OPTIONS_<ROLE> (e.g. BENCH_NODE_OPTIONS_GATEWAY) tries V8 flags on one role.
    const nodeOptions = process.env[`BENCH_NODE_OPTIONS_${role.toUpperCase()}`];
    procs[role] = start(
      role,
      process.execPath,
      [path.join(root, 'deploy', 'bin', 'strata.js'), 'start', '--config', file],
      nodeOptions ? { NODE_OPTIONS: nodeOptions } : {},
    );
  }
  const base = `http://127.0.0.1:${httpPort}`;
  const token = await waitFor('sign-in', async () => {
    const res = await fetch(`${base}/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'bench', password }),
    });
    return res.ok ? (await res.json()).token : undefined;
  });
  // A lean keep-alive HTTP client: the bench client shares the two cores with the servers.
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const send = (b) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        `${base}/inflow/${ACCOUNT}`,
        {
          method: 'PUT',
          agent,
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': b.body.length },
        },
        (res) => {
          const chunks = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () =>
            res.statusCode === 200
              ? resolve()
              : reject(new Error(`inflow answered ${res.statusCode}: ${Buffer.concat(chunks).toString()}`)),
          );
        },
      );
      req.on('error', reject);
      req.end(b.body);
    });
  await waitFor('a writable worker', async () => {
    await send(batches[0]);
    return true;
  });

  const before = {
    gateway: procStats(procs.gateway.pid),
    backend: procStats(procs.backend.pid),
    database: procStats(procs.database.pid),
  };
  const threadsBefore = { gateway: threadCpu(procs.gateway.pid), backend: threadCpu(procs.backend.pid) };
  const clientCpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) await send(batches[next++]);
    }),
  );
  const e2eSeconds = (performance.now() - t0) / 1000;
  const clientCpu = process.cpuUsage(clientCpu0);
  const after = {
    gateway: procStats(procs.gateway.pid),
    backend: procStats(procs.backend.pid),
    database: procStats(procs.database.pid),
  };
  const cpu = (role) => after[role].cpuSeconds - before[role].cpuSeconds;
  const threads = {
    gateway: threadDelta(threadsBefore.gateway, threadCpu(procs.gateway.pid)),
    backend: threadDelta(threadsBefore.backend, threadCpu(procs.backend.pid)),
  };
  agent.destroy();
  await stopAll();

  // Every row stored (plus the warm-up batch), read back from the worker's storage after its stop.
  const { StorageEngine, FreeSpaceGuard } = await import(path.join(root, 'worker', 'dist', 'src', 'index.js'));
  const { createLogger } = await import(path.join(root, 'common', 'dist', 'src', 'index.js'));
  const log = createLogger('bench', { level: 'error' });
  const guard = new FreeSpaceGuard({ path: work, minimumFreeBytes: 0, log });
  await guard.check();
  const storage = await StorageEngine.open({ dataPath: path.join(work, 'data', 'backend'), log, guard });
  const scan = await storage.openScan(ACCOUNT, 'Bench.Http');
  const stored = Number(
    (await scan.connection.runAndReadAll(`SELECT count(*) AS n FROM ${scan.relation}`)).getRowObjectsJS()[0].n,
  );
  await scan.release();
  await storage.close();
  const expected = rows + batches[0].rows;

  // Direct load of the same rows: the same JSON batch files into one DuckDB file with DuckDB's
  // JSON reader, one bulk transaction plus CHECKPOINT (no HTTP, no validation, no per-batch commit).
  const files = path.join(work, 'direct');
  mkdirSync(files, { recursive: true });
  const batchFiles = batches.map((b, i) => {
    const file = path.join(files, `b${String(i).padStart(6, '0')}.json`);
    writeFileSync(file, b.body);
    return file;
  });
  const dataStruct =
    'STRUCT(host VARCHAR, service VARCHAR, level VARCHAR, method VARCHAR, path VARCHAR, status BIGINT, latencyMs DOUBLE, bytes BIGINT, userId VARCHAR, traceId VARCHAR, success BOOLEAN)';
  const db = await DuckDBInstance.create(path.join(work, 'direct.duckdb'));
  const conn = await db.connect();
  await conn.run(
    `CREATE TABLE direct ("timestamp" TIMESTAMP, host VARCHAR, service VARCHAR, level VARCHAR, method VARCHAR, path VARCHAR,
       status BIGINT, latencyMs DOUBLE, bytes BIGINT, userId VARCHAR, traceId VARCHAR, success BOOLEAN)`,
  );
  const directCpu0 = process.cpuUsage();
  const d0 = performance.now();
  await conn.run(
    `INSERT INTO direct SELECT "timestamp"::TIMESTAMP, data.host, data.service, data.level, data.method, data.path, data.status,
       data.latencyMs, data.bytes, data.userId, data.traceId, data.success
     FROM read_json('${files}/*.json', format = 'array', columns = {schema: 'VARCHAR', "timestamp": 'VARCHAR', data: '${dataStruct}'})`,
  );
  await conn.run('CHECKPOINT');
  const directSeconds = (performance.now() - d0) / 1000;
  const directCpuUs = process.cpuUsage(directCpu0);
  const directRows = Number((await conn.runAndReadAll('SELECT count(*) AS n FROM direct')).getRowObjectsJS()[0].n);

  // The same, one durable transaction per batch (each INSERT commits), as the inflow path commits.
  await conn.run('CREATE TABLE per_batch AS SELECT * FROM direct LIMIT 0');
  const perBatchCpu0 = process.cpuUsage();
  const p0 = performance.now();
  for (const file of batchFiles) {
    await conn.run(
      `INSERT INTO per_batch SELECT "timestamp"::TIMESTAMP, data.host, data.service, data.level, data.method, data.path, data.status,
         data.latencyMs, data.bytes, data.userId, data.traceId, data.success
       FROM read_json('${file}', format = 'array', columns = {schema: 'VARCHAR', "timestamp": 'VARCHAR', data: '${dataStruct}'})`,
    );
  }
  await conn.run('CHECKPOINT');
  const perBatchSeconds = (performance.now() - p0) / 1000;
  const perBatchCpuUs = process.cpuUsage(perBatchCpu0);
  conn.closeSync();
  db.closeSync();

  // The peer: ClickHouse (chDB, in this process) inserting the very same batch bodies, one INSERT
  // per batch (each a part, as the inflow path commits per batch), into typed columns and into its
  // schemaless JSON column. CPU is this process's (chDB's threads, including background merges
  // while the inserts run).
  const peers = NO_PEERS ? [] : await clickHouseInserts(batches, path.join(work, 'clickhouse'));

  const e2eRate = rows / e2eSeconds;
  const directRate = directRows / directSeconds;
  const serverCpu = cpu('gateway') + cpu('backend');
  const clientCpuSeconds = (clientCpu.user + clientCpu.system) / 1e6;
  const fmt = (n) => Math.round(n).toLocaleString('en-US');
  console.log('');
  console.log(`machine: ${(await import('node:os')).cpus().length} cores, node ${process.version}`);
  console.log(`rows stored: ${stored} of ${expected} sent (${stored === expected ? 'all' : 'MISMATCH'})`);
  console.log(
    `end to end (HTTP → gateway → gRPC → worker, durable): ${fmt(e2eRate)} rows/s  (${rows} rows in ${e2eSeconds.toFixed(2)} s, ${CONCURRENCY} requests in flight, ${(bytes / 1048576 / e2eSeconds).toFixed(1)} MB/s)`,
  );
  console.log(
    `direct DuckDB load (read_json → file, 1 transaction):  ${fmt(directRate)} rows/s  (${directRows} rows in ${directSeconds.toFixed(2)} s)`,
  );
  console.log(`ratio end to end / direct: ${(e2eRate / directRate).toFixed(2)}`);
  const perBatchRate = rows / perBatchSeconds;
  console.log(
    `direct DuckDB load, one commit per batch:             ${fmt(perBatchRate)} rows/s  (ratio end to end / this: ${(e2eRate / perBatchRate).toFixed(2)}; ${fmt(rows / ((perBatchCpuUs.user + perBatchCpuUs.system) / 1e6))} rows per CPU-second)`,
  );
  console.log(
    `CPU seconds: gateway ${cpu('gateway').toFixed(1)}, worker ${cpu('backend').toFixed(1)}, master ${cpu('database').toFixed(1)}, bench client ${clientCpuSeconds.toFixed(1)}`,
  );
  console.log(`  by thread: gateway [${threads.gateway}]; worker [${threads.backend}]`);
  console.log(
    `rows per CPU-second, gateway + worker: ${fmt(rows / serverCpu)}  (incl. master and client: ${fmt(rows / (serverCpu + cpu('database') + clientCpuSeconds))})`,
  );
  console.log(`rows per CPU-second, direct DuckDB load: ${fmt(directRows / ((directCpuUs.user + directCpuUs.system) / 1e6))}`);
  console.log(
    `resident memory: gateway ${after.gateway.rssMB.toFixed(0)} MB (peak ${after.gateway.peakRssMB.toFixed(0)} MB), worker ${after.backend.rssMB.toFixed(0)} MB (peak ${after.backend.peakRssMB.toFixed(0)} MB)`,
  );
  for (const p of peers) {
    console.log(
      `ClickHouse (chDB) insert, ${p.name}: ${fmt(p.rows / p.seconds)} rows/s, ${fmt(p.rows / p.cpuSeconds)} rows per CPU-second (${p.rows} rows in ${p.seconds.toFixed(2)} s); Strata/ClickHouse: ${(e2eRate / (p.rows / p.seconds)).toFixed(2)} rows/s, ${(rows / serverCpu / (p.rows / p.cpuSeconds)).toFixed(2)} rows per CPU-second; ${(p.bytes / 1e6).toFixed(0)} MB on disk; ClickHouse tracked memory ${p.memoryMB.toFixed(0)} MB`,
    );
  }
  if (stored !== expected) process.exitCode = 1;
  for (const p of peers) if (p.stored !== rows) process.exitCode = 1;
}

/** ClickHouse inserts of the same batches into typed columns and a JSON column (bench/peers). */
async function clickHouseInserts(batches, dir) {
  const { loadChdb } = await import('../peers/peers.mjs');
  const { Session } = loadChdb();
  mkdirSync(dir, { recursive: true });
  const session = new Session(dir);
  const tables = [
    [
      'typed columns',
      'typed',
      `Tuple(host String, service String, level String, method String, path String, status Int64, latencyMs Float64,
         bytes Int64, userId String, traceId String, success Bool)`,
    ],
    ['JSON column', 'js', 'JSON'],
  ];
  const out = [];
  for (const [name, table, dataType] of tables) {
    session.query(
      `CREATE TABLE ${table} (schema LowCardinality(String), timestamp DateTime64(6, 'UTC'), data ${dataType}) ENGINE = MergeTree ORDER BY timestamp`,
    );
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (const b of batches)
      session.query(`INSERT INTO ${table} SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow ${b.body}`);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const [stored, bytes] = session
      .query(`SELECT sum(rows), sum(bytes_on_disk) FROM system.parts WHERE table = '${table}' AND active`, 'TSV')
      .trim()
      .split('\t')
      .map(Number);
    const memoryMB =
      Number(session.query(`SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'`, 'TSV').trim()) / 1048576;
    out.push({
      name,
      rows: batches.reduce((n, b) => n + b.rows, 0),
      seconds,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      stored,
      bytes,
      memoryMB,
    });
  }
  session.cleanup?.();
  return out;
}

try {
  await main();
} catch (err) {
  console.error(err);
  process.exitCode = 1;
} finally {
  await stopAll();
  if (!args.keep) rmSync(work, { recursive: true, force: true });
}
