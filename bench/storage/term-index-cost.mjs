// What the term index of decision 0026 costs a seal: bench/query's rows (1 M by default) are
// loaded and sealed into one worker, then for each segment file, interleaved, the index build
// alone (buildTermIndex: the term keys of every String column, the Bloom filters) and the
// segment write it adds to (the same rows sorted into a new segment file of the segment's format,
// as sealing does: writeSegmentFile), and the filters' size against the file's.
//
//   npm run build && node bench/storage/term-index-cost.mjs [--rows 1000000] [--runs 3]
//
// Data goes to .bench-data/ and is removed at the end.
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { attachSegmentFiles, segmentSources, writeSegmentFile } from '../../worker/dist/src/storage/segment-format.js';
import { buildTermIndex } from '../../worker/dist/src/storage/term-index.js';
import { ACCOUNT, agent, DATA, loadRows, startCluster } from '../query/bench-cluster.mjs';

const { values: args } = parseArgs({
  options: { rows: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '3' } },
});
const ROWS = Number(args.rows);
const RUNS = Number(args.runs);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

// Rows loaded and sealed by a worker, which is then stopped: the files are measured on a DuckDB
// instance of this process (the worker's own scan connections are confined, decision 0008, and
// may not write files).
const one = await startCluster('term-cost', 1);
let segments;
let dir;
try {
  const storage = one.workers[0].storage;
  await loadRows(storage, ROWS, 0, 1);
  segments = await storage.listSegments(ACCOUNT);
  dir = path.join(one.workerDirs[0], 'accounts', ACCOUNT, 'segments');
} finally {
  agent.destroy();
  await one.stop();
}
const db = await DuckDBInstance.create(':memory:', { threads: '1' });
const conn = await db.connect();
try {
  for (const s of segments) {
    const file = path.join(dir, s.fileName);
    await attachSegmentFiles(conn, [file]);
    const build = [];
    const copy = [];
    let index;
    for (let i = 0; i < RUNS; i++) {
      let t = performance.now();
      index = await buildTermIndex(conn, file, s.format, s.columns);
      build.push(performance.now() - t);
      // The copy in a directory of its own: the same file name, never the segment's own path.
      const copyDir = path.join(dir, '..', `bench-copy-${i}`);
      mkdirSync(copyDir, { recursive: true });
      const [source] = segmentSources([file], s.format);
      t = performance.now();
      await writeSegmentFile(
        conn,
        `SELECT * FROM ${source} ORDER BY "timestamp"`,
        path.join(copyDir, path.basename(file)),
        s.format,
      );
      copy.push(performance.now() - t);
      rmSync(copyDir, { recursive: true, force: true });
    }
    const bytes = [...index.values()].reduce((n, f) => n + f.bits.length, 0);
    const keys = [...index.values()].reduce((n, f) => n + f.keyCount, 0);
    console.log(
      `segment of ${s.rowCount.toLocaleString('en')} rows (${(s.byteSize / 1e6).toFixed(1)} MB): index build ${median(build).toFixed(0)} ms, segment write ${median(copy).toFixed(0)} ms (build/write ${(median(build) / median(copy)).toFixed(2)}); ${index.size} filters, ${keys.toLocaleString('en')} keys, ${(bytes / 1024).toFixed(1)} KB (${((100 * bytes) / s.byteSize).toFixed(3)} % of the file)`,
    );
    for (const [column, f] of index)
      console.log(`  ${column}: ${f.keyCount.toLocaleString('en')} keys, ${(f.bits.length / 1024).toFixed(1)} KB`);
  }
} finally {
  conn.closeSync();
  db.closeSync();
  rmSync(DATA, { recursive: true, force: true });
}
