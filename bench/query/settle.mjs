// Waiting for compaction to settle before a query bench measures (the "settled" layout).
//
// A production worker compacts: the master's scheduler merges small segments up to the account's
// MaxFileSize (1 GB) every 5 minutes (master/src/compaction/compaction-scheduler.ts). Rows the
// bench has just loaded sit in fresh ~500,000-row segments that the cluster will merge a few
// minutes later, while the queries run (taking CPU from them) or after (at 30 M rows the 60
// segments become one ~1 GB segment). The steady state a deployment lives in is the compacted
// layout, so the bench measures it by default: it runs the same scheduler's cycle (same planner,
// same worker calls) until a cycle plans nothing and the segment list stays the same, bounded by
// a timeout.
import { createLogger } from '@strata/common';
import { CompactionScheduler } from '@strata/master';
import { ACCOUNT } from './bench-cluster.mjs';

/**
 * Runs compaction cycles on every worker of an in-process cluster (startCluster) until the layout
 * is settled: no job planned, no job failed and the same segments listed before and after the
 * cycle. Throws after `timeoutMs` with what was still planned. Answers the number of cycles run.
 */
export async function settleCompaction(cluster, { timeoutMs }) {
  const log = createLogger('bench-settle', { level: 'warn' });
  const storages = cluster.workers.map((w) => w.storage);
  const scheduler = new CompactionScheduler({
    listWorkers: () => cluster.coordinator.listWorkers(),
    channels: cluster.channels,
    // The term the workers last accepted: a job of the leader's own scheduler running meanwhile
    // is not refused, nor is this one (the same leader's term, or 0 before its first job).
    term: () => Math.max(0, ...storages.map((s) => s.compactionTerm)),
    // A merge of 1 GB under a shared machine's load: the whole settling is bounded below.
    jobTimeoutMs: timeoutMs,
    log,
  });
  const ids = async () =>
    (await Promise.all(storages.map((s) => s.listSegments(ACCOUNT))))
      .flat()
      .map((s) => s.segmentId)
      .sort()
      .join(',');
  const deadline = Date.now() + timeoutMs;
  let last;
  for (let cycle = 1; ; cycle++) {
    if (Date.now() > deadline)
      throw new Error(
        `compaction did not settle within ${Math.round(timeoutMs / 1000)} s (last cycle: ${JSON.stringify(last)}); raise --settle-timeout or measure --layout fresh`,
      );
    const before = await ids();
    last = await Promise.race([
      scheduler.runOnce(),
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`compaction did not settle within ${Math.round(timeoutMs / 1000)} s (a job still running)`)),
          Math.max(0, deadline - Date.now()),
        ).unref(),
      ),
    ]);
    if (last.planned === 0 && last.failed === 0 && (await ids()) === before) return cycle;
  }
}

/** The segments of a worker's storage as one line per segment: rows, bytes, format, and a total. */
export async function describeLayout(storage) {
  const segments = await storage.listSegments(ACCOUNT);
  const rows = segments.reduce((n, s) => n + s.rowCount, 0);
  const bytes = segments.reduce((n, s) => n + s.byteSize, 0);
  const mb = (b) => `${(b / 1e6).toFixed(1)} MB`;
  const lines = [`${segments.length} segment(s), ${rows.toLocaleString('en')} rows, ${mb(bytes)}`];
  for (const s of segments)
    lines.push(
      `  ${s.segmentId.slice(0, 8)} ${s.format.padEnd(7)} ${s.rowCount.toLocaleString('en').padStart(11)} rows ${mb(s.byteSize).padStart(10)}`,
    );
  return lines.join('\n');
}
