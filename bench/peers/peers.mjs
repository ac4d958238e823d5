// The peer engines the benches compare Strata against, on the very same rows: ClickHouse embedded
// (chDB, a MergeTree table with typed columns ordered by timestamp, the layout a ClickHouse log
// store such as SigNoz or ClickStack uses) and DuckDB on a native table (sorted by timestamp) as a
// second reference. chDB (~550 MB) is installed into bench/peers/node_modules on first use: it is
// never a dependency of the product or its tests.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/** The chDB module, installed (chdb pinned to 3.4.0 in bench/peers/package.json) when missing. */
export function loadChdb() {
  if (!existsSync(path.join(HERE, 'node_modules', 'chdb', 'package.json'))) {
    console.log('installing chDB for the benches into bench/peers/node_modules (~550 MB, once)…');
    execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'inherit' });
  }
  return createRequire(path.join(HERE, 'package.json'))('chdb');
}

/**
 * A worker's sealed segments under `dir` as Parquet files, sorted, for the peers to load: Parquet
 * segments as they are, DuckDB segment files (decision 0025: one table, `rows`) exported beside
 * themselves first (`<file>.parquet`). `dir` must be a copy: the export writes into it.
 */
export async function parquetFiles(dir) {
  const out = [];
  const duck = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.parquet')) out.push(p);
      else if (e.name.endsWith('.duckdb') && path.basename(path.dirname(path.dirname(p))) === 'segments') duck.push(p);
    }
  };
  walk(dir);
  if (duck.length > 0) {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    for (const [i, f] of duck.entries()) {
      await connection.run(`ATTACH '${f.replaceAll("'", "''")}' AS s${i} (READ_ONLY)`);
      await connection.run(`COPY s${i}."rows" TO '${`${f}.parquet`.replaceAll("'", "''")}' (FORMAT parquet)`);
      await connection.run(`DETACH s${i}`);
      out.push(`${f}.parquet`);
    }
    connection.closeSync();
    instance.closeSync();
  }
  return out.sort();
}

const sqlList = (files) => `[${files.map((f) => `'${f.replaceAll("'", "''")}'`).join(', ')}]`;

/** ClickHouse column type of a Strata column type (typed, non-nullable: what a ClickHouse log table declares). */
const CH_TYPE = { String: 'String', Int64: 'Int64', Real: 'Float64', Bool: 'Bool', DateTime: "DateTime64(6, 'UTC')" };

/**
 * A chDB session over a MergeTree table `t` loaded from the given Parquet files.
 * `columns` are the data columns (COLUMNS of the bench); the stamped timestamp column comes first.
 */
export async function openClickHouse(workDir, files, columns) {
  const { Session } = loadChdb();
  mkdirSync(workDir, { recursive: true });
  const session = new Session(workDir);
  const cols = [`"timestamp" DateTime64(6, 'UTC')`, ...columns.map((c) => `"${c.name}" ${CH_TYPE[c.type]}`)];
  session.query(`CREATE TABLE t (${cols.join(', ')}) ENGINE = MergeTree ORDER BY "timestamp"`);
  const names = ['timestamp', ...columns.map((c) => c.name)].map((n) => `"${n}"`).join(', ');
  // One file at a time keeps the insert's memory to one segment's rows.
  for (const f of files) session.query(`INSERT INTO t SELECT ${names} FROM file('${f}', Parquet)`);
  session.query('OPTIMIZE TABLE t FINAL');
  return {
    session,
    /** Runs a statement and parses its JSON answer, as a client of the engine would; the rows. */
    async run(sql) {
      const res = await session.queryAsync(sql, { format: 'JSONCompact' });
      return JSON.parse(res.text()).data;
    },
    /** ClickHouse's own tracked memory (MemoryTracking), in MB. */
    memoryMB() {
      const v = session.query(`SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'`, 'TSV');
      return Number(v.trim()) / 1024 / 1024;
    },
    /** Rows and bytes on disk of the table (its parts). */
    sizeOnDisk() {
      const v = session.query(
        `SELECT sum(rows), sum(bytes_on_disk), count() FROM system.parts WHERE table = 't' AND active`,
        'TSV',
      );
      const [rows, bytes, parts] = v.trim().split('\t').map(Number);
      return { rows, bytes, parts };
    },
    close() {
      session.cleanup?.();
    },
  };
}

/** DuckDB on a native table `t` (the same rows from the same Parquet files, sorted by timestamp). */
export async function openDuckNative(workDir, files, threads) {
  mkdirSync(workDir, { recursive: true });
  const instance = await DuckDBInstance.create(path.join(workDir, 'native.duckdb'), { threads: String(threads) });
  const connection = await instance.connect();
  await connection.run(`CREATE TABLE t AS SELECT * FROM read_parquet(${sqlList(files)}) ORDER BY "timestamp"`);
  await connection.run('CHECKPOINT');
  return {
    async run(sql) {
      return (await connection.runAndReadAll(sql)).getRows();
    },
    close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Resident memory of a process (VmRSS and its peak VmHWM) in MB, from /proc. */
export function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  return { rssMB: kb('VmRSS') / 1024, peakMB: kb('VmHWM') / 1024 };
}
