// The query benches' shared parts: realistic log rows loaded into worker storage (sealed Parquet
// segments), an in-process cluster (master, workers, gateway) with a lean HTTP client, the typical
// queries with their hand-written DuckDB SQL, and interleaved timing. Used by query-bench.mjs
// (service vs direct SQL) and cost-breakdown.mjs (where the service's extra time goes).
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ChannelPool, createCoordinator, createLogger, loadConfigObject, loadInternalIdentity, ROLE_NAMES } from '@strata/common';
import { startGateway } from '@strata/gateway';
import { startMaster } from '@strata/master';
import { startWorkerWith } from '@strata/worker';
import { BenchProcesses, freePort } from '../bench-processes.mjs';

/** `--name value` from the command line, as a number. */
export function numberArg(name, def) {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where a bench keeps its data (git-ignored; the bench removes it at the end). */
export const DATA = path.join(ROOT, '.bench-data', `query-${process.pid}`);
export const ACCOUNT = '00000000-0000-0000-0000-0000000be9c4';
export const SCHEMA = 'bench.requests';
const USER = { userId: '00000000-0000-0000-0000-0000000be001', username: 'bench', password: 'bench-password-1' };
const NOW = Date.now();
const SETUP = {
  enable: true,
  provision: true,
  accounts: [{ accountId: ACCOUNT, accountName: 'bench' }],
  users: [{ ...USER, defaultAccounts: [{ accountName: 'bench', userPermissions: ['Service.Account.Query'] }] }],
};
export const agent = new http.Agent({ keepAlive: true });
const SPAN_MS = 7 * 86_400_000;

// ---------------------------------------------------------------- data

function rng(seed) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HOSTS = Array.from({ length: 10 }, (_, i) => `web-${String(i + 1).padStart(2, '0')}`);
const PATHS = ['/api/users', '/api/orders', '/api/items', '/api/search', '/health', '/login', '/api/cart', '/api/pay'];
const METHODS = ['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE'];

/** Row i of the data set (deterministic), as an NDJSON line for the storage engine. */
function makeRow(i, r, ROWS) {
  const ts = NOW - SPAN_MS + Math.floor((i / ROWS) * SPAN_MS) + Math.floor(r() * 1000);
  const u = r();
  const level = u < 0.05 ? 'Error' : u < 0.15 ? 'Warning' : 'Info';
  const status = level === 'Error' ? 500 : u < 0.1 ? 404 : 200;
  const latencyMs = Math.floor(-Math.log(1 - r()) * 80) + (level === 'Error' ? 1000 : 0);
  const host = HOSTS[Math.floor(r() ** 2 * HOSTS.length)];
  const method = METHODS[Math.floor(r() * METHODS.length)];
  const p = PATHS[Math.floor(r() * PATHS.length)];
  const message =
    level === 'Error'
      ? `upstream timeout after ${latencyMs}ms calling db-${Math.floor(r() * 4)}`
      : level === 'Warning'
        ? `slow response ${latencyMs}ms for ${method} ${p}`
        : `${method} ${p}/${Math.floor(r() * 10_000)} ${status} in ${latencyMs}ms`;
  return JSON.stringify({
    '@ts': ts * 1000,
    '@id': randomUUID(),
    host,
    level,
    status,
    method,
    path: p,
    latencyMs,
    userId: `u${Math.floor(r() * 10_000)}`,
    message,
  });
}

export const COLUMNS = [
  { name: 'host', type: 'String' },
  { name: 'level', type: 'String' },
  { name: 'status', type: 'Int64' },
  { name: 'method', type: 'String' },
  { name: 'path', type: 'String' },
  { name: 'latencyMs', type: 'Int64' },
  { name: 'userId', type: 'String' },
  { name: 'message', type: 'String' },
];

/**
 * Loads every `stride`-th row of a data set of ROWS rows, from `offset`, into a worker's storage.
 * `hotTail`: the last this many of them (the newest) stay hot rows instead of being sealed (keep
 * it below the worker's seal threshold of 250,000 rows, and its seal age above the bench's length:
 * startCluster's `sealAgeSeconds`).
 */
export async function loadRows(storage, ROWS, offset, stride, { hotTail = 0 } = {}) {
  const r = rng(7 + offset);
  const BATCH = 200_000;
  const SEAL_EVERY = 1_000_000;
  let lines = [];
  let sinceSeal = 0;
  let loaded = 0;
  const flush = async () => {
    if (lines.length === 0) return;
    await storage.append({
      accountId: ACCOUNT,
      parts: [{ schema: SCHEMA, columns: COLUMNS, rows: Buffer.from(lines.join('\n')), rowCount: lines.length }],
      inflowTimestampUs: NOW * 1000,
      inflowHost: 'bench',
      sourceAddress: '127.0.0.1',
      agent: null,
    });
    loaded += lines.length;
    sinceSeal += lines.length;
    lines = [];
    if (sinceSeal >= SEAL_EVERY) {
      await storage.sealAll();
      sinceSeal = 0;
    }
  };
  const total = Math.ceil((ROWS - offset) / stride);
  let n = 0;
  for (let i = offset; i < ROWS; i += stride) {
    lines.push(makeRow(i, r, ROWS));
    n++;
    if (lines.length >= BATCH || n === total - hotTail) await flush();
    if (n === total - hotTail) {
      await storage.sealAll();
      sinceSeal = -Infinity; // the tail stays hot
    }
  }
  if (hotTail > 0) {
    await flush();
    return loaded;
  }
  await flush();
  await storage.sealAll();
  return loaded;
}

// ---------------------------------------------------------------- cluster

/**
 * An in-process cluster: master, `workerCount` workers and the gateway in this process. With
 * `etcd: true` the roles coordinate through a real etcd process (as deployed: placements, worker
 * registrations and handoffs are etcd reads), otherwise through the embedded coordinator.
 */
export async function startCluster(name, workerCount, { etcd = false, sealAgeSeconds, workerDataPaths } = {}) {
  const root = path.join(DATA, name);
  mkdirSync(root, { recursive: true });
  const processes = new BenchProcesses();
  let etcdConfig;
  if (etcd) {
    const [client, peer] = await Promise.all([freePort(), freePort()]);
    const etcdUrl = `http://127.0.0.1:${client}`;
    const peerUrl = `http://127.0.0.1:${peer}`;
    processes.start('etcd', '/usr/bin/etcd', [
      ...['--data-dir', path.join(root, 'etcd'), '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl],
      ...['--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl],
      ...['--initial-cluster', `default=${peerUrl}`, '--log-level', 'error'],
    ]);
    etcdConfig = { endpoints: [etcdUrl], prefix: `/strata-bench-${name}` };
  }
  const base = {
    dataRoot: root,
    log: { level: 'warn' },
    ops: { enable: false },
    ...(etcdConfig ? { etcd: etcdConfig } : {}),
    auth: { jwt: { signingKey: randomBytes(32).toString('hex') } },
    database: { enable: true, endpoint: '127.0.0.1:0' },
    gateway: { enable: true, host: '127.0.0.1', port: 0 },
    setupService: SETUP,
  };
  const config = loadConfigObject(base, {});
  const log = createLogger(name, { level: 'warn' });
  const coordinator = await createCoordinator(config, log);
  // Every role of the in-process cluster shares one identity (mutual TLS, as in a deployment).
  const identity = loadInternalIdentity(config.internalTls, ROLE_NAMES);
  const channels = new ChannelPool(identity);
  const ctx = (cfg) => ({ config: cfg, log, coordinator, channels, identity });
  const roles = [await startMaster(ctx(config))];
  const workers = [];
  for (let w = 0; w < workerCount; w++) {
    const cfg = loadConfigObject(
      {
        ...base,
        backend: {
          enable: true,
          endpoint: '127.0.0.1:0',
          // workerDataPaths: serve data directories loaded earlier (small-profile.mjs --data).
          dataPath: workerDataPaths?.[w] ?? path.join(root, `worker-${w}`),
          minimumFreeSpaceBytes: 0,
          // Workers sharing this machine split its cores (backend.cores), as pods with CPU limits would.
          cores: Math.max(1, Math.floor(availableParallelism() / workerCount)),
          ...(sealAgeSeconds !== undefined ? { sealAgeSeconds } : {}),
        },
      },
      {},
    );
    const worker = await startWorkerWith(ctx(cfg));
    workers.push(worker);
    roles.push(worker);
  }
  const gateway = await startGateway(ctx(config));
  roles.push(gateway);
  const client = await signedInClient(`http://127.0.0.1:${gateway.port}`);
  return {
    workers,
    workerDirs: workers.map((_, w) => workerDataPaths?.[w] ?? path.join(root, `worker-${w}`)),
    coordinator,
    channels,
    query: client.query,
    /** The gateway's HTTP address. */
    url: `http://127.0.0.1:${gateway.port}`,
    async stop() {
      for (const r of roles.reverse()) await r.stop();
      channels.close();
      await coordinator.close();
      await processes.stopAll();
    },
  };
}

/**
 * The deployed shape: etcd, the master, one process per worker over existing worker data
 * directories (loaded by an in-process cluster that has been stopped), and the gateway, each a
 * `strata start` process. Workers split the machine's cores (backend.cores) as in startCluster.
 */
export async function startProcessCluster(name, workerDirs) {
  const root = path.join(DATA, name);
  mkdirSync(root, { recursive: true });
  const processes = new BenchProcesses();
  const start = (role, command, argv) => processes.start(role, command, argv, { cwd: ROOT });
  const stop = () => processes.stopAll();
  try {
    const [etcdClient, etcdPeer, masterPort, httpPort, ...workerPorts] = await Promise.all(
      [0, 1, 2, 3, ...workerDirs].map(freePort),
    );
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    const peerUrl = `http://127.0.0.1:${etcdPeer}`;
    start('etcd', '/usr/bin/etcd', [
      ...['--data-dir', path.join(root, 'etcd'), '--listen-client-urls', etcdUrl, '--advertise-client-urls', etcdUrl],
      ...['--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl],
      ...['--initial-cluster', `default=${peerUrl}`, '--log-level', 'error'],
    ]);
    const base = {
      dataRoot: root,
      log: { level: 'warn' },
      ops: { enable: false },
      etcd: { endpoints: [etcdUrl], prefix: `/strata-bench-${name}` },
      auth: { jwt: { signingKey: randomBytes(32).toString('hex') } },
    };
    const configs = [
      ['master', { ...base, database: { enable: true, endpoint: `127.0.0.1:${masterPort}` }, setupService: SETUP }],
      ...workerDirs.map((dir, w) => [
        `worker-${w}`,
        {
          ...base,
          backend: {
            enable: true,
            endpoint: `127.0.0.1:${workerPorts[w]}`,
            dataPath: dir,
            minimumFreeSpaceBytes: 0,
            cores: Math.max(1, Math.floor(availableParallelism() / workerDirs.length)),
          },
        },
      ]),
      ['gateway', { ...base, gateway: { enable: true, host: '127.0.0.1', port: httpPort } }],
    ];
    for (const [role, config] of configs) {
      const file = path.join(root, `${role}.json`);
      writeFileSync(file, JSON.stringify(config));
      start(role, process.execPath, [path.join(ROOT, 'deploy', 'bin', 'strata.js'), 'start', '--config', file]);
    }
    const client = await signedInClient(`http://127.0.0.1:${httpPort}`);
    const pids = Object.fromEntries(processes.children.map((c, i) => [['etcd', ...configs.map(([r]) => r)][i], c.pid]));
    return { query: client.query, stop, pids };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Signs the bench user in (retrying while the cluster starts) and answers a query client. */
async function signedInClient(baseUrl, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let token;
  while (!token) {
    try {
      const res = await fetch(`${baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: USER.username, password: USER.password }),
      });
      if (res.ok) token = (await res.json()).token;
    } catch {
      // not listening yet
    }
    if (!token) {
      if (Date.now() > deadline) throw new Error('could not sign in');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return {
    /** Runs a query through the HTTP endpoint; the number of result rows. */
    async query(kql) {
      // A lean keep-alive client (node:http), as the ingest bench uses: the client shares this
      // process and its cores with the service, and undici's fetch added ~1 ms per request that
      // is the client's cost, not the service's.
      const body = JSON.stringify({ query: kql });
      const { status, text } = await new Promise((resolve, reject) => {
        const req = http.request(
          `${baseUrl}/search/${ACCOUNT}/kusto`,
          {
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${token}`,
              'content-length': Buffer.byteLength(body),
            },
          },
          (res) => {
            const chunks = [];
            res.on('data', (c) => chunks.push(c));
            res.on('end', () => resolve({ status: res.statusCode, text: Buffer.concat(chunks).toString('utf8') }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
      const answer = JSON.parse(text);
      if (status !== 200) throw new Error(`${status} ${text}`);
      return answer.results;
    },
  };
}

// ---------------------------------------------------------------- queries

// The same window as the service's ago(): measured from the moment the SQL is written, not from
// the load (the data ends at NOW; a cut from NOW would cover more rows than ago() minutes later).
const cut = (ms) => `make_timestamp(${(Date.now() - ms) * 1000}::BIGINT)`;
// The same cut in ClickHouse SQL (the peer's table has timestamp DateTime64(6, 'UTC')).
const chCut = (ms) => `fromUnixTimestamp64Micro(toInt64(${(Date.now() - ms) * 1000}), 'UTC')`;
// `ch` is the statement a ClickHouse user writes for the query (bench/peers: ClickHouse on the same rows).
export const QUERIES = [
  {
    name: 'count, last hour',
    kql: `${SCHEMA} | where timestamp > ago(1h) | count`,
    sql: (rel) => `SELECT count(*) FROM ${rel} WHERE "timestamp" > ${cut(3_600_000)}`,
    ch: (rel) => `SELECT count() FROM ${rel} WHERE timestamp > ${chCut(3_600_000)}`,
  },
  {
    name: 'count, last day',
    kql: `${SCHEMA} | where timestamp > ago(1d) | count`,
    sql: (rel) => `SELECT count(*) FROM ${rel} WHERE "timestamp" > ${cut(86_400_000)}`,
    ch: (rel) => `SELECT count() FROM ${rel} WHERE timestamp > ${chCut(86_400_000)}`,
  },
  {
    name: 'count(), avg by 5m bin and host, last day',
    kql: `${SCHEMA} | where timestamp > ago(1d) | summarize count(), avg(latencyMs) by bin(timestamp, 5m), host`,
    sql: (rel) =>
      `SELECT time_bucket(INTERVAL 5 MINUTE, "timestamp", TIMESTAMP '1970-01-01') AS t, host, count(*), avg("latencyMs") FROM ${rel} WHERE "timestamp" > ${cut(86_400_000)} GROUP BY ALL`,
    ch: (rel) =>
      `SELECT toStartOfInterval(timestamp, INTERVAL 5 MINUTE) AS b, host, count(), avg(latencyMs) FROM ${rel} WHERE timestamp > ${chCut(86_400_000)} GROUP BY b, host`,
  },
  {
    name: 'count by 1h bin and level, 7 days',
    kql: `${SCHEMA} | summarize count() by bin(timestamp, 1h), level`,
    sql: (rel) =>
      `SELECT time_bucket(INTERVAL 1 HOUR, "timestamp", TIMESTAMP '1970-01-01') AS t, level, count(*) FROM ${rel} GROUP BY ALL`,
    ch: (rel) => `SELECT toStartOfInterval(timestamp, INTERVAL 1 HOUR) AS b, level, count() FROM ${rel} GROUP BY b, level`,
  },
  {
    name: 'top 10 by latency, 7 days',
    kql: `${SCHEMA} | top 10 by latencyMs`,
    sql: (rel) => `SELECT * FROM ${rel} ORDER BY "latencyMs" DESC NULLS LAST LIMIT 10`,
    ch: (rel) => `SELECT * FROM ${rel} ORDER BY latencyMs DESC LIMIT 10`,
  },
  {
    name: 'string filter (has "timeout"), 7 days',
    kql: `${SCHEMA} | where message has "timeout" | count`,
    sql: (rel) =>
      `SELECT count(*) FROM ${rel} WHERE regexp_matches("message", '(?i)(?:^|[^\\p{L}\\p{N}])timeout(?:[^\\p{L}\\p{N}]|$)')`,
    ch: (rel) => `SELECT count() FROM ${rel} WHERE hasTokenCaseInsensitive(message, 'timeout')`,
  },
  // Needle-in-haystack searches (decision 0026: the term index leaves out segments without the
  // term). "2179ms" is in one row of the first 1 M (one segment at every size); "deadlock" in none.
  {
    name: 'string filter (has "2179ms", one segment), 7 days',
    kql: `${SCHEMA} | where message has "2179ms" | count`,
    sql: (rel) =>
      `SELECT count(*) FROM ${rel} WHERE regexp_matches("message", '(?i)(?:^|[^\\p{L}\\p{N}])2179ms(?:[^\\p{L}\\p{N}]|$)')`,
    ch: (rel) => `SELECT count() FROM ${rel} WHERE hasTokenCaseInsensitive(message, '2179ms')`,
  },
  {
    name: 'string filter (has "deadlock", no row), 7 days',
    kql: `${SCHEMA} | where message has "deadlock" | count`,
    sql: (rel) =>
      `SELECT count(*) FROM ${rel} WHERE regexp_matches("message", '(?i)(?:^|[^\\p{L}\\p{N}])deadlock(?:[^\\p{L}\\p{N}]|$)')`,
    ch: (rel) => `SELECT count() FROM ${rel} WHERE hasTokenCaseInsensitive(message, 'deadlock')`,
  },
  {
    name: 'string filter (contains "db-3") + take 100',
    kql: `${SCHEMA} | where message contains "db-3" | take 100`,
    sql: (rel) => `SELECT * FROM ${rel} WHERE contains(lower("message"), 'db-3') LIMIT 100`,
    ch: (rel) => `SELECT * FROM ${rel} WHERE positionCaseInsensitive(message, 'db-3') > 0 LIMIT 100`,
  },
  {
    name: 'count, 7 days',
    kql: `${SCHEMA} | count`,
    sql: (rel) => `SELECT count(*) FROM ${rel}`,
    ch: (rel) => `SELECT count() FROM ${rel}`,
  },
];

export const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Times several ways of running the same query, interleaved (one run of each in turn, after a
 * warm-up of each), so a change in the machine's load during the bench (2 shared cores) weighs on
 * all of them alike. Medians.
 */
export async function timeEach(fns, RUNS) {
  for (const fn of fns) await fn(); // warm-up
  const samples = fns.map(() => []);
  for (let i = 0; i < RUNS; i++) {
    for (const [k, fn] of fns.entries()) {
      const t = performance.now();
      await fn();
      samples[k].push(performance.now() - t);
    }
  }
  return samples.map(median);
}

/**
 * Hand-written SQL over all the rows, the way someone with the data at hand runs it: the
 * relation (a view over the hot table and the Parquet segments) is opened once, outside the
 * timing, and only the statement (with reading its rows) is timed. Opening a consistent snapshot
 * per query is the service's own cost and counts against it. `also` are timed interleaved with it.
 */
export async function directAnd(storage, sqlOf, also, runs) {
  const scan = await storage.openScan(ACCOUNT, SCHEMA);
  try {
    const text = sqlOf(scan.relation);
    return await timeEach(
      [
        async () => {
          const reader = await scan.connection.runAndReadAll(text);
          reader.getRows();
        },
        ...also,
      ],
      runs,
    );
  } finally {
    await scan.release();
  }
}

/**
 * The hand-written SQL run on several workers' storage at once (each over its own rows, opened
 * once), as a function to time: what the DuckDB instances alone cost when they share the
 * machine, before any of the service's work (no merge: the answers are not combined).
 */
export async function directEach(storages, sqlOf) {
  const scans = await Promise.all(storages.map((s) => s.openScan(ACCOUNT, SCHEMA)));
  return {
    run: () =>
      Promise.all(
        scans.map(async (scan) => {
          (await scan.connection.runAndReadAll(sqlOf(scan.relation))).getRows();
        }),
      ),
    release: () => Promise.all(scans.map((scan) => scan.release())),
  };
}
